/* ctlproto: see ctlproto.h. */
#include "core/plan/ctlproto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool printable(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

bool ctlproto_word_ok(const char *s)
{
	size_t n = 0;
	for (; s && s[n]; n++)
		if (!printable((unsigned char)s[n]) || n >= CTLPROTO_WORD_MAX)
			return false;
	return n > 0;
}

int ctlproto_parse(const char *line, size_t len, struct ctl_req *out, const char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	if (len == 0 || len > CTLPROTO_LINE_MAX) {
		*why = len ? "the line is too long" : "an empty line";
		return -1;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if (c != ' ' && !printable(c)) {
			*why = "a byte that is not printable ASCII";
			return -1;
		}
	}
	memcpy(out->buf, line, len);
	out->buf[len] = '\0';
	/* words: one space between, none at either end */
	char *words[CTLPROTO_ARGS_MAX + 2];
	int nw = 0;
	for (char *p = out->buf; *p;) {
		if (*p == ' ') {
			*why = "an empty word (two spaces, or a space at an end)";
			return -1;
		}
		if (nw == CTLPROTO_ARGS_MAX + 2) {
			*why = "too many words";
			return -1;
		}
		words[nw++] = p;
		char *sp = strchr(p, ' ');
		size_t wl = sp ? (size_t)(sp - p) : strlen(p);
		if (wl > CTLPROTO_WORD_MAX) {
			*why = "a word is too long";
			return -1;
		}
		if (!sp)
			break;
		*sp = '\0';
		p = sp + 1;
		if (!*p) {
			*why = "an empty word (two spaces, or a space at an end)";
			return -1;
		}
	}
	if (nw < 2 || strncmp(words[0], "AJ", 2) != 0) {
		*why = nw < 2 ? "no verb" : "not a request (AJ<version> VERB ...)";
		return -1;
	}
	const char *v = words[0] + 2;
	long ver = 0;
	if (!*v || strlen(v) > 4) {
		*why = "the version is not a number";
		return -1;
	}
	for (; *v; v++) {
		if (*v < '0' || *v > '9') {
			*why = "the version is not a number";
			return -1;
		}
		ver = ver * 10 + (*v - '0');
	}
	if (ver < 1) {
		*why = "the version is not a number";
		return -1;
	}
	out->version = (int)ver;
	out->verb = words[1];
	for (int i = 2; i < nw; i++)
		out->args[out->nargs++] = words[i];
	return 0;
}

int ctlproto_question_format(const struct net_question *q, char *out, size_t cap)
{
	if (!ctlproto_word_ok(q->entry) || !ctlproto_word_ok(q->host))
		return -1;
	int n = snprintf(out, cap, "q %llu %s %s %u %s %lld %lld", (unsigned long long)q->id,
			 q->entry, q->host, (unsigned)q->port, q->proto[0] ? q->proto : "?",
			 (long long)q->asked_ms, (long long)q->deadline_ms);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A decimal number of at most 19 digits in [lo, hi]. */
static bool number(const char *s, long long lo, long long hi, long long *out)
{
	size_t n = strlen(s);
	if (n == 0 || n > 19)
		return false;
	long long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/* A protocol's name: 1 to 7 lowercase letters. */
static bool proto_word(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= sizeof ((struct net_question *)0)->proto)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 'a' || s[i] > 'z')
			return false;
	return true;
}

int ctlproto_question_parse(const char *line, size_t len, struct net_question *q)
{
	memset(q, 0, sizeof *q);
	if (len > CTLPROTO_LINE_MAX)
		return -1;
	char buf[CTLPROTO_LINE_MAX + 1];
	memcpy(buf, line, len);
	buf[len] = '\0';
	char *f[9];
	int n = 0;
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 9;
	     t = strtok_r(NULL, " ", &save))
		f[n++] = t;
	long long id, port, asked, deadline;
	if (n != 8 || strcmp(f[0], "q") || !number(f[1], 1, 1LL << 53, &id) ||
	    !ctlproto_word_ok(f[2]) || strlen(f[2]) >= sizeof q->entry ||
	    !ctlproto_word_ok(f[3]) || strlen(f[3]) >= sizeof q->host ||
	    !number(f[4], 0, 65535, &port) || !proto_word(f[5]) ||
	    !number(f[6], 0, 1LL << 50, &asked) || !number(f[7], 0, 1LL << 50, &deadline))
		return -1;
	q->id = (uint64_t)id;
	memcpy(q->entry, f[2], strlen(f[2]) + 1);
	memcpy(q->host, f[3], strlen(f[3]) + 1);
	q->port = (uint16_t)port;
	memcpy(q->proto, f[5], strlen(f[5]) + 1);
	q->asked_ms = asked;
	q->deadline_ms = deadline;
	return 0;
}

int ctlproto_reply_head(const char *line, long *n, const char **rest)
{
	*n = 0;
	*rest = "";
	if (!strncmp(line, "err", 3) && (!line[3] || line[3] == ' ')) {
		*rest = line[3] ? line + 4 : line + 3;
		return 0;
	}
	if (strncmp(line, "ok", 2) || (line[2] && line[2] != ' '))
		return -1;
	*rest = line[2] ? line + 3 : line + 2;
	long long v;
	if (!strncmp(*rest, "list ", 5)) {
		if (!number(*rest + 5, 0, CTLPROTO_LIST_MAX, &v))
			return -1;
		*n = (long)v;
	}
	return 1;
}

int ctlproto_jail_parse(const char *rest, long *pid, bool *stopping)
{
	if (strncmp(rest, "jail ", 5) != 0)
		return -1;
	const char *p = rest + 5, *sp = strchr(p, ' ');
	char num[9];
	long long v;
	if (!sp || sp == p || (size_t)(sp - p) >= sizeof num)
		return -1;
	memcpy(num, p, (size_t)(sp - p));
	num[sp - p] = '\0';
	if (!number(num, 0, 1 << 22, &v))
		return -1;
	if (!strcmp(sp + 1, "running"))
		*stopping = false;
	else if (!strcmp(sp + 1, "stopping"))
		*stopping = true;
	else
		return -1;
	*pid = (long)v;
	return 0;
}
