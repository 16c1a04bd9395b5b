build-clang/lib/records/import.o: lib/records/import.c lib/core/buf.h \
  lib/core/err.h lib/core/lines.h lib/records/import.h \
  lib/records/input.h lib/records/json.h lib/records/phone.h \
  lib/records/stamp.h lib/records/numplan.h

lib/core/buf.h:

lib/core/err.h:

lib/core/lines.h:

lib/records/import.h:

lib/records/input.h:

lib/records/json.h:

lib/records/phone.h:

lib/records/stamp.h:

lib/records/numplan.h:
