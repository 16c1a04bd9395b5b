build-clang/lib/pg/claim.o: lib/pg/claim.c lib/core/buf.h lib/pg/claim.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h

lib/core/buf.h:

lib/pg/claim.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:
