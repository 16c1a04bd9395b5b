build-clang/lib/api/bucket.o: lib/api/bucket.c lib/core/buf.h \
  lib/core/err.h lib/core/sig.h lib/records/request.h lib/api/bucket.h

lib/core/buf.h:

lib/core/err.h:

lib/core/sig.h:

lib/records/request.h:

lib/api/bucket.h:
