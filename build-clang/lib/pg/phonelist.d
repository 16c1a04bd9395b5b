build-clang/lib/pg/phonelist.o: lib/pg/phonelist.c lib/core/err.h \
  lib/core/sig.h lib/records/import.h lib/core/buf.h lib/records/input.h \
  lib/core/lines.h lib/records/json.h lib/records/phone.h \
  lib/records/stamp.h lib/pg/phonelist.h lib/pg/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h

lib/core/err.h:

lib/core/sig.h:

lib/records/import.h:

lib/core/buf.h:

lib/records/input.h:

lib/core/lines.h:

lib/records/json.h:

lib/records/phone.h:

lib/records/stamp.h:

lib/pg/phonelist.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:
