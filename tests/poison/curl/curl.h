#error "lib/records must not use curl/curl.h"
