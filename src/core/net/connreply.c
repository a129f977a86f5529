/* connreply: the client side of one HTTP CONNECT (ssh's ProxyCommand inside a jail). Pure. */
#include "core/net/connreply.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/xalloc.h"

static bool host_ok(const char *h, size_t n)
{
	if (n == 0 || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)h[i];
		if (!isalnum(c) && c != '-' && c != '.' && c != '_' && c != ':')
			return false;
	}
	return true;
}

char *connect_request(const char *host, uint16_t port, size_t *len)
{
	size_t n = strlen(host);
	bool bracketed = n >= 2 && host[0] == '[' && host[n - 1] == ']';
	const char *h = bracketed ? host + 1 : host;
	size_t hn = bracketed ? n - 2 : n;
	if (port == 0 || !host_ok(h, hn) || (bracketed && !memchr(h, ':', hn)))
		return NULL;
	bool v6 = memchr(h, ':', hn) != NULL;
	char *req = xasprintf("CONNECT %s%.*s%s:%u HTTP/1.1\r\nHost: %s%.*s%s:%u\r\n\r\n",
			      v6 ? "[" : "", (int)hn, h, v6 ? "]" : "", (unsigned)port,
			      v6 ? "[" : "", (int)hn, h, v6 ? "]" : "", (unsigned)port);
	*len = strlen(req);
	return req;
}

/* The end of the head ("\r\n\r\n", or "\n\n" from a lax server), or 0. */
static size_t head_end(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

static void copy_clean(char *dst, size_t cap, const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n >= cap)
		n = cap - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		dst[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	dst[n] = '\0';
}

int connect_reply_parse(const char *buf, size_t len, struct connect_reply *r)
{
	r->status = 0;
	r->reason[0] = '\0';
	r->head_len = 0;
	size_t scan = len > CONNECT_REPLY_MAX ? CONNECT_REPLY_MAX : len;
	size_t end = head_end(buf, scan);
	if (!end)
		return len >= CONNECT_REPLY_MAX ? CR_TOO_BIG : CR_NEED_MORE;
	/* "HTTP/1.x SSS text" */
	if (end < 12 || strncmp(buf, "HTTP/1.", 7) != 0 || !isdigit((unsigned char)buf[7]) ||
	    buf[8] != ' ' || !isdigit((unsigned char)buf[9]) ||
	    !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]))
		return CR_BAD;
	if (end > 12 && buf[12] != ' ' && buf[12] != '\r' && buf[12] != '\n')
		return CR_BAD;
	r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	const char *eol = memchr(buf, '\n', end);
	size_t line = (size_t)(eol - buf), text = line > 13 ? 13 : line;
	copy_clean(r->reason, sizeof r->reason, buf + text, line - text);
	/* the headers: X-Proxy-Error wins over the status text */
	static const char name[] = "X-Proxy-Error:";
	for (const char *l = eol + 1; l < buf + end;) {
		const char *nl = memchr(l, '\n', (size_t)(buf + end - l));
		if (!nl)
			break;
		size_t ln = (size_t)(nl - l);
		if (ln > sizeof name - 1 && !strncasecmp(l, name, sizeof name - 1))
			copy_clean(r->reason, sizeof r->reason, l + sizeof name - 1,
				   ln - (sizeof name - 1));
		l = nl + 1;
	}
	r->head_len = end;
	return CR_OK;
}
