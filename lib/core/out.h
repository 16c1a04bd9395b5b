/*
 * core/out.h: output lines on stdout, each with its '\n' in one write, so
 * that a reader never sees half a record. Exits 74 when stdout fails.
 */
#ifndef WA_CORE_OUT_H
#define WA_CORE_OUT_H

#include <stddef.h>

void wa_out(const char *s, size_t n);		/* now */
void wa_out_add(const char *s, size_t n);	/* at the next flush */
void wa_out_flush(void);
size_t wa_out_held(void);			/* bytes added, not yet out */

#endif
