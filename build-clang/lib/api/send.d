build-clang/lib/api/send.o: lib/api/send.c lib/core/buf.h lib/core/err.h \
  lib/core/secret.h lib/api/class.h lib/api/send.h lib/api/answer.h \
  lib/records/request.h

lib/core/buf.h:

lib/core/err.h:

lib/core/secret.h:

lib/api/class.h:

lib/api/send.h:

lib/api/answer.h:

lib/records/request.h:
