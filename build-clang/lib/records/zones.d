build-clang/lib/records/zones.o: lib/records/zones.c lib/core/err.h \
  lib/records/numplan.h

lib/core/err.h:

lib/records/numplan.h:
