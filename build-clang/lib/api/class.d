build-clang/lib/api/class.o: lib/api/class.c lib/core/err.h \
  lib/api/class.h

lib/core/err.h:

lib/api/class.h:
