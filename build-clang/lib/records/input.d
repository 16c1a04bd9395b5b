build-clang/lib/records/input.o: lib/records/input.c lib/core/err.h \
  lib/core/lines.h lib/core/sig.h lib/records/input.h lib/records/json.h

lib/core/err.h:

lib/core/lines.h:

lib/core/sig.h:

lib/records/input.h:

lib/records/json.h:
