build-clang/lib/core/buf.o: lib/core/buf.c lib/core/buf.h lib/core/err.h

lib/core/buf.h:

lib/core/err.h:
