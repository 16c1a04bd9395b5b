build-clang/lib/pg/figures.o: lib/pg/figures.c lib/core/err.h \
  lib/records/html.h lib/records/json.h lib/pg/figures.h lib/pg/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h lib/core/buf.h lib/pg/report.h

lib/core/err.h:

lib/records/html.h:

lib/records/json.h:

lib/pg/figures.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

lib/core/buf.h:

lib/pg/report.h:
