build-clang/lib/pg/export.o: lib/pg/export.c lib/core/buf.h \
  lib/core/err.h lib/pg/export.h lib/pg/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h

lib/core/buf.h:

lib/core/err.h:

lib/pg/export.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:
