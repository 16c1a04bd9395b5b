build-clang/lib/pg/lease.o: lib/pg/lease.c lib/core/err.h lib/core/sig.h \
  lib/api/bucket.h lib/api/share.h lib/pg/lease.h lib/pg/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h lib/core/buf.h

lib/core/err.h:

lib/core/sig.h:

lib/api/bucket.h:

lib/api/share.h:

lib/pg/lease.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

lib/core/buf.h:
