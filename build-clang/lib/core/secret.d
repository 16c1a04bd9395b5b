build-clang/lib/core/secret.o: lib/core/secret.c lib/core/buf.h \
  lib/core/err.h lib/core/secret.h

lib/core/buf.h:

lib/core/err.h:

lib/core/secret.h:
