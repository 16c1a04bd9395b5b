/*
 * wa_secret.h: settings that must stay out of argv, read from NAME or
 * from the file named by NAME_FILE.
 */
#ifndef WA_SECRET_H
#define WA_SECRET_H

char *wa_secret(const char *);

#endif
