build-clang/lib/api/guard.o: lib/api/guard.c lib/core/err.h \
  lib/core/metrics.h lib/core/sig.h lib/api/bucket.h lib/api/class.h \
  lib/api/guard.h lib/api/answer.h lib/records/request.h lib/core/buf.h

lib/core/err.h:

lib/core/metrics.h:

lib/core/sig.h:

lib/api/bucket.h:

lib/api/class.h:

lib/api/guard.h:

lib/api/answer.h:

lib/records/request.h:

lib/core/buf.h:
