#error "lib/records must not use microhttpd.h"
