/* sessfmt: session fields as text, and aligned tables. Pure (see sessfmt.h). */
#include "core/session/sessfmt.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/session/netfmt.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* ---- tables ---- */

void fmt_table_init(struct fmt_table *t, const struct fmt_col *cols, size_t ncols)
{
	t->cols = cols;
	t->ncols = ncols;
	t->cells = (struct strv)STRV_INIT;
}

void fmt_table_add(struct fmt_table *t, const char *cell) { strv_push(&t->cells, cell ? cell : ""); }
void fmt_table_add_take(struct fmt_table *t, char *cell)
{
	strv_push_take(&t->cells, cell ? cell : xstrdup(""));
}

void fmt_table_free(struct fmt_table *t) { strv_free(&t->cells); }

static void pad(struct strbuf *b, size_t n)
{
	while (n--)
		sb_addc(b, ' ');
}

char *fmt_table_render(const struct fmt_table *t)
{
	size_t nc = t->ncols;
	if (!nc)
		return xstrdup("");
	size_t rows = (t->cells.n + nc - 1) / nc + 1; /* with the header */
	/* the cells as shown (cleaned and cut), header first, and their widths */
	char **shown = xcalloc(rows * nc, sizeof *shown);
	size_t *w = xcalloc(rows * nc, sizeof *w);
	size_t *colw = xcalloc(nc, sizeof *colw);
	for (size_t i = 0; i < rows * nc; i++) {
		size_t c = i % nc;
		const char *src = "";
		if (i < nc)
			src = t->cols[c].title;
		else if (i - nc < t->cells.n)
			src = t->cells.v[i - nc];
		size_t max = t->cols[c].max;
		shown[i] = max ? fmt_cut(src, max) : fmt_clean(src);
		w[i] = fmt_width(shown[i]);
		if (w[i] > colw[c])
			colw[c] = w[i];
	}
	struct strbuf b = STRBUF_INIT;
	for (size_t r = 0; r < rows; r++) {
		size_t line = b.len;
		for (size_t c = 0; c < nc; c++) {
			size_t i = r * nc + c;
			if (c)
				sb_add(&b, "  ");
			if (t->cols[c].right)
				pad(&b, colw[c] - w[i]);
			sb_add(&b, shown[i]);
			if (!t->cols[c].right && c + 1 < nc)
				pad(&b, colw[c] - w[i]);
		}
		while (b.len > line && b.s[b.len - 1] == ' ')
			b.s[--b.len] = '\0';
		sb_addc(&b, '\n');
	}
	for (size_t i = 0; i < rows * nc; i++)
		free(shown[i]);
	free(shown);
	free(w);
	free(colw);
	return sb_steal(&b);
}

/* ---- session fields ---- */

char *sessfmt_time(long long t_ms, long utc_offset_s)
{
	time_t secs = (time_t)(t_ms / 1000 + utc_offset_s);
	struct tm tm;
	if (!gmtime_r(&secs, &tm))
		return xstrdup("?");
	char buf[64];
	strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
	return xstrdup(buf);
}

char *sessfmt_ago(long long t_ms, long long now_ms, long utc_offset_s)
{
	long long d = now_ms - t_ms;
	long long s = d / 1000;
	if (d < -60000 || s >= 30LL * 86400) {
		char *full = sessfmt_time(t_ms, utc_offset_s);
		if (strlen(full) > 10)
			full[10] = '\0'; /* the date */
		return full;
	}
	if (s < 5)
		return xstrdup("just now");
	if (s < 60)
		return xasprintf("%llds ago", s);
	if (s < 3600)
		return xasprintf("%lldm ago", s / 60);
	if (s < 86400)
		return xasprintf("%lldh ago", s / 3600);
	return xasprintf("%lldd ago", s / 86400);
}

char *sessfmt_duration(long long ms)
{
	if (ms < 0)
		return xstrdup("-");
	long long s = ms / 1000;
	if (s < 10)
		return xasprintf("%lld.%llds", s, ms / 100 % 10);
	if (s < 60)
		return xasprintf("%llds", s);
	if (s < 3600)
		return xasprintf("%lldm%02llds", s / 60, s % 60);
	if (s < 86400)
		return xasprintf("%lldh%02lldm", s / 3600, s / 60 % 60);
	return xasprintf("%lldd%02lldh", s / 86400, s / 3600 % 24);
}

char *sessfmt_policy(const char *policy_json)
{
	json_t *o = policy_json ? json_loads(policy_json, 0, NULL) : NULL;
	const char *fs = json_string_value(json_object_get(o, "fs"));
	const char *net = json_string_value(json_object_get(o, "net"));
	if (!json_is_object(o) || !fs || !net) {
		json_decref(o);
		return xstrdup("?");
	}
	struct strbuf b = STRBUF_INIT;
	if (!strcmp(fs, "danger-full-access")) {
		sb_add(&b, "full");
	} else {
		sb_add(&b, !strcmp(fs, "read-only")	    ? "ro"
			   : !strcmp(fs, "workspace-write") ? "rw"
							    : fs);
		sb_add(&b, "·");
		sb_add(&b, net);
		json_t *dom = json_object_get(o, "allow_domains");
		if (!strcmp(net, "allow") && json_is_array(dom))
			sb_addf(&b, "(%zu)", json_array_size(dom));
	}
	if (json_is_true(json_object_get(o, "allow_ptrace")))
		sb_add(&b, "·ptrace");
	const char *home = json_string_value(json_object_get(o, "home"));
	if (home && !strcmp(home, "persist"))
		sb_add(&b, "·home");
	json_decref(o);
	return sb_steal(&b);
}

char *sessfmt_status(enum sess_status status, int exit_status)
{
	const char *sig = exit_status > 0 ? sigabbrev_np(exit_status) : NULL;
	switch (status) {
	case SESS_EXITED:
		return exit_status >= 0 ? xasprintf("exited %d", exit_status) : xstrdup("exited");
	case SESS_SIGNALLED:
		if (exit_status < 0)
			return xstrdup("signalled");
		return sig ? xasprintf("signalled %d (%s)", exit_status, sig)
			   : xasprintf("signalled %d", exit_status);
	case SESS_KILLED:
		return sig ? xasprintf("killed (%s)", sig) : xstrdup("killed");
	case SESS_RUNNING:
		return xstrdup("running");
	case SESS_LOST:
		return xstrdup("lost");
	}
	return xstrdup("?");
}

char *sessfmt_argv(const struct strv *argv)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < argv->n; i++) {
		if (i)
			sb_addc(&b, ' ');
		sb_add_shquoted(&b, argv->v[i]);
	}
	char *clean = fmt_clean(sb_str(&b));
	sb_free(&b);
	return clean;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t sessfmt_id_prefix_len(char *const *ids, size_t n, size_t min)
{
	size_t longest = 0;
	for (size_t i = 0; i < n; i++)
		if (strlen(ids[i]) > longest)
			longest = strlen(ids[i]);
	char **v = xmalloc((n ? n : 1) * sizeof *v);
	memcpy(v, ids, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_str);
	/* neighbours in sorted order share the longest prefixes */
	size_t need = min;
	for (size_t i = 1; i < n; i++) {
		size_t k = 0;
		while (v[i - 1][k] && v[i - 1][k] == v[i][k])
			k++;
		if (k + 1 > need)
			need = k + 1;
	}
	free(v);
	return need < longest ? need : longest;
}

/* ---- the sessions table ---- */

enum {
	C_ID, C_STARTED, C_TOOK, C_STATUS, C_POLICY, C_NET, C_PROFILE, C_WORKSPACE, C_COMMAND, C_N
};

static char *workspace_cell(const char *ws, const char *home)
{
	if (!ws)
		return xstrdup("-");
	const char *below = home && home[0] == '/' && home[1] ? path_below(ws, home) : NULL;
	if (!below)
		return xstrdup(ws);
	return below[0] ? xasprintf("~/%s", below) : xstrdup("~");
}

char *sessfmt_sessions(const struct session *v, size_t n, const struct sessfmt_opts *o)
{
	struct fmt_col cols[C_N] = {
		[C_ID] = {"ID", false, 0},	     [C_STARTED] = {"STARTED", false, 0},
		[C_TOOK] = {"TOOK", true, 0},	     [C_STATUS] = {"STATUS", false, 0},
		[C_POLICY] = {"POLICY", false, 0},   [C_NET] = {"NET", false, 0},
		[C_PROFILE] = {"PROFILE", false, 0},
		[C_WORKSPACE] = {"WORKSPACE", false, 0}, [C_COMMAND] = {"COMMAND", false, 0},
	};
	char **ids = xcalloc(n ? n : 1, sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = v[i].id ? v[i].id : "";
	size_t idlen = sessfmt_id_prefix_len(ids, n, 8);
	free(ids);
	/* NET only when some session has network decisions (--net allow) */
	bool net = false;
	for (size_t i = 0; i < n; i++)
		net = net || v[i].n_net_allowed > 0 || v[i].n_net_denied > 0;

	/* the cells of each row, in column order (NET and WORKSPACE left out unless wanted) */
	struct strv cells = STRV_INIT;
	for (size_t i = 0; i < n; i++) {
		const struct session *s = &v[i];
		/* the latest attempt's run: a session resumed days later did not take days */
		long long from = s->last_started_ms ? s->last_started_ms : s->started_ms;
		long long took = s->status == SESS_LOST	    ? -1
				 : s->status == SESS_RUNNING ? o->now_ms - from
							     : s->ended_ms - from;
		strv_push_take(&cells, xstrndup(s->id ? s->id : "", idlen));
		strv_push_take(&cells, sessfmt_ago(s->started_ms, o->now_ms, o->utc_offset_s));
		strv_push_take(&cells, sessfmt_duration(took));
		strv_push_take(&cells, sessfmt_status(s->status, s->exit_status));
		strv_push_take(&cells, sessfmt_policy(s->policy_json));
		if (net)
			strv_push_take(&cells, netfmt_cell(s->n_net_allowed, s->n_net_failed,
							   s->n_net_denied));
		strv_push(&cells, s->profile ? s->profile : "-");
		if (o->workspace)
			strv_push_take(&cells, workspace_cell(s->workspace, o->home));
		strv_push_take(&cells, sessfmt_argv(&s->argv));
	}
	struct fmt_col shown[C_N];
	size_t per_row = 0;
	for (size_t c = 0; c < C_N; c++)
		if ((c != C_WORKSPACE || o->workspace) && (c != C_NET || net))
			shown[per_row++] = cols[c];

	/* On a terminal every row fits its width: the widest column (the command, usually; then
	 * the workspace, …) loses a column at a time, down to 10, then (a very narrow terminal)
	 * down to 4 ("abc…"); the ID is never cut. */
	if (o->width) {
		size_t w[C_N], total = 0;
		for (size_t c = 0; c < per_row; c++) {
			w[c] = fmt_width(shown[c].title);
			for (size_t r = 0; r < n; r++) {
				size_t x = fmt_width(cells.v[r * per_row + c]);
				if (x > w[c])
					w[c] = x;
			}
			total += w[c] + (c ? 2 : 0);
		}
		/* first no column below 10 (the narrow ones stay whole), then down to 4 */
		for (size_t floor = 10; floor >= 4 && total > o->width; floor -= 6) {
			for (;;) {
				size_t widest = 0;
				for (size_t c = 1; c < per_row; c++)
					if (w[c] > floor && (!widest || w[c] >= w[widest]))
						widest = c;
				if (!widest || total <= o->width)
					break;
				w[widest]--;
				total--;
				shown[widest].max = w[widest];
			}
		}
	}
	struct fmt_table t;
	fmt_table_init(&t, shown, per_row);
	t.cells = cells;
	char *out = fmt_table_render(&t);
	fmt_table_free(&t);
	return out;
}
