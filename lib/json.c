/*
 * json.c: reading fields of a parsed record by dotted path, and writing
 * output lines. A line goes out with its '\n' in one write(2), so readers
 * never see half a record and a pipe never carries a split one.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "wa.h"

/* The member at a dotted path such as "result.error.code", or NULL. */
struct json_object *
wa_json_get(struct json_object *o, const char *path)
{
	char key[128];
	const char *dot;
	size_t n;

	while (o != NULL && *path) {
		if (!json_object_is_type(o, json_type_object))
			return NULL;
		dot = strchr(path, '.');
		n = dot ? (size_t)(dot - path) : strlen(path);
		if (n >= sizeof key)
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		if (!json_object_object_get_ex(o, key, &o))
			return NULL;
		path += n + (dot != NULL);
	}
	return o;
}

/* The string at path, or NULL when absent or not a string. */
const char *
wa_json_str(struct json_object *o, const char *path)
{
	o = wa_json_get(o, path);
	if (!json_object_is_type(o, json_type_string))
		return NULL;
	return json_object_get_string(o);
}

/*
 * The integer at path in *v: returns 1, or 0 when absent or null, or -1
 * when it is not an integer (a string of digits counts: some senders quote
 * their numbers).
 */
int
wa_json_int(struct json_object *o, const char *path, int64_t *v)
{
	const char *s;
	char *end;

	o = wa_json_get(o, path);
	if (o == NULL)
		return 0;
	switch (json_object_get_type(o)) {
	case json_type_int:
		*v = json_object_get_int64(o);
		return 1;
	case json_type_string:
		s = json_object_get_string(o);
		errno = 0;
		*v = strtoll(s, &end, 10);
		return *s && !*end && !errno ? 1 : -1;
	default:
		return -1;
	}
}

/* Compact JSON text of o, valid until o changes or is freed. */
const char *
wa_json_text(struct json_object *o)
{
	return json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static struct wa_buf out;

static void
writeall(const struct iovec *iov, int n)
{
	struct iovec v[2];
	ssize_t w;

	memcpy(v, iov, n * sizeof *v);
	while (n > 0) {
		w = writev(STDOUT_FILENO, v, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			wa_die(EX_IOERR, "write to stdout:");
		while (n > 0 && (size_t)w >= v[0].iov_len) {
			w -= v[0].iov_len;
			v[0] = v[1];
			n--;
		}
		if (n > 0) {
			v[0].iov_base = (char *)v[0].iov_base + w;
			v[0].iov_len -= w;
		}
	}
}

/* Writes out the lines buffered by wa_out_add. */
void
wa_out_flush(void)
{
	struct iovec v = { out.s, out.len };

	if (out.len > 0)
		writeall(&v, 1);
	out.len = 0;
}

/* Buffers one line; wa_out_flush writes them all at once. */
void
wa_out_add(const char *s, size_t n)
{
	wa_buf_add(&out, s, n);
	wa_buf_add(&out, "\n", 1);
}

/* Writes one line now, '\n' added, in a single write. */
void
wa_out(const char *s, size_t n)
{
	struct iovec v[2] = { { (char *)s, n }, { "\n", 1 } };

	wa_out_flush();
	writeall(v, 2);
}

void
wa_out_json(struct json_object *o)
{
	size_t n;
	const char *s = json_object_to_json_string_length(o,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);

	wa_out(s, n);
}
