/*
 * wa_secret.h: secrets from the environment, never from argv.
 */
#ifndef WA_SECRET_H
#define WA_SECRET_H

char *wa_secret(const char *);

#endif
