build-clang/lib/records/json.o: lib/records/json.c lib/core/buf.h \
  lib/core/err.h lib/core/out.h lib/records/json.h

lib/core/buf.h:

lib/core/err.h:

lib/core/out.h:

lib/records/json.h:
