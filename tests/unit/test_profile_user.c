/* User profiles ([profile.NAME]): a new profile, one extending a built-in, every refusal with
 * its FILE:LINE:COL, and a user profile shadowing a built-in in the lookups. The TOML trees are
 * built by hand (the parser has its own tests). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/policy.h"
#include "core/plan/profile.h"
#include "core/config/toml.h"
#include "util/xalloc.h"

/* ---- a tiny builder: every value of key k sits on line k+2, its key at column 1, its value
 * at column 10 (array items at 11, 20, 29, …) ---- */
struct kv {
	const char *key;
	enum toml_type type;
	const char *const *strs; /* TOML_STRING: strs[0]; TOML_ARRAY: the items */
	int64_t i;
};
#define STR(k, s) {k, TOML_STRING, (const char *const[]){s, NULL}, 0}
#define ARR(k, ...) {k, TOML_ARRAY, (const char *const[]){__VA_ARGS__, NULL}, 0}
#define EMPTY(k) {k, TOML_ARRAY, (const char *const[]){NULL}, 0}
#define INT(k, v) {k, TOML_INT, NULL, v}

static struct toml_value table(const struct kv *kv, size_t n)
{
	struct toml_value t = {.type = TOML_TABLE, .line = 1, .col = 1, .n = n};
	t.items = xcalloc(n ? n : 1, sizeof *t.items);
	t.keys = xcalloc(n ? n : 1, sizeof *t.keys);
	t.key_line = xcalloc(n ? n : 1, sizeof *t.key_line);
	t.key_col = xcalloc(n ? n : 1, sizeof *t.key_col);
	for (size_t k = 0; k < n; k++) {
		struct toml_value *v = &t.items[k];
		t.keys[k] = xstrdup(kv[k].key);
		t.key_line[k] = (int)k + 2;
		t.key_col[k] = 1;
		v->type = kv[k].type;
		v->line = (int)k + 2;
		v->col = 10;
		if (v->type == TOML_STRING) {
			v->s = xstrdup(kv[k].strs[0]);
		} else if (v->type == TOML_INT) {
			v->i = kv[k].i;
		} else if (v->type == TOML_ARRAY) {
			size_t m = 0;
			while (kv[k].strs[m])
				m++;
			v->n = m;
			v->items = xcalloc(m ? m : 1, sizeof *v->items);
			for (size_t j = 0; j < m; j++)
				v->items[j] = (struct toml_value){.type = TOML_STRING,
								  .line = (int)k + 2,
								  .col = 11 + 9 * (int)j,
								  .s = xstrdup(kv[k].strs[j])};
		}
	}
	return t;
}

static void table_free(struct toml_value *t)
{
	for (size_t k = 0; k < t->n; k++) {
		struct toml_value *v = &t->items[k];
		free(v->s);
		for (size_t j = 0; j < v->n; j++)
			free(v->items[j].s);
		free(v->items);
		free(t->keys[k]);
	}
	free(t->items);
	free(t->keys);
	free(t->key_line);
	free(t->key_col);
}

#define BUILD(name, base, out, e, ...)                                                        \
	({                                                                                     \
		const struct kv kv_[] = {__VA_ARGS__};                                         \
		struct toml_value t_ = table(kv_, sizeof kv_ / sizeof *kv_);                   \
		int rc_ = profile_from_toml(name, &t_, "cfg.toml", base, out, e);              \
		table_free(&t_);                                                               \
		rc_;                                                                           \
	})

static bool has(const char *const *l, const char *s)
{
	for (size_t i = 0; l && l[i]; i++)
		if (!strcmp(l[i], s))
			return true;
	return false;
}

static size_t len(const char *const *l)
{
	size_t n = 0;
	while (l && l[n])
		n++;
	return n;
}

static void argv_is(const struct strv *v, const char *const *want)
{
	size_t n = len(want);
	if (v->n != n)
		fail_msg("argv has %zu words, want %zu (first: %s)", v->n, n, v->n ? v->v[0] : "");
	for (size_t i = 0; i < n; i++)
		assert_string_equal(v->v[i], want[i]);
}

static void new_profile(void **state)
{
	(void)state;
	struct profile *p = NULL;
	struct err e = {0};
	int rc = BUILD("myagent", NULL, &p, &e, STR("title", "My Agent"),
		       ARR("command", "myagent", "myagent-beta"),
		       ARR("skip_permission_flags", "--yolo"),
		       ARR("rw", "~/.myagent/", "~/.myagent.json"), STR("home_env", "MYAGENT_HOME"),
		       ARR("protect", "~/.myagent/hooks", "~/.myagent.json"),
		       ARR("instructions", "~/.myagent/AGENTS.md", "~/.myagent/prompts/"),
		       ARR("hide", "~/.myagent/ide/"), ARR("ro", "~/.myagentrc", "/etc/myagent.conf"),
		       ARR("private", "~/.cache/myagent/", "~/.myagent/bin/"),
		       ARR("env", "MYAGENT_*", "OPENAI_API_KEY"), ARR("setenv", "MYAGENT_SANDBOX=1"),
		       ARR("allow_domains", "api.myagent.dev", "*.myagent.dev:8443"),
		       STR("session_id_flag", "--session"), ARR("resume_id", "resume", "{id}"),
		       ARR("resume_last", "resume", "--last"), ARR("subcommands", "login", "--help"));
	if (rc < 0)
		fail_msg("%s: %s (%s)", e.path, e.what, e.hint);
	assert_string_equal(p->name, "myagent");
	assert_string_equal(p->title, "My Agent");
	assert_string_equal(p->exe[0], "myagent");
	assert_string_equal(p->exe[1], "myagent-beta");
	assert_null(p->exe[2]);
	assert_non_null(p->install); /* a default: `profiles` prints it */
	assert_string_equal(p->home_env, "MYAGENT_HOME");
	assert_null(p->copy_rules);
	assert_null(p->private_copy);
	assert_int_equal(len(p->domains), 2);

	/* it behaves like a built-in: flags only in a jail, the session flag, the resume form */
	struct strv args = STRV_INIT, out = STRV_INIT;
	strv_push(&args, "fix it");
	profile_argv(p, "/usr/bin/myagent", true, "ID1", &args, &out);
	argv_is(&out, (const char *const[]){"/usr/bin/myagent", "--yolo", "--session", "ID1",
					    "fix it", NULL});
	strv_free(&out);
	profile_argv(p, "/usr/bin/myagent", false, NULL, &args, &out);
	argv_is(&out, (const char *const[]){"/usr/bin/myagent", "fix it", NULL});
	strv_free(&out);
	assert_int_equal(profile_resume_argv(p, "myagent", true, "abc", &out), 0);
	argv_is(&out, (const char *const[]){"myagent", "--yolo", "resume", "abc", NULL});
	strv_free(&out);
	strv_free(&args);

	/* what it adds to a policy */
	struct policy pol;
	policy_init(&pol);
	pol.net = NET_ALLOW;
	struct strv env = STRV_INIT;
	strv_push(&env, "MYAGENT_KEY=s3cret");
	strv_push(&env, "OPENAI_API_KEY=k");
	strv_push(&env, "ANTHROPIC_API_KEY=other");
	profile_apply(p, "/home/u", &env, &pol);
	assert_string_equal(pol.profile, "myagent");
	assert_true(strv_contains(&pol.agent_rw, "/home/u/.myagent"));
	assert_true(strv_contains(&pol.agent_rw, "/home/u/.myagent.json"));
	assert_true(strv_contains(&pol.protect, "/home/u/.myagent/hooks"));
	assert_true(strv_contains(&pol.protect, "/home/u/.myagent/AGENTS.md"));
	assert_true(strv_contains(&pol.agent_hide, "/home/u/.myagent/ide"));
	assert_true(strv_contains(&pol.agent_private, "/home/u/.cache/myagent"));
	assert_true(strv_contains(&pol.agent_private, "/home/u/.myagent/bin"));
	assert_true(strv_contains(&pol.agent_ro, "/home/u/.myagentrc"));
	assert_true(strv_contains(&pol.agent_ro, "/etc/myagent.conf"));
	assert_true(strv_contains(&pol.env, "MYAGENT_KEY"));
	assert_true(strv_contains(&pol.env, "OPENAI_API_KEY"));
	assert_false(strv_contains(&pol.env, "ANTHROPIC_API_KEY"));
	assert_true(strv_contains(&pol.setenv, "MYAGENT_SANDBOX=1"));
	assert_true(strv_contains(&pol.allow_domains, "api.myagent.dev"));
	policy_free(&pol);
	/* home_env moves rw[0] and what is protected inside it */
	policy_init(&pol);
	strv_push(&env, "MYAGENT_HOME=/data/ma");
	profile_apply(p, "/home/u", &env, &pol);
	assert_true(strv_contains(&pol.agent_rw, "/data/ma"));
	assert_true(strv_contains(&pol.protect, "/data/ma/hooks"));
	policy_free(&pol);
	struct strv dirs = STRV_INIT;
	profile_dirs_to_make(p, "/home/u", &env, false, &dirs);
	assert_true(strv_contains(&dirs, "/data/ma/prompts"));
	assert_true(strv_contains(&dirs, "/data/ma/ide"));
	strv_free(&dirs);
	strv_free(&env);
	char *json = profile_to_json(p);
	assert_non_null(strstr(json, "\"name\": \"myagent\""));
	free(json);
	profile_free_user(p);

	/* the least a new profile needs: command and rw */
	rc = BUILD("tiny", NULL, &p, &e, STR("command", "tiny"), ARR("rw", "~/.tiny/"));
	assert_int_equal(rc, 0);
	assert_string_equal(p->title, "tiny");
	assert_null(p->skip_flags);
	assert_non_null(p->skip_note);
	assert_int_equal(profile_resume_argv(p, "tiny", true, NULL, &out), -1);
	profile_free_user(p);
}

static void extend_claude(void **state)
{
	(void)state;
	const struct profile *claude = profile_find("claude");
	assert_non_null(claude);
	struct profile *p = NULL;
	struct err e = {0};
	int rc = BUILD("claude", claude, &p, &e, ARR("command", "claude-work"),
		       ARR("rw", "~/.claude-extra/"), ARR("protect", "~/.claude-extra/hooks"),
		       ARR("allow_domains", "mcp.example.com", "api.anthropic.com"),
		       ARR("setenv", "CLAUDE_CODE_USE_BEDROCK=0"), STR("session_id_flag", ""),
		       ARR("resume_last", "--continue", "--verbose"),
		       STR("install", "the company's claude"));
	if (rc < 0)
		fail_msg("%s: %s (%s)", e.path, e.what, e.hint);
	/* lists add (no duplicates), after the built-in's */
	assert_string_equal(p->exe[0], "claude");
	assert_string_equal(p->exe[1], "claude-work");
	assert_string_equal(p->rw[0], "~/.claude/");
	assert_true(has(p->rw, "~/.claude.json"));
	assert_true(has(p->rw, "~/.claude-extra/"));
	assert_true(has(p->protect, "~/.claude/settings.json"));
	assert_true(has(p->protect, "~/.claude-extra/hooks"));
	assert_int_equal(len(p->domains), len(claude->domains) + 1);
	assert_true(has(p->domains, "mcp.example.com"));
	assert_true(has(p->setenv, "IS_SANDBOX=1"));
	assert_true(has(p->setenv, "CLAUDE_CODE_USE_BEDROCK=0"));
	assert_true(has(p->skip_flags, "--dangerously-skip-permissions"));
	/* single values replace; "" unsets; the resume forms are replaced whole */
	assert_string_equal(p->install, "the company's claude");
	assert_string_equal(p->title, claude->title);
	assert_null(p->session_flag);
	assert_int_equal(len(p->resume_last), 2);
	assert_string_equal(p->resume_last[1], "--verbose");
	assert_int_equal(len(p->resume_id), 2); /* kept */
	/* what is not a key stays the built-in's: the private copy and its rules */
	assert_ptr_equal(p->copy_rules, claude->copy_rules);
	assert_string_equal(p->private_copy, "~/.claude.json");
	assert_string_equal(p->home_env, "CLAUDE_CONFIG_DIR");
	/* the built-in itself is unchanged */
	assert_false(has(claude->rw, "~/.claude-extra/"));
	assert_non_null(claude->session_flag);
	profile_free_user(p);

	/* an empty table is the built-in again */
	rc = profile_from_toml("codex", &(struct toml_value){.type = TOML_TABLE, .line = 1,
							     .col = 1},
			       "cfg.toml", profile_find("codex"), &p, &e);
	assert_int_equal(rc, 0);
	assert_string_equal(p->exe[0], "codex");
	assert_int_equal(len(p->protect), len(profile_find("codex")->protect));
	profile_free_user(p);
}

struct bad {
	const char *name;
	bool extend; /* of claude */
	struct kv kv[3];
	size_t n;
	const char *where; /* FILE:LINE:COL */
	const char *what;  /* a part of the message */
	const char *hint;  /* a part of the hint, or NULL */
};

#define OK_NEW STR("command", "x"), ARR("rw", "~/.x/")

static const struct bad bad[] = {
	/* names */
	{"My", false, {OK_NEW}, 2, "cfg.toml:1:1", "a profile name is", NULL},
	{"-x", false, {OK_NEW}, 2, "cfg.toml:1:1", "a profile name is", NULL},
	{"a.b", false, {OK_NEW}, 2, "cfg.toml:1:1", "a profile name is", NULL},
	{"run", false, {OK_NEW}, 2, "cfg.toml:1:1", "`run` is a command of agentjail", "name"},
	{"shim", false, {OK_NEW}, 2, "cfg.toml:1:1", "a command of agentjail", NULL},
	{"config", false, {OK_NEW}, 2, "cfg.toml:1:1", "a command of agentjail", NULL},
	{"log", false, {OK_NEW}, 2, "cfg.toml:1:1", "a command of agentjail", NULL},
	{"untrust", false, {OK_NEW}, 2, "cfg.toml:1:1", "a command of agentjail", NULL},
	{"trust", false, {OK_NEW}, 2, "cfg.toml:1:1", "a command of agentjail", NULL},
	/* unknown keys, with a suggestion when one is near */
	{"x", false, {OK_NEW, ARR("allow_domain", "a.com")}, 3, "cfg.toml:4:1",
	 "unknown key `allow_domain` in [profile.x]", "did you mean `allow_domains`?"},
	{"x", false, {OK_NEW, ARR("skip_flags", "--y")}, 3, "cfg.toml:4:1", "unknown key",
	 NULL},
	{"x", false, {OK_NEW, STR("comand", "y")}, 3, "cfg.toml:4:1", "unknown key `comand`",
	 "did you mean `command`?"},
	{"x", false, {OK_NEW, STR("nothing_like_it", "y")}, 3, "cfg.toml:4:1", "unknown key",
	 "man 5 agentjail.toml"},
	/* wrong types */
	{"x", false, {OK_NEW, INT("title", 3)}, 3, "cfg.toml:4:10",
	 "`title` must be a string, not an integer", NULL},
	{"x", false, {STR("command", "x"), STR("rw", "~/.x/")}, 2, "cfg.toml:3:10",
	 "`rw` must be an array of strings, not a string", NULL},
	{"x", false, {ARR("rw", "~/.x/"), INT("command", 1)}, 2, "cfg.toml:3:10",
	 "`command` must be a string or an array of strings", NULL},
	{"x", false, {OK_NEW, {"env", TOML_BOOL, NULL, 0}}, 3, "cfg.toml:4:10",
	 "not a boolean", NULL},
	{"x", false, {OK_NEW, {"setenv", TOML_TABLE, NULL, 0}}, 3, "cfg.toml:4:10",
	 "not a table", NULL},
	/* what a new profile needs */
	{"x", false, {ARR("rw", "~/.x/")}, 1, "cfg.toml:1:1", "a new profile needs `command`",
	 "command = \"x\""},
	{"x", false, {STR("command", "x")}, 1, "cfg.toml:1:1", "a new profile needs `rw`", NULL},
	{"x", false, {STR("command", "x"), EMPTY("rw")}, 2, "cfg.toml:1:1", "needs `rw`", NULL},
	/* executables */
	{"x", false, {STR("command", "/usr/bin/x"), ARR("rw", "~/.x/")}, 2, "cfg.toml:2:10",
	 "not an executable name", NULL},
	{"x", false, {ARR("command", "x", "agentjail"), ARR("rw", "~/.x/")}, 2,
	 "cfg.toml:2:20", "not an executable name", NULL},
	{"x", false, {ARR("command", "x", "")}, 1, "cfg.toml:2:20", "an empty string", NULL},
	/* flags and subcommands */
	{"x", false, {OK_NEW, ARR("skip_permission_flags", "--a", "yolo")}, 3, "cfg.toml:4:20",
	 "\"yolo\" is not an option", NULL},
	{"x", false, {OK_NEW, STR("session_id_flag", "session")}, 3, "cfg.toml:4:10",
	 "is not an option", NULL},
	{"x", false, {OK_NEW, ARR("skip_after", "--run")}, 3, "cfg.toml:4:11",
	 "not a subcommand", NULL},
	{"x", false, {OK_NEW, STR("skip_default_subcommand", "-c")}, 3, "cfg.toml:4:10",
	 "not a subcommand", NULL},
	{"x", false, {OK_NEW, ARR("no_skip_subcommands", "a b")}, 3, "cfg.toml:4:11",
	 "not a subcommand", NULL},
	/* paths */
	{"x", false, {STR("command", "x"), ARR("rw", "~/.x/", ".x")}, 2, "cfg.toml:3:20",
	 "must start with \"~/\"", NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "~/.x/../.ssh/")}, 2, "cfg.toml:3:11",
	 "\"..\"", NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "~/")}, 2, "cfg.toml:3:11",
	 "the whole home", NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "/")}, 2, "cfg.toml:3:11", "the whole",
	 NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "/opt/x/")}, 2, "cfg.toml:3:11",
	 "`rw`: \"/opt/x/\" must start with \"~/\"", NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "~/.x/", "~/.config/")}, 2, "cfg.toml:3:20",
	 "agentjail's own configuration or state", NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "~/.config/agentjail")}, 2, "cfg.toml:3:11",
	 "agentjail's own", NULL},
	{"claude", true, {ARR("rw", "~/.local/state/agentjail/trust/")}, 1, "cfg.toml:2:11",
	 "agentjail's own", NULL},
	{"x", false, {OK_NEW, ARR("ro", "x.conf")}, 3, "cfg.toml:4:11", "must start with", NULL},
	{"x", false, {OK_NEW, ARR("protect", "~/.xy/hooks")}, 3, "cfg.toml:4:11",
	 "not inside one of the profile's `rw` paths", NULL},
	{"x", false, {OK_NEW, ARR("instructions", "~/.ssh/config")}, 3, "cfg.toml:4:11",
	 "not inside", NULL},
	{"x", false, {OK_NEW, ARR("hide", "~/.x/ide")}, 3, "cfg.toml:4:11",
	 "must be a directory", NULL},
	{"x", false, {OK_NEW, ARR("private", "~/.cache/x")}, 3, "cfg.toml:4:11",
	 "`private`: \"~/.cache/x\" must be a directory", NULL},
	{"x", false, {OK_NEW, ARR("private", "/opt/x/")}, 3, "cfg.toml:4:11",
	 "`private`: \"/opt/x/\" must start with \"~/\"", NULL},
	{"x", false, {OK_NEW, ARR("private", "~/.local/state/agentjail/")}, 3, "cfg.toml:4:11",
	 "agentjail's own", NULL},
	{"claude", true, {ARR("protect", "~/.codex/config.toml")}, 1, "cfg.toml:2:11",
	 "not inside", NULL},
	{"x", false, {STR("command", "x"), ARR("rw", "~/.x"), STR("home_env", "X_HOME")}, 3,
	 "cfg.toml:4:10", "must then be a directory", NULL},
	/* variables */
	{"x", false, {OK_NEW, STR("home_env", "1X")}, 3, "cfg.toml:4:10",
	 "not a variable name", NULL},
	{"x", false, {OK_NEW, STR("home_env", "LD_PRELOAD")}, 3, "cfg.toml:4:10",
	 "never passes LD_PRELOAD", NULL},
	{"x", false, {OK_NEW, ARR("env", "X_*", "A*B")}, 3, "cfg.toml:4:20",
	 "not a variable name or \"PREFIX*\"", NULL},
	{"x", false, {OK_NEW, ARR("env", "*")}, 3, "cfg.toml:4:11", "not a variable name", NULL},
	{"x", false, {OK_NEW, ARR("env", "BASH_ENV")}, 3, "cfg.toml:4:11",
	 "never passes BASH_ENV", NULL},
	{"x", false, {OK_NEW, ARR("env", "AGENTJAIL_NET")}, 3, "cfg.toml:4:11",
	 "never passes AGENTJAIL_NET", NULL},
	{"x", false, {OK_NEW, ARR("setenv", "NOEQUALS")}, 3, "cfg.toml:4:11",
	 "is not NAME=VALUE", NULL},
	{"x", false, {OK_NEW, ARR("setenv", "A=1", "LD_PRELOAD=/x.so")}, 3, "cfg.toml:4:20",
	 "never sets LD_PRELOAD", NULL},
	{"claude", true, {ARR("setenv", "SSH_AUTH_SOCK=/tmp/s")}, 1, "cfg.toml:2:11",
	 "never sets SSH_AUTH_SOCK", NULL},
	/* domains */
	{"x", false, {OK_NEW, ARR("allow_domains", "ok.com", "bad domain")}, 3,
	 "cfg.toml:4:20", "`allow_domains`: \"bad domain\"", NULL},
	{"x", false, {OK_NEW, ARR("allow_domains", "a.com:99999")}, 3, "cfg.toml:4:11",
	 "allow_domains", NULL},
	/* resume forms */
	{"x", false, {OK_NEW, ARR("resume_id", "--resume")}, 3, "cfg.toml:4:10",
	 "must hold \"{id}\" once", NULL},
	{"x", false, {OK_NEW, ARR("resume_id", "{id}", "{id}")}, 3, "cfg.toml:4:10",
	 "holds it 2 times", NULL},
	{"x", false, {OK_NEW, EMPTY("resume_last")}, 3, "cfg.toml:4:10",
	 "an empty command line", NULL},
	/* text shown to the user: no control characters (a terminal escape) */
	{"x", false, {OK_NEW, STR("title", "evil\033]0;x\007")}, 3, "cfg.toml:4:10",
	 "a control character", NULL},
	{"x", false, {OK_NEW, ARR("subcommands", "a\nb")}, 3, "cfg.toml:4:11",
	 "a control character", NULL},
};

static void refusals(void **state)
{
	(void)state;
	const struct profile *claude = profile_find("claude");
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		const struct bad *b = &bad[i];
		struct toml_value t = table(b->kv, b->n);
		struct profile *p = (struct profile *)1;
		struct err e = {0};
		int rc = profile_from_toml(b->name, &t, "cfg.toml", b->extend ? claude : NULL, &p,
					   &e);
		table_free(&t);
		if (rc != -1 || p)
			fail_msg("case %zu (%s): accepted", i, b->what);
		if (strcmp(e.path, b->where) || !strstr(e.what, b->what))
			fail_msg("case %zu: got \"%s: %s\", want \"%s: …%s…\"", i, e.path, e.what,
				 b->where, b->what);
		if (b->hint && !strstr(e.hint, b->hint))
			fail_msg("case %zu: hint \"%s\", want \"…%s…\"", i, e.hint, b->hint);
	}
}

static void shadowing(void **state)
{
	(void)state;
	const struct profile *builtin = profile_find("claude");
	size_t nb = len((const char *const *)(const void *)profile_all());
	struct profile *mine = NULL, *ext = NULL;
	struct err e = {0};
	assert_int_equal(BUILD("myagent", NULL, &mine, &e, STR("command", "my-agent"),
			       ARR("rw", "~/.my/")),
			 0);
	assert_int_equal(BUILD("claude", builtin, &ext, &e, ARR("allow_domains", "x.example")),
			 0);
	struct profile *const user[] = {mine, ext};
	profile_set_user(user, 2);
	const struct profile *const *all = profile_all();
	assert_int_equal(len((const char *const *)(const void *)all), nb + 1);
	assert_ptr_equal(all[0], mine);
	assert_ptr_equal(all[1], ext);
	for (size_t i = 2; all[i]; i++)
		assert_string_not_equal(all[i]->name, "claude");
	assert_ptr_equal(profile_find("claude"), ext);
	assert_ptr_equal(profile_by_exe("claude"), ext);
	assert_ptr_equal(profile_find("myagent"), mine);
	assert_ptr_equal(profile_by_exe("my-agent"), mine);
	assert_ptr_equal(profile_find("my-agent"), mine); /* by exe, as the shim does */
	assert_ptr_equal(profile_find("codex"), profile_by_exe("codex"));
	assert_non_null(profile_find("codex"));
	/* of two user profiles with one name (the system's file, then the user's), the later */
	struct profile *sys = NULL;
	assert_int_equal(BUILD("myagent", NULL, &sys, &e, STR("command", "sys-agent"),
			       ARR("rw", "~/.sys/")),
			 0);
	struct profile *const two[] = {sys, mine};
	profile_set_user(two, 2);
	assert_ptr_equal(profile_find("myagent"), mine);
	assert_null(profile_by_exe("sys-agent"));
	assert_int_equal(len((const char *const *)(const void *)profile_all()), nb + 1);
	profile_free_user(sys);
	/* cleared: the built-ins again */
	profile_set_user(NULL, 0);
	assert_ptr_equal(profile_find("claude"), builtin);
	assert_null(profile_find("myagent"));
	assert_int_equal(len((const char *const *)(const void *)profile_all()), nb);
	profile_free_user(mine);
	profile_free_user(ext);
	profile_free_user(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(new_profile),
		cmocka_unit_test(extend_claude),
		cmocka_unit_test(refusals),
		cmocka_unit_test(shadowing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
