build-clang/lib/core/sig.o: lib/core/sig.c lib/core/sig.h

lib/core/sig.h:
