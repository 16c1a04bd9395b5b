#error "lib/records must not use postgresql/libpq-fe.h"
