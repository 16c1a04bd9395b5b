/*
 * core/secret.h: secrets from the environment (NAME, or the file named by
 * NAME_FILE), never from argv; NAME is then wiped from the environment.
 */
#ifndef WA_CORE_SECRET_H
#define WA_CORE_SECRET_H

char *wa_secret(const char *name);

#endif
