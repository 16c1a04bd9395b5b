build-clang/lib/records/status.o: lib/records/status.c lib/core/buf.h \
  lib/core/err.h lib/records/json.h lib/records/request.h \
  lib/records/status.h

lib/core/buf.h:

lib/core/err.h:

lib/records/json.h:

lib/records/request.h:

lib/records/status.h:
