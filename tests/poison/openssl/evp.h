#error "lib/records must not use openssl/evp.h"
