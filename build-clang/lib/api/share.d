build-clang/lib/api/share.o: lib/api/share.c lib/core/buf.h \
  lib/core/err.h lib/core/sig.h lib/records/request.h lib/api/bucket.h \
  lib/api/share.h

lib/core/buf.h:

lib/core/err.h:

lib/core/sig.h:

lib/records/request.h:

lib/api/bucket.h:

lib/api/share.h:
