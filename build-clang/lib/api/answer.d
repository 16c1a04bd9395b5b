build-clang/lib/api/answer.o: lib/api/answer.c lib/core/buf.h \
  lib/core/err.h lib/core/metrics.h lib/core/out.h lib/records/json.h \
  lib/api/answer.h lib/api/class.h lib/records/request.h

lib/core/buf.h:

lib/core/err.h:

lib/core/metrics.h:

lib/core/out.h:

lib/records/json.h:

lib/api/answer.h:

lib/api/class.h:

lib/records/request.h:
