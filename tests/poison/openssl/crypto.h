#error "lib/records must not use openssl/crypto.h"
