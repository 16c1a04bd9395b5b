build-clang/lib/pg/load.o: lib/pg/load.c lib/core/buf.h lib/core/err.h \
  lib/core/lines.h lib/core/sig.h lib/records/import.h \
  lib/records/input.h lib/records/json.h lib/records/phone.h \
  lib/records/stamp.h lib/records/numplan.h lib/pg/load.h lib/pg/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h

lib/core/buf.h:

lib/core/err.h:

lib/core/lines.h:

lib/core/sig.h:

lib/records/import.h:

lib/records/input.h:

lib/records/json.h:

lib/records/phone.h:

lib/records/stamp.h:

lib/records/numplan.h:

lib/pg/load.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:
