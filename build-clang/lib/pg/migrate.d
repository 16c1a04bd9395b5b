build-clang/lib/pg/migrate.o: lib/pg/migrate.c lib/core/err.h \
  lib/pg/migrate.h /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h lib/pg/pg.h lib/core/buf.h

lib/core/err.h:

lib/pg/migrate.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

lib/pg/pg.h:

lib/core/buf.h:
