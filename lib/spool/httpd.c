/*
 * httpd.c: starts a libmicrohttpd daemon on "ADDR:PORT" ("[ADDR6]:PORT"
 * for IPv6; port 0 picks a free one) and writes the port it got to a file,
 * so tests and scripts can run several servers side by side; then serves
 * until SIGTERM or SIGINT.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/err.h"
#include "core/sig.h"
#include "spool/httpd.h"

static int
parse(const char *listen, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char host[256];
	const char *colon = strrchr(listen, ':');
	size_t n;
	long port;
	char *end;

	if (colon == NULL || (n = colon - listen) >= sizeof host)
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || port < 0 || port > 65535)
		return -1;
	memcpy(host, listen, n);
	host[n] = '\0';
	memset(ss, 0, sizeof *ss);
	if (n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		host[n - 1] = '\0';
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		return inet_pton(AF_INET6, host + 1, &in6->sin6_addr) == 1 ?
		    0 : -1;
	}
	in4->sin_family = AF_INET;
	in4->sin_port = htons(port);
	if (n == 0 || strcmp(host, "*") == 0)
		return 0;
	return inet_pton(AF_INET, host, &in4->sin_addr) == 1 ? 0 : -1;
}

static void
write_port(const char *path, unsigned port)
{
	struct wa_buf tmp = { 0 };
	FILE *f;

	wa_buf_printf(&tmp, "%s.tmp", path);
	if ((f = fopen(tmp.s, "w")) == NULL)
		wa_die(EX_CANTCREAT, "open %s:", tmp.s);
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0 || rename(tmp.s, path) != 0)
		wa_die(EX_IOERR, "write %s:", path);
	wa_buf_free(&tmp);
}

/*
 * Starts serving fn on listen with MHD flags and extra options (may be
 * NULL), and writes the bound port to port_file when it is not NULL.
 * Exits 64 on a bad address, 69 when the daemon cannot start.
 */
struct MHD_Daemon *
wa_httpd_start(const char *listen, const char *port_file, unsigned int flags,
    MHD_AccessHandlerCallback fn, void *cls, const struct MHD_OptionItem *opts)
{
	static const struct MHD_OptionItem none[] = {
		{ MHD_OPTION_END, 0, NULL }
	};
	struct sockaddr_storage ss;
	const union MHD_DaemonInfo *info;
	struct MHD_Daemon *d;

	if (parse(listen, &ss) < 0)
		wa_die(EX_USAGE, "'%s' is not ADDR:PORT", listen);
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon(flags, 0, NULL, NULL, fn, cls,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_ARRAY, opts ? opts : none, MHD_OPTION_END);
	if (d == NULL)
		wa_die(EX_UNAVAILABLE, "cannot listen on %s", listen);
	info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	if (port_file != NULL && info != NULL)
		write_port(port_file, info->port);
	return d;
}

/*
 * Serves until SIGTERM or SIGINT; then calls drain(arg) when it is not
 * NULL, which must resume every suspended connection (MHD cannot stop
 * with one, see wa_later_drain), and stops the daemon.
 */
void
wa_httpd_serve(struct MHD_Daemon *d, void (*drain)(void *), void *arg)
{
	while (!wa_stopping)
		wa_sleep_ms(1000);
	if (drain != NULL)
		drain(arg);
	MHD_stop_daemon(d);
}

/* Serves until SIGTERM or SIGINT, then stops the daemon. */
void
wa_httpd_run(struct MHD_Daemon *d)
{
	wa_httpd_serve(d, NULL, NULL);
}
