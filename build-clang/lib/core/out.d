build-clang/lib/core/out.o: lib/core/out.c lib/core/buf.h lib/core/err.h \
  lib/core/out.h

lib/core/buf.h:

lib/core/err.h:

lib/core/out.h:
