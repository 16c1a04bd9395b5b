build-clang/lib/core/lines.o: lib/core/lines.c lib/core/err.h \
  lib/core/lines.h lib/core/sig.h

lib/core/err.h:

lib/core/lines.h:

lib/core/sig.h:
