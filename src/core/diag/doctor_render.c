/* doctor: the report (pure): adding a finding, its status, and the text and JSON renderings. */
#include "core/diag/doctor.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/xalloc.h"

/* ======================================================================================== */
/* The report (pure) */

void doctor_report_free(struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].id);
		free(r->v[i].detail);
		free(r->v[i].fix);
	}
	free(r->v);
	memset(r, 0, sizeof *r);
}

/* One line: line breaks and tabs become spaces, then fmt_clean (util/termtext.h) shows every
 * other control character, bidirectional mark and invalid byte as '?'. */
static char *one_line(const char *s)
{
	_cleanup_free_ char *flat = xstrdup(s);
	for (char *p = flat; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return fmt_clean(flat);
}

void doctor_add(struct doctor_report *r, const char *id, enum doctor_status st, const char *fix,
                const char *fmt, ...)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 16;
		r->v = xrealloc(r->v, r->cap * sizeof *r->v);
	}
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *detail = xvasprintf(fmt, ap);
	va_end(ap);
	struct doctor_check *c = &r->v[r->n++];
	c->id = xstrdup(id);
	c->status = st;
	c->detail = one_line(detail);
	c->fix = NULL;
	if (st != DOCTOR_OK)
		c->fix = one_line(fix && *fix ? fix : "no automatic fix is known: see the detail");
}

const char *doctor_status_name(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_WARN:
		return "warn";
	case DOCTOR_FAIL:
		return "fail";
	}
	return "fail";
}

bool doctor_report_ok(const struct doctor_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].status == DOCTOR_FAIL)
			return false;
	return true;
}

static void render_summary(const struct doctor_report *r, struct strbuf *b)
{
	size_t counts[3] = {0};
	for (size_t i = 0; i < r->n; i++)
		counts[r->v[i].status]++;
	if (doctor_report_ok(r)) {
		sb_addf(b, "a sandboxed run works here (%zu ok, %zu warn)\n", counts[DOCTOR_OK],
		        counts[DOCTOR_WARN]);
		return;
	}
	sb_add(b, "a sandboxed run cannot work here; failed:");
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].status == DOCTOR_FAIL)
			sb_addf(b, " %s", r->v[i].id);
	sb_add(b, "\n");
}

/* The status word, coloured for a terminal (all three are 4 columns wide). */
static const char *status_shown(enum doctor_status s, bool colour)
{
	if (colour && s == DOCTOR_WARN)
		return "\033[33mwarn\033[0m";
	if (colour && s == DOCTOR_FAIL)
		return "\033[1;31mfail\033[0m";
	return doctor_status_name(s);
}

char *doctor_render_text(const struct doctor_report *r, bool colour)
{
	int idw = 0;
	for (size_t i = 0; i < r->n; i++)
		if ((int)strlen(r->v[i].id) > idw)
			idw = (int)strlen(r->v[i].id);
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < r->n; i++) {
		const struct doctor_check *c = &r->v[i];
		sb_addf(&b, "%-4s  %-*s  %s\n", status_shown(c->status, colour), idw, c->id,
		        c->detail);
		if (c->status != DOCTOR_OK && c->fix)
			sb_addf(&b, "%*s  fix: %s\n", 4 + 2 + idw, "", c->fix);
	}
	render_summary(r, &b);
	return sb_steal(&b) ?: xstrdup("");
}

char *doctor_render_json(const struct doctor_report *r)
{
	json_t *root = json_object();
	json_t *checks = json_array();
	json_object_set_new(root, "version", json_integer(DOCTOR_JSON_VERSION));
	json_object_set_new(root, "ok", json_boolean(doctor_report_ok(r)));
	for (size_t i = 0; i < r->n; i++) {
		const struct doctor_check *c = &r->v[i];
		json_t *o = json_object();
		json_object_set_new(o, "id", json_string(c->id));
		json_object_set_new(o, "status", json_string(doctor_status_name(c->status)));
		json_object_set_new(o, "detail", json_string(c->detail));
		json_object_set_new(o, "fix", c->fix ? json_string(c->fix) : json_null());
		json_array_append_new(checks, o);
	}
	json_object_set_new(root, "checks", checks);
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!s)
		abort(); /* only on exhaustion: every string above is valid UTF-8 */
	char *out = xasprintf("%s\n", s);
	free(s);
	return out;
}
