#error "lib/records must not use openssl/hmac.h"
