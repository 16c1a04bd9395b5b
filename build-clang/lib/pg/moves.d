build-clang/lib/pg/moves.o: lib/pg/moves.c lib/core/err.h lib/pg/moves.h \
  lib/pg/pg.h /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h lib/core/buf.h \
  lib/pg/setting.h

lib/core/err.h:

lib/pg/moves.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

lib/core/buf.h:

lib/pg/setting.h:
