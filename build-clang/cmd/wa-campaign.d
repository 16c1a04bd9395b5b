build-clang/cmd/wa-campaign.o: cmd/wa-campaign.c lib/core/err.h \
  lib/core/sig.h lib/records/import.h lib/core/buf.h lib/records/input.h \
  lib/core/lines.h lib/records/json.h lib/records/phone.h \
  lib/records/stamp.h lib/pg/load.h lib/pg/pg.h \
  /usr/include/postgresql/libpq-fe.h \
  /usr/include/postgresql/postgres_ext.h \
  /usr/include/postgresql/pg_config_ext.h lib/pg/migrate.h \
  lib/pg/moves.h lib/pg/setting.h lib/pg/export.h lib/pg/report.h \
  lib/pg/figures.h lib/pg/requeue.h lib/pg/rules.h lib/run/progress.h \
  lib/run/run.h

lib/core/err.h:

lib/core/sig.h:

lib/records/import.h:

lib/core/buf.h:

lib/records/input.h:

lib/core/lines.h:

lib/records/json.h:

lib/records/phone.h:

lib/records/stamp.h:

lib/pg/load.h:

lib/pg/pg.h:

/usr/include/postgresql/libpq-fe.h:

/usr/include/postgresql/postgres_ext.h:

/usr/include/postgresql/pg_config_ext.h:

lib/pg/migrate.h:

lib/pg/moves.h:

lib/pg/setting.h:

lib/pg/export.h:

lib/pg/report.h:

lib/pg/figures.h:

lib/pg/requeue.h:

lib/pg/rules.h:

lib/run/progress.h:

lib/run/run.h:
