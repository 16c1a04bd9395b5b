/*
 * records/template.h: a message template as the Graph API lists it
 * (GET /<WABA_ID>/message_templates: name, language, status, category,
 * parameter_format, components), the shape of the parameters a send
 * carries, and whether that shape fits the template. wa-campaign check
 * and wa-fake-api use the same rules.
 */
#ifndef WA_RECORDS_TEMPLATE_H
#define WA_RECORDS_TEMPLATE_H

#include <stddef.h>

#include <json-c/json.h>

#include "core/buf.h"

#define WA_TEMPLATE_BUTTONS 10	/* Meta's most buttons in a template */

struct wa_template {
	char		 name[513];	/* ^[a-z0-9_]+$, at most 512 */
	char		 language[16];	/* en_US */
	char		 status[32];	/* APPROVED, PAUSED, ... */
	char		 category[32];	/* MARKETING, UTILITY, ... or "" */
	char		 quality[16];	/* quality_score.score, or "" */
	char		 id[32];	/* the template's id, or "" */
	int		 named;		/* parameter_format NAMED */
	char		 header[16];	/* HEADER's format (TEXT, IMAGE,
					   VIDEO, DOCUMENT, LOCATION), or "" */
	int		 header_n;	/* placeholders in a TEXT header */
	int		 body_n;	/* distinct placeholders in BODY */
	struct wa_buf	 names;		/* NAMED: the body's, sorted, with
					   ',' between */
	unsigned	 urls;		/* bit i: URL button i has {{1}} */
	char		 other[24];	/* a component not checked, or "" */
};

/*
 * Reads template o (one item of the listing's "data"). Returns 0, or -1
 * with why (size bytes) when o is not a template as Meta writes one: no
 * name, language or status, components that are not an array of
 * objects. Free t's names with wa_template_free.
 */
int wa_template_read(struct json_object *o, struct wa_template *t,
    char *why, size_t size);
void wa_template_free(struct wa_template *t);

/*
 * The shape of the parameters a send carries, new (the caller's): p is
 * a recipient's template_params (an array of body parameters, or an
 * object with "components", or with "params" as an array or an object
 * of named ones), or a send's template object ("components"). The shape
 * is {"body": N, "names": [...], "header": [...], "buttons": [...]}:
 * how many body parameters; their parameter_names, sorted, when any has
 * one; the type of each header parameter, lower case, with "?" after a
 * medium that has no id or link; the indexes, as strings, of the URL
 * buttons given a parameter, sorted. sql/schema.sql's template_shape()
 * computes the same in Postgres: change both or neither.
 */
struct json_object *wa_template_shape(struct json_object *p);

/*
 * Whether parameters of shape fit t: NULL, or why not, in words (size
 * bytes of why).
 */
const char *wa_template_fit(const struct wa_template *t,
    struct json_object *shape, char *why, size_t size);

/* "{{1}} {{2}}" or "{{date}} {{name}}": t's body placeholders, in b. */
void wa_template_body(const struct wa_template *t, struct wa_buf *b);

#endif
