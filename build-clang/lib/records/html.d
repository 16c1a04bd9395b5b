build-clang/lib/records/html.o: lib/records/html.c lib/core/err.h \
  lib/records/html.h lib/records/json.h

lib/core/err.h:

lib/records/html.h:

lib/records/json.h:
