/* osb_stream: the OpenSandbox command stream, parsed as it arrives (osb_stream.h). */
#include "core/backend/remote/osb_stream.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

void osb_stream_init(struct osb_stream *s)
{
	memset(s, 0, sizeof *s);
	s->line = (struct strbuf)STRBUF_INIT;
}

void osb_stream_free(struct osb_stream *s)
{
	sb_free(&s->line);
}

static enum osb_ev ev_type(const char *t)
{
	static const struct { const char *name; enum osb_ev type; } map[] = {
		{"init", OSB_EV_INIT},	     {"stdout", OSB_EV_STDOUT}, {"stderr", OSB_EV_STDERR},
		{"ping", OSB_EV_PING},	     {"execution_complete", OSB_EV_COMPLETE},
		{"error", OSB_EV_ERROR},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(t, map[i].name))
			return map[i].type;
	return OSB_EV_OTHER;
}

static const char *str_of(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* One whole line (no newline): an event, or nothing. */
static int line_done(struct osb_stream *s, const char *l, size_t n, osb_event_fn fn, void *arg)
{
	while (n && (*l == ' ' || *l == '\t'))
		l++, n--;
	while (n && (l[n - 1] == ' ' || l[n - 1] == '\t' || l[n - 1] == '\r'))
		n--;
	if (!n || *l == ':')
		return 0;
	if (n >= 5 && !memcmp(l, "data:", 5)) {
		l += 5, n -= 5;
		while (n && (*l == ' ' || *l == '\t'))
			l++, n--;
	} else if (*l != '{') {
		return 0; /* event:, id:, retry: or noise */
	}
	json_t *o = json_loadb(l, n, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(o) || !str_of(o, "type")) {
		json_decref(o);
		return 0;
	}
	struct osb_event ev = {.type_name = str_of(o, "type"), .text = str_of(o, "text")};
	ev.type = ev_type(ev.type_name);
	json_t *ts = json_object_get(o, "timestamp");
	ev.timestamp = json_is_integer(ts) ? json_integer_value(ts) : 0;
	json_t *er = json_object_get(o, "error");
	if (json_is_object(er)) {
		ev.ename = str_of(er, "ename");
		ev.evalue = str_of(er, "evalue");
	}
	if (ev.type == OSB_EV_COMPLETE || ev.type == OSB_EV_ERROR)
		s->ended = true;
	s->events++;
	int r = fn(arg, &ev);
	json_decref(o);
	return r < 0 ? r : 0;
}

int osb_stream_feed(struct osb_stream *s, const char *buf, size_t n, osb_event_fn fn, void *arg,
		    struct err *e)
{
	while (n) {
		const char *nl = memchr(buf, '\n', n);
		size_t take = nl ? (size_t)(nl - buf) : n;
		if (s->line.len + take > OSB_LINE_MAX)
			return err_set(e, 0, "", "the service sent an event line longer than %u bytes",
				       OSB_LINE_MAX);
		if (!nl) {
			sb_addn(&s->line, buf, take);
			return 0;
		}
		int r;
		if (s->line.len) {
			sb_addn(&s->line, buf, take);
			r = line_done(s, sb_str(&s->line), s->line.len, fn, arg);
			s->line.len = 0;
			s->line.s[0] = '\0';
		} else {
			r = line_done(s, buf, take, fn, arg);
		}
		if (r < 0)
			return r;
		buf += take + 1;
		n -= take + 1;
	}
	return 0;
}

int osb_stream_finish(struct osb_stream *s, osb_event_fn fn, void *arg, struct err *e)
{
	(void)e;
	if (!s->line.len)
		return 0;
	int r = line_done(s, sb_str(&s->line), s->line.len, fn, arg);
	s->line.len = 0;
	s->line.s[0] = '\0';
	return r;
}

int osb_exit_status(const struct osb_event *end, char **why)
{
	*why = NULL;
	if (end->type == OSB_EV_COMPLETE)
		return 0;
	const char *v = end->evalue ? end->evalue : "";
	char *stop = NULL;
	errno = 0;
	long code = strtol(v, &stop, 10);
	bool num = *v && stop && !*stop && !errno;
	if (num && code >= 0 && code <= 255 && end->ename && !strcmp(end->ename, "CommandExecError"))
		return (int)code;
	if (num && code == -1) {
		*why = xstrdup("the service killed the command (its timeout or an interrupt; "
			       "execd reports -1): exit status 137");
		return 137;
	}
	*why = xasprintf("the command did not run on the service: %s%s%s",
			 end->ename ? end->ename : "error", *v ? ": " : "", v);
	return 127;
}
