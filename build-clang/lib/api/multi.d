build-clang/lib/api/multi.o: lib/api/multi.c lib/core/err.h \
  lib/core/sig.h lib/api/multi.h

lib/core/err.h:

lib/core/sig.h:

lib/api/multi.h:
