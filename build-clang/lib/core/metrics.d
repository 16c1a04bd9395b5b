build-clang/lib/core/metrics.o: lib/core/metrics.c lib/core/buf.h \
  lib/core/err.h lib/core/metrics.h lib/core/sig.h

lib/core/buf.h:

lib/core/err.h:

lib/core/metrics.h:

lib/core/sig.h:
