#error "lib/records must not use libpq-fe.h"
