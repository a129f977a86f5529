/* agentjail diff | apply | discard | checkpoint | rollback: a --fs review session's change set
 * (doc/design.md §3c), and what `run`, `show` and `rm` do with it. */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/jail/pipeline.h"
#include "core/plan/jstr.h"
#include "core/review/changeset.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/termtext.h"
#include "util/uuid.h"
#include "util/xalloc.h"

#define SHOW_MAX (16u << 20) /* a file larger than this is summarised, not shown */

static const char diff_usage[] =
	"usage: agentjail diff [ID | --last] [--stat | --json] [PATH...]\n"
	"  what a --fs review session changed, against the workspace as it is now: a unified\n"
	"  diff for text, one line for binaries, modes, symlinks and directories; protected\n"
	"  paths, conflicts and what apply refuses are marked (# lines)\n"
	"  --stat   one line per change, with the lines added and removed\n"
	"  --json   one JSON document\n"
	"  PATH     only the changes at or below it (relative to this directory inside the\n"
	"           workspace, else to the workspace)\n"
	"example: agentjail diff --last | less\n";
static const char apply_usage[] =
	"usage: agentjail apply [ID | --last] [--force] [--expect DIGEST] [PATH...]\n"
	"  write a --fs review session's changes into the workspace: all, or those at or below\n"
	"  each PATH; each file written beside its place and renamed into place\n"
	"  --force  apply a change whose place the workspace changed since the jail did\n"
	"  --expect DIGEST  apply nothing unless the change set (at PATH...) is still the one\n"
	"           whose diff printed DIGEST (a diff read while the jail ran may not be what\n"
	"           it left)\n"
	"  a protected path (.envrc, .vscode, agent settings, …) is applied only when a PATH\n"
	"  names it; what git runs (hooks, config, …) never is\n"
	"exit: 0 every change applied; 1 some held back or failed (each said)\n"
	"example: agentjail apply 3f2a src/ README.md\n";
static const char discard_usage[] =
	"usage: agentjail discard [ID | --last]\n"
	"  throw a --fs review session's change set away (its checkpoints too); the workspace\n"
	"  stays as it is\n"
	"example: agentjail discard --last\n";
static const char checkpoint_usage[] =
	"usage: agentjail checkpoint [ID | --last] [NAME] | --list\n"
	"  snapshot a --fs review session's change set (while it runs too) as NAME (default: the\n"
	"  time); rollback returns to it. Reflinks where the file system has them, else hard\n"
	"  links (not while it runs), else copies: the cost is said\n"
	"  --list   the session's checkpoints\n"
	"example: agentjail checkpoint --last before-refactor\n";
static const char rollback_usage[] =
	"usage: agentjail rollback [ID | --last] NAME\n"
	"  return a --fs review session's change set to checkpoint NAME (not while it runs)\n"
	"example: agentjail rollback --last before-refactor\n";

static bool is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* ---- one session's change set ---- */

struct rvs {
	struct session s;
	struct policy pol;
	struct rv_paths p;
	struct rv_rules rules;
	struct rv_ctx ctx;
	bool exists;
};

static void rvs_free(struct rvs *r)
{
	rv_ctx_free(&r->ctx);
	rv_rules_free(&r->rules);
	rv_paths_free(&r->p);
	policy_free(&r->pol);
	session_free(&r->s);
}

/* The session (ID, or the newest of this workspace), which ran with --fs review. 0, or the
 * exit code (said). */
static int rvs_open(const char *id, const char *verb, struct rvs *r)
{
	memset(r, 0, sizeof *r);
	_cleanup_store_ struct store *st = NULL;
	int rc = cmd_store_existing(&st);
	if (rc < 0)
		return 1;
	rc = id ? cmd_session_get(st, id, &r->s) : cmd_session_last(st, verb, &r->s);
	if (rc)
		return rc;
	struct err e = {0};
	if (!r->s.policy_json || policy_from_json(r->s.policy_json, &r->pol, &e) < 0) {
		cmd_warn("%s: session %s has no stored policy", verb, r->s.id);
		return EXIT_USAGE;
	}
	if (r->pol.fs != FS_REVIEW) {
		cmd_warn("%s: session %s ran with --fs %s, not --fs review: its changes went into the "
			 "workspace as it ran",
			 verb, r->s.id, fs_mode_name(r->pol.fs));
		return EXIT_USAGE;
	}
	_cleanup_free_ char *state = cmd_state_dir();
	rv_paths_real(&r->p, state, r->s.id);
	struct stat sb;
	r->exists = lstat(r->p.upper, &sb) == 0;
	r->ctx.p = &r->p;
	r->ctx.workspace = r->pol.workspace;
	r->ctx.rules = &r->rules;
	return 0;
}

/* What the plan of the session's stored policy protects in the workspace (doc/design.md §3
 * step 7): what apply holds back. 0, or the exit code (said). */
static int rvs_rules(struct rvs *r, const char *verb)
{
	struct run_request req = {0};
	struct err e = {0};
	if (policy_from_json(r->s.policy_json, &req.pol, &e) < 0) {
		cmd_print_err(&e);
		return EXIT_USAGE;
	}
	strv_push(&req.cmd, "true");
	req.session_id = xstrdup(r->s.id);
	struct jail j;
	struct jail_prep o = {.make_caches = false};
	enum jail_stage stage = jail_prepare(&req, &o, &j, &e);
	int rc = 0;
	if (stage == JAIL_READY) {
		strv_copy(&r->rules.named, &j.plan.review_named);
		strv_copy(&r->rules.never, &j.plan.review_never);
	} else {
		cmd_print_err(&e);
		cmd_warn("%s: what is protected in the workspace comes from the session's plan, "
			 "which cannot be built now; nothing was done",
			 verb);
		rc = stage == JAIL_NO_FACTS || stage == JAIL_NO_HOME ? EXIT_JAIL : EXIT_USAGE;
	}
	jail_free(&j);
	run_request_free(&req);
	return rc;
}

/* The change set judged (rules and baselines loaded). 0, or the exit code (said). */
static int rvs_scan(struct rvs *r, const char *verb, struct rv_set *set)
{
	memset(set, 0, sizeof *set);
	int rc = rvs_rules(r, verb);
	if (rc)
		return rc;
	struct err e = {0};
	if (rv_load_baselines(&r->ctx, &e) < 0 || rv_scan(&r->ctx, set, &e) < 0) {
		cmd_print_err(&e);
		return 1;
	}
	if (set->truncated)
		cmd_warn("%s: the change set is larger than agentjail walks (%d entries, %d levels): "
			 "only part of it is here",
			 verb, RV_MAX_ENTRIES, RV_MAX_DEPTH);
	return 0;
}

/* ID-or---last and the rest of the arguments; flags[] the command's own flags (set when
 * seen; with value: the next argument, or what follows "=", is the flag's value). 0, or the
 * exit code (said). */
struct flag {
	const char *name;
	bool *set;
	const char **value;
};

static int parse(int argc, char **argv, const char *cmd, const char *usage, const struct flag *fl,
		 const char **id, struct strv *rest, bool *help)
{
	*id = NULL;
	*help = false;
	bool last = false, dashdash = false;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && is_help(a)) {
			fputs(usage, stdout);
			*help = true;
			return 0;
		}
		if (!dashdash && !strcmp(a, "--")) {
			dashdash = true;
			continue;
		}
		if (!dashdash && !strcmp(a, "--last")) {
			last = true;
			continue;
		}
		bool known = false;
		for (size_t k = 0; !dashdash && fl && fl[k].name; k++) {
			size_t nl = strlen(fl[k].name);
			if (strncmp(a, fl[k].name, nl) || (a[nl] && (a[nl] != '=' || !fl[k].value)))
				continue;
			*fl[k].set = known = true;
			if (!fl[k].value)
				continue;
			*fl[k].value = a[nl] ? a + nl + 1 : i + 1 < argc ? argv[++i] : NULL;
			if (!*fl[k].value || !**fl[k].value) {
				cmd_warn("%s: %s needs a value", cmd, fl[k].name);
				return EXIT_USAGE;
			}
		}
		if (known)
			continue;
		if (!dashdash && a[0] == '-') {
			struct strv names = STRV_INIT;
			strv_push(&names, "--last");
			strv_push(&names, "--help");
			for (size_t k = 0; fl && fl[k].name; k++)
				strv_push(&names, fl[k].name);
			int rc = cmd_unknown(cmd, "option", a, (const char *const *)strv_data(&names));
			strv_free(&names);
			return rc;
		}
		if (!*id && !last && !dashdash && rest->n == 0)
			*id = a;
		else
			strv_push(rest, a);
	}
	return 0;
}

/* The PATH arguments, relative to the workspace: a relative one to this directory when it
 * lies in the workspace, else to the workspace. 0, or EXIT_USAGE (said). */
static int rel_paths(const struct strv *args, const char *ws, const char *verb, struct strv *out)
{
	_cleanup_free_ char *cwd = realpath(".", NULL);
	const char *from = cwd && path_is_under(cwd, ws) ? cwd : ws;
	for (size_t i = 0; i < args->n; i++) {
		_cleanup_free_ char *abs = path_normalize(from, args->v[i]);
		const char *rel = path_below(abs, ws);
		if (!rel) {
			cmd_warn("%s: %s is not inside the session's workspace %s", verb, args->v[i],
				 ws);
			return EXIT_USAGE;
		}
		strv_push(out, rel);
	}
	return 0;
}

static bool chosen(const struct rv_change *ch, const struct strv *paths)
{
	return !paths->n || review_named(ch->rel, NULL, paths);
}

/* ---- diff ---- */

static bool out_tty, out_colour;

/* Text of the change set on stdout: as it is into a pipe or a file (patch(1) reads it); on a
 * terminal every line cleaned (fmt_clean: a jail's bytes never reach it raw), tabs expanded,
 * + and - lines coloured. */
static void put_diff(const char *text, size_t len)
{
	const char *raw = text;
	if (!out_tty) {
		(void)fwrite(raw, 1, len, stdout);
		return;
	}
	for (size_t i = 0; i < len;) {
		const char *nl = memchr(text + i, '\n', len - i);
		size_t l = nl ? (size_t)(nl - (text + i)) : len - i;
		struct strbuf line = STRBUF_INIT;
		for (size_t k = 0, col = 0; k < l; k++) {
			char c = text[i + k];
			if (c == '\t') {
				do
					sb_addc(&line, ' ');
				while (++col % 8);
				continue;
			}
			sb_addc(&line, c);
			col++;
		}
		_cleanup_free_ char *shown = fmt_clean(sb_str(&line));
		sb_free(&line);
		const char *colour = !out_colour	       ? NULL
				     : shown[0] == '+' ? "\033[32m"
				     : shown[0] == '-' ? "\033[31m"
				     : shown[0] == '@' ? "\033[36m"
						       : NULL;
		printf("%s%s%s\n", colour ? colour : "", shown, colour ? "\033[0m" : "");
		i += l + 1;
	}
}

/* One "# " line of agentjail's about the change set: always cleaned (the path is the jail's
 * choice), never read by patch(1). */
static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	_cleanup_free_ char *text = NULL;
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	_cleanup_free_ char *shown = fmt_clean(text ? text : "");
	printf("%s# %s%s\n", out_colour ? "\033[33m" : "", shown, out_colour ? "\033[0m" : "");
}

/* The unified diff of one file's old and new bytes (either NULL: absent). */
static void file_diff(const struct rvs *r, const char *rel, bool old, bool neu,
		      struct rv_diffstat *st, bool print)
{
	size_t ol = 0, nl = 0;
	_cleanup_free_ char *a = old ? rv_read(&r->ctx, false, rel, SHOW_MAX, &ol) : NULL;
	_cleanup_free_ char *b = neu ? rv_read(&r->ctx, true, rel, SHOW_MAX, &nl) : NULL;
	if ((old && !a) || (neu && !b)) {
		memset(st, 0, sizeof *st);
		st->binary = true;
		if (print)
			note("%s: larger than %u MiB or unreadable: not shown", rel, SHOW_MAX >> 20);
		return;
	}
	struct strbuf out = STRBUF_INIT;
	rv_unified(print ? &out : NULL, rel, a, ol, b, nl, st);
	if (print && out.len)
		put_diff(out.s, out.len);
	sb_free(&out);
}

static const char *op_word(const struct rv_change *ch)
{
	switch (ch->op) {
	case RV_ADD:
		return "added";
	case RV_MODIFY:
		return ch->old_kind == 'f' ? "modified" : "replaced";
	case RV_MODE:
		return "mode";
	case RV_DELETE:
		return "deleted";
	case RV_MKDIR:
		return "new directory";
	case RV_SYMLINK:
		return "symlink";
	case RV_REFUSED:
		return "refused";
	}
	return "?";
}

static void flags(const struct rvs *r, const struct rv_change *ch)
{
	if (ch->why)
		note("not applied: %s: %s", ch->why, ch->rel);
	if (ch->guard == RV_NEVER)
		note("never applied (git runs or follows it; the file is %s/%s): %s", r->p.upper,
		     ch->rel, ch->rel);
	else if (ch->guard == RV_NAMED)
		note("protected: applied only when named (agentjail apply %.8s %s): %s", r->s.id,
		     ch->root ? ch->root : ch->rel, ch->rel);
	if (ch->conflict)
		note("conflict: the workspace changed there since the jail did (apply --force "
		     "applies it over that): %s",
		     ch->rel);
	if (ch->bits_dropped)
		note("applied without setuid, setgid, sticky and the group/other write the "
		     "workspace's copy did not have (mode %04o): %s",
		     (unsigned)ch->new_mode, ch->rel);
}

/* The change as text, and its counts. */
static void show_change(const struct rvs *r, const struct rv_change *ch, struct rv_diffstat *st,
			bool print)
{
	memset(st, 0, sizeof *st);
	switch (ch->op) {
	case RV_ADD:
	case RV_MODIFY:
		if (print && ch->old_kind != 'f' && ch->old_kind != '-')
			note("replaces the workspace's %s: %s",
			     ch->old_kind == 'd' ? "directory" : ch->old_kind == 'l' ? "symlink"
										  : "file",
			     ch->rel);
		file_diff(r, ch->rel, ch->old_kind == 'f', true, st, print);
		if (print && ch->old_kind == 'f' && (ch->old_mode & 0777) != ch->new_mode)
			note("mode %04o -> %04o: %s", (unsigned)ch->old_mode, (unsigned)ch->new_mode,
			     ch->rel);
		else if (print && ch->old_kind != 'f' && ch->new_mode != 0644)
			note("new file mode %04o: %s", (unsigned)ch->new_mode, ch->rel);
		break;
	case RV_DELETE:
		if (ch->old_kind == 'f') {
			file_diff(r, ch->rel, true, false, st, print);
		} else if (ch->old_kind == 'd') {
			if (print)
				note("deleted directory (%llu entr%s): %s", ch->files,
				     ch->files == 1 ? "y" : "ies", ch->rel);
			struct strv files = STRV_INIT;
			rv_ws_files(&r->ctx, ch->rel, &files);
			for (size_t i = 0; i < files.n; i++) {
				struct rv_diffstat one;
				file_diff(r, files.v[i], true, false, &one, print);
				st->del += one.del;
			}
			strv_free(&files);
		} else if (print) {
			note("deleted %s: %s", ch->old_kind == 'l' ? "symlink" : "entry", ch->rel);
		}
		break;
	case RV_MODE:
		if (print)
			note("mode %04o -> %04o: %s", (unsigned)ch->old_mode, (unsigned)ch->new_mode,
			     ch->rel);
		break;
	case RV_MKDIR:
		if (print)
			note("new directory (mode %04o): %s", (unsigned)ch->new_mode, ch->rel);
		break;
	case RV_SYMLINK:
		if (print)
			note("symlink %s -> %s%s", ch->rel, ch->target ? ch->target : "?",
			     ch->old_kind == '-' ? "" : " (replaces the workspace's)");
		break;
	case RV_REFUSED:
		break;
	}
	if (print)
		flags(r, ch);
}

static json_t *change_json(const struct rvs *r, const struct rv_change *ch,
			   const struct rv_diffstat *st)
{
	json_t *o = json_object();
	json_object_set_new(o, "path", jstr(ch->rel));
	json_object_set_new(o, "change", json_string(op_word(ch)));
	char k[2] = {ch->old_kind, 0};
	json_object_set_new(o, "workspace_has", json_string(k));
	if (ch->op == RV_MODE || ch->op == RV_ADD || ch->op == RV_MODIFY || ch->op == RV_MKDIR) {
		char m[8];
		snprintf(m, sizeof m, "%04o", (unsigned)ch->new_mode);
		json_object_set_new(o, "mode", json_string(m));
	}
	if (ch->old_kind != '-') {
		char m[8];
		snprintf(m, sizeof m, "%04o", (unsigned)ch->old_mode);
		json_object_set_new(o, "old_mode", json_string(m));
	}
	if (ch->op == RV_ADD || ch->op == RV_MODIFY)
		json_object_set_new(o, "size", json_integer((json_int_t)ch->size));
	json_object_set_new(o, "insertions", json_integer((json_int_t)st->ins));
	json_object_set_new(o, "deletions", json_integer((json_int_t)st->del));
	json_object_set_new(o, "binary", json_boolean(st->binary));
	if (ch->target)
		json_object_set_new(o, "target", jstr(ch->target));
	json_object_set_new(o, "protected", ch->guard == RV_FREE ? json_null()
					    : json_string(ch->guard == RV_NEVER ? "never" : "named"));
	if (ch->root)
		json_object_set_new(o, "protected_root", jstr(ch->root));
	json_object_set_new(o, "conflict", json_boolean(ch->conflict));
	json_object_set_new(o, "refused", ch->why ? jstr(ch->why) : json_null());
	json_object_set_new(o, "bits_dropped", json_boolean(ch->bits_dropped));
	(void)r;
	return o;
}

static void stat_line(const struct rv_change *ch, const struct rv_diffstat *st, int w)
{
	struct strbuf b = STRBUF_INIT;
	if (ch->why)
		sb_add(&b, "not applied");
	else if (ch->op == RV_MODE)
		sb_addf(&b, "mode %04o -> %04o", (unsigned)ch->old_mode, (unsigned)ch->new_mode);
	else if (ch->op == RV_SYMLINK)
		sb_add(&b, "symlink");
	else if (ch->op == RV_MKDIR)
		sb_add(&b, "new directory");
	else if (st->binary)
		sb_add(&b, "Bin");
	else {
		sb_addf(&b, "%lu ", st->ins + st->del);
		unsigned long tot = st->ins + st->del, bar = tot > 40 ? 40 : tot;
		unsigned long plus = tot ? (st->ins * bar + tot / 2) / tot : 0;
		for (unsigned long i = 0; i < bar; i++)
			sb_addc(&b, i < plus ? '+' : '-');
	}
	if (ch->guard == RV_NEVER)
		sb_add(&b, " (never applied)");
	else if (ch->guard == RV_NAMED)
		sb_add(&b, " (protected)");
	if (ch->conflict)
		sb_add(&b, " (conflict)");
	_cleanup_free_ char *name = fmt_clean(ch->rel);
	const char *what = sb_str(&b); /* numbers and agentjail's words */
	printf(" %-*s | %s\n", w, name, what);
	sb_free(&b);
}

int cmd_diff(int argc, char **argv)
{
	bool stat = false, json = false, help;
	const struct flag fl[] = {{"--stat", &stat, NULL}, {"--json", &json, NULL}, {NULL, NULL, NULL}};
	const char *id;
	_cleanup_strv_ struct strv rest = STRV_INIT;
	int rc = parse(argc, argv, "diff", diff_usage, fl, &id, &rest, &help);
	if (rc || help)
		return rc;
	if (stat && json) {
		cmd_warn("diff: --stat and --json do not go together");
		return EXIT_USAGE;
	}
	struct rvs r;
	rc = rvs_open(id, "diff", &r);
	_cleanup_strv_ struct strv paths = STRV_INIT;
	if (rc == 0)
		rc = rel_paths(&rest, r.pol.workspace, "diff", &paths);
	struct rv_set set = {0};
	if (rc == 0 && r.exists)
		rc = rvs_scan(&r, "diff", &set);
	if (rc) {
		rv_set_free(&set);
		rvs_free(&r);
		return rc;
	}
	out_tty = isatty(STDOUT_FILENO);
	out_colour = out_tty && !json && !stat && cmd_colour(STDOUT_FILENO);
	/* a diff read while the jail runs may not be what it leaves: apply --expect binds the
	 * apply to what was shown (doc/design.md §3c) */
	bool running = r.exists && rv_busy(&r.p);
	char digest[RV_DIGEST_LEN + 1];
	rv_set_digest(&set, &paths, digest);
	if (running && !json)
		note("the session is running: its change set may still change until it ends; "
		     "apply --expect (the digest at the end) applies it only as shown here");
	json_t *arr = json ? json_array() : NULL;
	unsigned long ins = 0, del = 0;
	size_t shown = 0;
	int w = 0;
	for (size_t i = 0; stat && i < set.n; i++) {
		int l = (int)fmt_width(set.v[i].rel);
		if (chosen(&set.v[i], &paths) && l > w)
			w = l < 50 ? l : 50;
	}
	for (size_t i = 0; i < set.n; i++) {
		const struct rv_change *ch = &set.v[i];
		if (!chosen(ch, &paths))
			continue;
		struct rv_diffstat st;
		show_change(&r, ch, &st, !json && !stat);
		ins += st.ins;
		del += st.del;
		shown++;
		if (json)
			json_array_append_new(arr, change_json(&r, ch, &st));
		else if (stat)
			stat_line(ch, &st, w);
	}
	if (json) {
		json_t *o = json_pack("{s:s, s:o, s:o, s:b, s:s, s:b}", "session", r.s.id,
				      "change_set", jstr(r.p.upper), "changes", arr, "truncated",
				      set.truncated, "digest", digest, "running", running);
		char *s = json_dumps(o, JSON_ENSURE_ASCII | JSON_INDENT(2));
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(o);
	} else if (stat) {
		printf(" %zu change%s, %lu insertion%s(+), %lu deletion%s(-)\n", shown,
		       shown == 1 ? "" : "s", ins, ins == 1 ? "" : "s", del, del == 1 ? "" : "s");
	} else if (!shown && !isatty(STDOUT_FILENO)) {
		/* nothing: an empty diff, as diff(1) gives */
	} else if (!shown) {
		note("session %s: no pending changes", r.s.id);
	}
	if (!json && shown)
		note("digest %s: agentjail apply %.8s --expect %s%s applies these changes only as "
		     "shown",
		     digest, r.s.id, digest, paths.n ? " PATH... (the same)" : "");
	rv_set_free(&set);
	rvs_free(&r);
	return 0;
}

/* ---- apply, discard ---- */

int cmd_apply(int argc, char **argv)
{
	bool force = false, expecting = false, help;
	const char *expect = NULL;
	const struct flag fl[] = {
		{"--force", &force, NULL}, {"--expect", &expecting, &expect}, {NULL, NULL, NULL}};
	const char *id;
	_cleanup_strv_ struct strv rest = STRV_INIT;
	int rc = parse(argc, argv, "apply", apply_usage, fl, &id, &rest, &help);
	if (rc || help)
		return rc;
	struct rvs r;
	rc = rvs_open(id, "apply", &r);
	_cleanup_strv_ struct strv paths = STRV_INIT;
	if (rc == 0)
		rc = rel_paths(&rest, r.pol.workspace, "apply", &paths);
	if (rc == 0 && !r.exists) {
		printf("session %s: no pending changes\n", r.s.id);
		rvs_free(&r);
		return 0;
	}
	int lock = -1;
	struct err e = {0};
	if (rc == 0 && rv_lock(&r.p, "apply", &lock, &e) < 0) {
		cmd_print_err(&e);
		rc = EXIT_USAGE;
	}
	struct rv_set set = {0};
	if (rc == 0)
		rc = rvs_scan(&r, "apply", &set);
	char digest[RV_DIGEST_LEN + 1];
	if (rc == 0 && expect && (rv_set_digest(&set, &paths, digest), strcmp(digest, expect))) {
		_cleanup_free_ char *shown = fmt_clean(expect);
		cmd_warn("apply: the change set is not the one the diff showed (its digest is %s "
			 "now, not %s): it changed since; nothing was applied: read it again with "
			 "agentjail diff %.8s",
			 digest, shown, r.s.id);
		rc = 1;
	}
	struct rv_apply_report rep = {0};
	struct rv_apply_opts o = {.paths = &paths, .force = force, .id = r.s.id};
	if (rc == 0 && rv_apply(&r.ctx, &set, &o, &rep, &e) < 0) {
		cmd_print_err(&e);
		rc = 1;
	}
	if (rc == 0) {
		for (size_t i = 0; i < rep.held.n; i++)
			cmd_warn("held back: %s", rep.held.v[i]);
		for (size_t i = 0; i < rep.failed.n; i++)
			cmd_warn("failed: %s", rep.failed.v[i]);
		struct rv_size left;
		rv_size(&r.p, &left);
		printf("session %s: %zu change%s applied, %zu held back, %zu failed; %llu entr%s "
		       "left in the change set\n",
		       r.s.id, rep.applied.n, rep.applied.n == 1 ? "" : "s", rep.held.n,
		       rep.failed.n, left.entries, left.entries == 1 ? "y" : "ies");
		rc = rep.held.n || rep.failed.n ? 1 : 0;
	}
	if (lock >= 0)
		(void)close(lock);
	rv_apply_report_free(&rep);
	rv_set_free(&set);
	rvs_free(&r);
	return rc;
}

int cmd_discard(int argc, char **argv)
{
	bool help;
	const char *id;
	_cleanup_strv_ struct strv rest = STRV_INIT;
	int rc = parse(argc, argv, "discard", discard_usage, NULL, &id, &rest, &help);
	if (rc || help)
		return rc;
	if (rest.n) {
		cmd_warn("discard: unexpected argument %s (a change set is discarded whole; apply "
			 "takes paths)",
			 rest.v[0]);
		return EXIT_USAGE;
	}
	struct rvs r;
	rc = rvs_open(id, "discard", &r);
	if (rc) {
		rvs_free(&r);
		return rc;
	}
	struct stat sb;
	if (lstat(r.p.dir, &sb) < 0) {
		printf("session %s: no change set to discard\n", r.s.id);
		rvs_free(&r);
		return 0;
	}
	int lock = -1;
	struct err e = {0};
	struct rv_size was;
	rv_size(&r.p, &was);
	if (rv_lock(&r.p, "discard", &lock, &e) < 0 || rv_discard(&r.p, &e) < 0) {
		cmd_print_err(&e);
		rc = lock < 0 ? EXIT_USAGE : 1;
	} else {
		printf("session %s: change set discarded (%llu entr%s, %llu bytes); the workspace is "
		       "as it was\n",
		       r.s.id, was.entries, was.entries == 1 ? "y" : "ies", was.bytes);
	}
	if (lock >= 0)
		(void)close(lock);
	rvs_free(&r);
	return rc;
}

/* ---- checkpoints ---- */

static void print_cost(const char *what, const char *name, const struct rv_ckpt_cost *c)
{
	printf("%s %s: %llu entr%s, %llu bytes, as %s in %lld ms", what, name, c->files,
	       c->files == 1 ? "y" : "ies", c->bytes, c->how, c->ms);
	if (c->copied)
		printf(" (%llu bytes copied)", c->copied);
	printf("\n");
}

int cmd_checkpoint(int argc, char **argv)
{
	bool list = false, help;
	const struct flag fl[] = {{"--list", &list, NULL}, {NULL, NULL, NULL}};
	const char *id;
	_cleanup_strv_ struct strv rest = STRV_INIT;
	int rc = parse(argc, argv, "checkpoint", checkpoint_usage, fl, &id, &rest, &help);
	if (rc || help)
		return rc;
	if (rest.n > 1 || (list && rest.n)) {
		cmd_warn("checkpoint: usage: agentjail checkpoint [ID | --last] [NAME] | --list");
		return EXIT_USAGE;
	}
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
	const char *name = rest.n ? rest.v[0] : stamp;
	if (!review_ckpt_name_ok(name)) {
		cmd_warn("checkpoint: %s is not a checkpoint name (1 to 64 of A-Z a-z 0-9 . _ -, not "
			 "starting with a dot)",
			 name);
		return EXIT_USAGE;
	}
	struct rvs r;
	rc = rvs_open(id, "checkpoint", &r);
	if (rc == 0 && list) {
		struct strv names = STRV_INIT;
		rv_checkpoints(&r.p, &names);
		for (size_t i = 0; i < names.n; i++) {
			_cleanup_free_ char *shown = fmt_clean(names.v[i]);
			printf("%s\n", shown);
		}
		strv_free(&names);
	} else if (rc == 0 && !r.exists) {
		cmd_warn("checkpoint: session %s has no change set (nothing pending)", r.s.id);
		rc = EXIT_USAGE;
	} else if (rc == 0) {
		/* not running: the lock held, so no run starts (and unshares) while hard links are
		 * made; running: copies, which nothing of the run can reach */
		struct rv_ckpt_cost cost;
		struct err e = {0};
		int lock = -1;
		bool running = rv_lock(&r.p, "checkpoint", &lock, &e) < 0 && e.errnum == EBUSY;
		err_clear(&e);
		if (rv_checkpoint(&r.p, name, running, &cost, &e) < 0) {
			cmd_print_err(&e);
			rc = 1;
		} else {
			print_cost("checkpoint", name, &cost);
		}
		if (lock >= 0)
			(void)close(lock);
	}
	rvs_free(&r);
	return rc;
}

int cmd_rollback(int argc, char **argv)
{
	bool help;
	const char *id;
	_cleanup_strv_ struct strv rest = STRV_INIT;
	int rc = parse(argc, argv, "rollback", rollback_usage, NULL, &id, &rest, &help);
	if (rc || help)
		return rc;
	if (rest.n != 1) {
		cmd_warn("rollback: usage: agentjail rollback [ID | --last] NAME (agentjail "
			 "checkpoint ID --list names them)");
		return EXIT_USAGE;
	}
	if (!review_ckpt_name_ok(rest.v[0])) {
		cmd_warn("rollback: %s is not a checkpoint name", rest.v[0]);
		return EXIT_USAGE;
	}
	struct rvs r;
	rc = rvs_open(id, "rollback", &r);
	int lock = -1;
	struct err e = {0};
	if (rc == 0 && rv_lock(&r.p, "rollback", &lock, &e) < 0) {
		cmd_print_err(&e);
		rc = EXIT_USAGE;
	}
	struct rv_ckpt_cost cost;
	if (rc == 0 && rv_rollback(&r.p, rest.v[0], &cost, &e) < 0) {
		cmd_print_err(&e);
		rc = 1;
	} else if (rc == 0) {
		print_cost("rolled back to checkpoint", rest.v[0], &cost);
	}
	if (lock >= 0)
		(void)close(lock);
	rvs_free(&r);
	return rc;
}

/* ---- run, show, rm ---- */

/* A review session's change set: its places and size; false for another session. */
static bool review_size(const struct session *s, struct rv_paths *p, struct rv_size *sz)
{
	struct policy pol;
	struct err e = {0};
	if (!s->policy_json || policy_from_json(s->policy_json, &pol, &e) < 0)
		return false;
	bool review = pol.fs == FS_REVIEW;
	policy_free(&pol);
	if (!review)
		return false;
	_cleanup_free_ char *state = cmd_state_dir();
	rv_paths_real(p, state, s->id);
	rv_size(p, sz);
	return true;
}

/* show: the pending change set's size, and its checkpoints. */
void cmd_review_show(const struct session *s, json_t *o)
{
	struct rv_paths p;
	struct rv_size sz;
	if (!review_size(s, &p, &sz))
		return;
	struct strv ck = STRV_INIT;
	rv_checkpoints(&p, &ck);
	if (o) {
		json_t *names = json_array();
		for (size_t i = 0; i < ck.n; i++)
			json_array_append_new(names, json_string(ck.v[i]));
		json_object_set_new(o, "review",
				    json_pack("{s:I, s:I, s:o, s:o, s:b}", "entries",
					      (json_int_t)sz.entries, "bytes", (json_int_t)sz.bytes,
					      "change_set", jstr(p.upper), "checkpoints", names,
					      "running", rv_busy(&p)));
	} else {
		_cleanup_free_ char *dir = fmt_clean(p.upper);
		if (sz.entries)
			printf("review     %llu entr%s pending (%llu bytes) in %s: agentjail diff "
			       "%.8s, apply, discard\n",
			       sz.entries, sz.entries == 1 ? "y" : "ies", sz.bytes, dir, s->id);
		else
			printf("review     nothing pending\n");
		if (ck.n) {
			struct strbuf b = STRBUF_INIT;
			for (size_t i = 0; i < ck.n; i++)
				sb_addf(&b, "%s%s", i ? ", " : "", ck.v[i]);
			_cleanup_free_ char *shown = fmt_clean(sb_str(&b));
			printf("checkpoints %s (agentjail rollback %.8s NAME)\n", shown, s->id);
			sb_free(&b);
		}
	}
	strv_free(&ck);
	rv_paths_free(&p);
}

/* The size line of the TUI's detail pane, or NULL (not a review session). */
char *cmd_review_pending(const struct session *s)
{
	struct rv_paths p;
	struct rv_size sz;
	if (!review_size(s, &p, &sz))
		return NULL;
	rv_paths_free(&p);
	return sz.entries ? xasprintf("%llu entr%s pending (%llu bytes): d diff, a apply, x "
				      "discard",
				      sz.entries, sz.entries == 1 ? "y" : "ies", sz.bytes)
			  : xstrdup("nothing pending");
}

/* rm: a session's change set goes with it. */
int cmd_review_forget(const char *id)
{
	_cleanup_free_ char *state = cmd_state_dir();
	struct rv_paths p;
	rv_paths_real(&p, state, id);
	struct stat sb;
	int rc = 0;
	if (lstat(p.dir, &sb) == 0) {
		int lock = -1;
		struct err e = {0};
		if (rv_lock(&p, "rm", &lock, &e) < 0 || rv_discard(&p, &e) < 0) {
			cmd_print_err(&e);
			rc = -1;
		}
		if (lock >= 0)
			(void)close(lock);
	}
	rv_paths_free(&p);
	return rc;
}
