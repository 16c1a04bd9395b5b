build-clang/lib/records/request.o: lib/records/request.c lib/core/buf.h \
  lib/records/json.h lib/records/phone.h lib/records/request.h

lib/core/buf.h:

lib/records/json.h:

lib/records/phone.h:

lib/records/request.h:
