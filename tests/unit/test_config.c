/* config: the schema, layering and origins, the project's narrowing rules, and the host loader's
 * ownership checks and trust store (doc/design.md §8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config/config_load.h"
#include "core/config/trust.h"
#include "core/config/config.h"
#include "core/config/toml.h"
#include "testutil.h"

/* Apply text as FILE at layer: the return of config_apply (e filled on -1). */
static int apply(struct config *c, const char *file, const char *text, enum cfg_layer layer,
		 bool trusted, struct strv *widening, struct err *e)
{
	struct toml_value root;
	memset(&root, 0, sizeof root);
	if (toml_parse(text, strlen(text), file, &root, e) < 0)
		fail_msg("%s does not parse: %s %s", file, e->path, e->what);
	int rc = config_apply(c, &root, file, layer, trusted, NET_OFF, widening, e);
	toml_free(&root);
	return rc;
}

static void layering_and_origins(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	assert_int_equal(apply(&c, "/etc/s.toml",
			       "bwrap = \"/usr/bin/bwrap\"\n[policy]\nfs = \"read-only\"\n"
			       "rw = [\"/a\"]\n",
			       CFG_SYSTEM, false, &w, &e),
			 0);
	assert_int_equal(apply(&c, "/u.toml",
			       "[policy]\nfs = \"rw\"\nnet = \"allow\"\nrw = [\"/a\", \"~/b\"]\n"
			       "hosts = { \"db.local\" = \"127.0.0.1\" }\nmemory = \"4G\"\n"
			       "[agent.claude]\nnet = \"on\"\nallow_domains = [\"x.dev\"]\n",
			       CFG_USER, false, &w, &e),
			 0);
	/* a scalar of a later layer replaces, with its origin */
	assert_string_equal(c.policy.s[CK_FS].v, "workspace-write");
	assert_string_equal(c.policy.s[CK_FS].origin, "/u.toml:2");
	assert_string_equal(c.bwrap.origin, "/etc/s.toml:1");
	assert_string_equal(c.policy.s[CK_MEMORY].v, "4G");
	/* a list only grows; an entry already there is not repeated */
	const struct cfg_list *rw = &c.policy.l[CK_RW - CFG_NSCALAR];
	assert_int_equal(rw->v.n, 2);
	assert_string_equal(rw->origin.v[0], "/etc/s.toml:4");
	assert_string_equal(rw->v.v[1], "~/b");
	assert_string_equal(c.policy.l[CK_HOSTS - CFG_NSCALAR].v.v[0], "db.local=127.0.0.1");
	assert_int_equal(c.files.n, 2);

	config_apply_env(&c, NULL, "off", NULL, NULL, NULL, NULL);
	assert_string_equal(c.policy.s[CK_NET].origin, "env AGENTJAIL_NET");

	/* the base policy: [agent.NAME] over [policy], ~ expanded */
	struct policy p;
	bool fs_set, net_set;
	assert_int_equal(config_base_policy(&c, "claude", "/w", "/home/u", &p, &fs_set, &net_set,
					    &e),
			 0);
	assert_true(fs_set && net_set);
	assert_int_equal(p.net, NET_ON);
	assert_string_equal(p.rw.v[1], "/home/u/b");
	assert_string_equal(p.allow_domains.v[0], "x.dev");
	assert_int_equal(p.memory, 4ULL << 30);
	policy_free(&p);
	assert_int_equal(w.n, 0);
	strv_free(&w);
	config_free(&c);
}

static void errors_and_suggestions(void **state)
{
	(void)state;
	static const struct {
		const char *text, *where, *what, *hint;
	} cases[] = {
		{"[policy]\nallow_domain = [\"a.com\"]\n", "f:2:1", "unknown key `allow_domain` in [policy]",
		 "did you mean `allow_domains`?"},
		{"[policy]\nrw = \"/x\"\n", "f:2:6", "`rw` needs an array of strings", NULL},
		{"[policy]\nnet = \"of\"\n", "f:2:7", "expected off, on or allow", NULL},
		{"stat_dir = \"/x\"\n", "f:1:1", "unknown key `stat_dir` in the top level",
		 "did you mean `state_dir`?"},
		{"[agent.claude]\nnte = \"on\"\n", "f:2:1", "unknown key `nte` in [agent.claude]",
		 "did you mean `net`?"},
		{"[policy]\nenv = [\"LD_PRELOAD\"]\n", "f:2:8", "not a variable name", NULL},
		{"[policy]\nmemory = 5\n", "f:2:10", "at least 32M", NULL},
		{"[policy]\nallow_domains = [\"a b\"]\n", "f:2:18", "`allow_domains` entry", NULL},
		{"[policy]\npublish = [\"8080:\"]\n", "f:2:12", "`publish` entry `8080:`", NULL},
		{"[policy]\npublish = \"3000\"\n", "f:2:11", "`publish` needs an array", NULL},
		{"[policy]\nask = \"yes\"\n", "f:2:7", "`ask` needs true or false", NULL},
		{"[policy]\nask_timeout = 0\n", "f:2:15", "from 1 to 3600", NULL},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		struct config c;
		config_init(&c);
		struct strv w = STRV_INIT;
		struct err e = {0};
		assert_int_equal(apply(&c, "f", cases[i].text, CFG_USER, false, &w, &e), -1);
		if (strcmp(e.path, cases[i].where) || !strstr(e.what, cases[i].what))
			fail_msg("case %zu: got %s: %s", i, e.path, e.what);
		if (cases[i].hint)
			assert_string_equal(e.hint, cases[i].hint);
		assert_int_equal(c.files.n, 0); /* nothing of a broken file is applied */
		strv_free(&w);
		config_free(&c);
	}
}

static const char user_cfg[] = "[policy]\nnet = \"allow\"\nallow_domains = [\"github.com\"]\n"
			       "memory = \"8G\"\nallow_http = [\"GET github.com/*\"]\n";

/* Each widening key: refused (listed, left out) untrusted, applied trusted. */
static void widening_refused_unless_trusted(void **state)
{
	(void)state;
	static const char *const widen[] = {
		"[policy]\nfs = \"danger-full-access\"\n",
		"[policy]\nnet = \"on\"\n",
		"[policy]\nrw = [\"~\"]\n",
		"[policy]\nro = [\"/opt/secret\"]\n",
		"[policy]\nenv = [\"AWS_PROFILE\"]\n",
		"[policy]\nallow_domains = [\"evil.example\"]\n",
		"[policy]\nhosts = { \"x.test\" = \"127.0.0.1\" }\n",
		"[policy]\nmemory = \"unlimited\"\n",
		"[policy]\npids = 100000\n",
		"[agent.claude]\nnet = \"on\"\n",
		"[agent.claude]\nrw = [\"/srv\"]\n",
		/* issue 29: an agent that signs, a request the user's rules for a host do not allow */
		"[policy]\nssh_agent = true\n",
		"[agent.claude]\ngpg_agent = true\n",
		"[policy]\nallow_http = [\"POST github.com/*\"]\n",
		"[policy]\npublish = [\"8080:3000\"]\n",
		"[policy]\nask = true\n",
		/* a persisted home shows the jail what earlier jails left in theirs */
		"[policy]\nhome = \"persist\"\n",
		"[agent.claude]\nhome = \"persist\"\n",
	};
	for (size_t i = 0; i < sizeof widen / sizeof *widen; i++) {
		for (int trusted = 0; trusted < 2; trusted++) {
			struct config c;
			config_init(&c);
			struct strv w = STRV_INIT;
			struct err e = {0};
			assert_int_equal(apply(&c, "/u", user_cfg, CFG_USER, false, &w, &e), 0);
			assert_int_equal(apply(&c, "/w/.agentjail.toml", widen[i], CFG_PROJECT,
					       trusted, &w, &e),
					 0);
			if (trusted != (w.n == 0))
				fail_msg("case %zu (%s), trusted %d: %zu widening", i, widen[i],
					 trusted, w.n);
			if (!trusted)
				assert_non_null(strstr(w.v[0], "/w/.agentjail.toml:2: `"));
			struct policy p;
			bool fs_set, net_set;
			assert_int_equal(config_base_policy(&c, "claude", "/w", "/h", &p, &fs_set,
							    &net_set, &e),
					 0);
			bool widened = p.fs == FS_DANGER_FULL || p.net == NET_ON || p.rw.n ||
				       p.ro.n || p.env.n || p.allow_domains.n > 1 ||
				       p.map_hosts.n || p.memory == UINT64_MAX || p.pids ||
				       p.ssh_agent || p.gpg_agent || p.allow_http.n > 1 ||
				       p.publish.n || p.ask || p.home == HOME_PERSIST;
			if (widened != (bool)trusted)
				fail_msg("case %zu trusted %d: widened %d", i, trusted, widened);
			policy_free(&p);
			strv_free(&w);
			config_free(&c);
		}
	}
}

/* What narrows is accepted from an untrusted project. */
static void narrowing_accepted(void **state)
{
	(void)state;
	static const char *const narrow[] = {
		"[policy]\nfs = \"read-only\"\n",
		"[policy]\nnet = \"off\"\n",
		"[policy]\nnet = \"allow\"\n", /* the user's own net is allow */
		"[policy]\nhide = [\"secrets\", \"~/.aws\"]\n",
		"[policy]\ndeny_domains = [\"api.github.com\"]\n",
		"[policy]\nallow_domains = [\"github.com\"]\n", /* a subset of the user's */
		"[policy]\nmemory = \"2G\"\n",
		"[agent.claude]\nnet = \"off\"\n",
		/* issue 29: rules for a host the user has none for narrow it; the user's own */
		"[policy]\nallow_http = [\"GET pypi.org/simple/*\", \"GET github.com/*\"]\n",
		"[policy]\nssh_agent = false\n",
		"[policy]\nask = false\nask_timeout = 3600\n",
		"[policy]\nhome = \"tmp\"\n",
	};
	for (size_t i = 0; i < sizeof narrow / sizeof *narrow; i++) {
		struct config c;
		config_init(&c);
		struct strv w = STRV_INIT;
		struct err e = {0};
		assert_int_equal(apply(&c, "/u", user_cfg, CFG_USER, false, &w, &e), 0);
		assert_int_equal(apply(&c, "/w/.agentjail.toml", narrow[i], CFG_PROJECT, false,
				       &w, &e),
				 0);
		if (w.n)
			fail_msg("case %zu: refused: %s", i, w.v[0]);
		strv_free(&w);
		config_free(&c);
	}
	/* allow with any domains is narrower than the user's net = on */
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	assert_int_equal(apply(&c, "/u", "[policy]\nnet = \"on\"\n", CFG_USER, false, &w, &e), 0);
	assert_int_equal(apply(&c, "/w/.agentjail.toml",
			       "[policy]\nnet = \"allow\"\nallow_domains = [\"a.dev\"]\n",
			       CFG_PROJECT, false, &w, &e),
			 0);
	assert_int_equal(w.n, 0);
	strv_free(&w);
	config_free(&c);
}

/* bwrap, state_dir, [profile.*] and devices: never from a project, trusted or not. */
static void never_from_project(void **state)
{
	(void)state;
	static const char *const never[] = {
		"bwrap = \"/tmp/bwrap\"\n",
		"state_dir = \"/tmp/s\"\n",
		"[profile.evil]\ncommand = \"sh\"\n",
		"[policy]\ndevices = [\"/dev/sda\"]\n",
		"[agent.claude]\ndevices = [\"/dev/kvm\"]\n",
		/* a project must not choose where the workspace is sent (issue 18) */
		"backend = \"opensandbox\"\n",
		"[opensandbox]\nurl = \"http://attacker.example\"\n",
		/* a project that shared the caches would write where other projects' jails read
		 * (issue 24) */
		"cache = \"shared\"\n",
		"cache = \"workspace\"\n",
		/* a project must not choose where a key goes (issue 29) */
		"[secret.ANTHROPIC_API_KEY]\nhosts = [\"evil.example\"]\nheader = \"x-api-key\"\n",
	};
	for (size_t i = 0; i < sizeof never / sizeof *never; i++) {
		struct config c;
		config_init(&c);
		struct strv w = STRV_INIT;
		struct err e = {0};
		assert_int_equal(apply(&c, "/w/.agentjail.toml", never[i], CFG_PROJECT, true, &w,
				       &e),
				 -1);
		if (!strstr(e.what, "may never be set in a project"))
			fail_msg("case %zu: %s", i, e.what);
		assert_null(c.bwrap.v);
		assert_null(c.state_dir.v);
		strv_free(&w);
		config_free(&c);
	}
}

/* Each text, as the user's file, is an error whose message or hint holds the second string. */
static void user_file_errors(struct config *c, const char *const (*bad)[2], size_t n)
{
	struct strv w = STRV_INIT;
	for (size_t i = 0; i < n; i++) {
		struct err e2 = {0};
		assert_int_equal(apply(c, "/u/config.toml", bad[i][0], CFG_USER, false, &w, &e2), -1);
		if (!strstr(e2.what, bad[i][1]) && !strstr(e2.hint, bad[i][1]))
			fail_msg("case %zu: %s (%s)", i, e2.what, e2.hint);
	}
	strv_free(&w);
}

/* backend and [opensandbox] (doc/design.md §4b): values checked, origins kept, rendered. */
static void opensandbox_keys(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	assert_int_equal(apply(&c, "/u/config.toml",
			       "backend = \"opensandbox\"\n[opensandbox]\nurl = \"http://svc:8080\"\n"
			       "api_key_env = \"MY_KEY\"\ntimeout = 600\ncpu = \"500m\"\n",
			       CFG_USER, false, &w, &e),
			 0);
	assert_string_equal(c.backend.v, "opensandbox");
	assert_string_equal(c.osb[OK_URL].v, "http://svc:8080");
	assert_string_equal(c.osb[OK_URL].origin, "/u/config.toml:3");
	assert_string_equal(c.osb[OK_TIMEOUT].v, "600");
	char *txt = config_render(&c, false);
	assert_non_null(strstr(txt, "opensandbox.api_key_env = MY_KEY\t# /u/config.toml:4"));
	free(txt);
	static const char *const bad[][2] = {
		{"backend = \"docker\"\n", "must be local, landlock or opensandbox"},
		{"[opensandbox]\nuri = \"http://x\"\n", "did you mean `url`"},
		{"[opensandbox]\napi_key_env = \"sk-live-123\"\n", "never the key itself"},
		{"[opensandbox]\ntimeout = 5\n", "at least 60"},
		{"[opensandbox]\ntimeout = 86401\n", "at most 86400"},
		{"[opensandbox]\nurl = \"ftp://x\"\n", "http://"},
	};
	user_file_errors(&c, bad, sizeof bad / sizeof *bad);
	strv_free(&w);
	config_free(&c);
}

/* cache (doc/design.md §3 step 5): workspace or shared, from the user's file, into the base
 * policy; anything else is an error at its line. */
static void cache_key(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	struct policy p;
	bool fs_set, net_set;
	assert_int_equal(config_base_policy(&c, NULL, "/w", "/u", &p, &fs_set, &net_set, &e), 0);
	assert_int_equal(p.cache, CACHE_WORKSPACE);
	policy_free(&p);
	char *txt = config_render(&c, false);
	assert_non_null(strstr(txt, "cache = workspace\t# default"));
	free(txt);
	assert_int_equal(apply(&c, "/u/config.toml", "cache = \"shared\"\n", CFG_USER, false, &w, &e),
			 0);
	assert_int_equal(config_base_policy(&c, NULL, "/w", "/u", &p, &fs_set, &net_set, &e), 0);
	assert_int_equal(p.cache, CACHE_SHARED);
	p.workspace = strdup("/w");
	char *pj = policy_to_json(&p);
	assert_non_null(strstr(pj, "\"cache\":\"shared\""));
	struct policy back;
	assert_int_equal(policy_from_json(pj, &back, &e), 0);
	assert_int_equal(back.cache, CACHE_SHARED);
	policy_free(&back);
	free(pj);
	policy_free(&p);
	txt = config_render(&c, false);
	assert_non_null(strstr(txt, "cache = shared\t# /u/config.toml:1"));
	free(txt);
	static const char *const bad[][2] = {
		{"cache = \"global\"\n", "must be workspace or shared"},
		{"cache = true\n", "a string (workspace or shared)"},
		{"cahce = \"shared\"\n", "did you mean `cache`"},
	};
	user_file_errors(&c, bad, sizeof bad / sizeof *bad);
	strv_free(&w);
	config_free(&c);
}

/* [secret.NAME] in the user's file: defined with its origin, a later file replaces a name,
 * the base policy carries the definitions (which are used is decided at the run). */
static void secret_tables(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	assert_int_equal(apply(&c, "/etc/s.toml",
			       "[secret.GH_TOKEN]\nhosts = [\"api.github.com\"]\n"
			       "header = \"Authorization\"\n",
			       CFG_SYSTEM, false, &w, &e),
			 0);
	assert_int_equal(apply(&c, "/u.toml",
			       "[secret.GH_TOKEN]\nhosts = [\"api.github.com\", \"*.github.com\"]\n"
			       "header = \"Authorization\"\ncommand = [\"pass\", \"gh\"]\n"
			       "[secret.ANTHROPIC_API_KEY]\nhosts = [\"api.anthropic.test\"]\n"
			       "header = \"x-api-key\"\nenv = \"MY_ANTHROPIC_KEY\"\n"
			       "[policy]\nssh_agent = true\n",
			       CFG_USER, false, &w, &e),
			 0);
	assert_int_equal(c.secrets.n, 2);
	const struct secret_def *gh = secret_set_find(&c.secrets, "GH_TOKEN");
	assert_int_equal(gh->src, SS_COMMAND);
	assert_string_equal(gh->origin, "/u.toml:1");
	assert_int_equal(gh->hosts.n, 2);
	assert_string_equal(secret_set_find(&c.secrets, "ANTHROPIC_API_KEY")->env,
			    "MY_ANTHROPIC_KEY");
	struct policy p;
	bool fs_set, net_set;
	assert_int_equal(config_base_policy(&c, NULL, "/w", "/h", &p, &fs_set, &net_set, &e), 0);
	assert_int_equal(p.secrets.n, 2);
	assert_true(p.ssh_agent);
	policy_free(&p);
	char *txt = config_render(&c, false);
	assert_non_null(strstr(txt, "secret.GH_TOKEN → api.github.com, *.github.com in "
				    "authorization, value from the command `pass gh` (/u.toml:1)"));
	free(txt);
	static const char *const bad[][2] = {
		{"[secret.X]\nheader = \"x\"\n", "names no host"},
		{"[secret.X]\nhosts = [\"a.example\"]\n", "header"},
		{"[secret.X]\nhosts = [\"a.example:443\"]\nheader = \"x\"\n", "a port"},
		{"[secret.X]\nhosts = [\"a.example\"]\nheader = \"x\"\nvalue = \"sk\"\n",
		 "unknown key `value`"},
		{"[secret.X]\nhosts = [\"a.example\"]\nheader = \"x\"\nenv = \"A\"\n"
		 "command = [\"b\"]\n", "both"},
		{"[secret.1X]\nhosts = [\"a.example\"]\nheader = \"x\"\n", "name"},
		{"[policy]\nssh_agent = \"yes\"\n", "true or false"},
		{"[policy]\nallow_http = [\"GET github.com\"]\n", "host and a path"},
	};
	user_file_errors(&c, bad, sizeof bad / sizeof *bad);
	strv_free(&w);
	config_free(&c);
}

/* home (doc/design.md §3 step 5): tmp or persist, per [policy] and per agent, into the base
 * policy and the stored one; a project may keep the user's persist, never choose it. */
static void home_key(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	struct policy p;
	bool fs_set, net_set;
	char *txt = config_render(&c, false);
	assert_non_null(strstr(txt, "policy.home = tmp\t# default"));
	free(txt);
	assert_int_equal(apply(&c, "/u/config.toml", "[agent.codex]\nhome = \"persist\"\n", CFG_USER,
			       false, &w, &e),
			 0);
	assert_int_equal(config_base_policy(&c, "claude", "/w", "/u", &p, &fs_set, &net_set, &e), 0);
	assert_int_equal(p.home, HOME_TMP); /* another agent's */
	policy_free(&p);
	assert_int_equal(config_base_policy(&c, "codex", "/w", "/u", &p, &fs_set, &net_set, &e), 0);
	assert_int_equal(p.home, HOME_PERSIST);
	p.workspace = strdup("/w");
	char *pj = policy_to_json(&p);
	assert_non_null(strstr(pj, "\"home\":\"persist\""));
	struct policy back;
	assert_int_equal(policy_from_json(pj, &back, &e), 0);
	assert_int_equal(back.home, HOME_PERSIST);
	policy_free(&back);
	free(pj);
	policy_free(&p);
	txt = config_render(&c, false);
	assert_non_null(strstr(txt, "agent.codex.home = persist\t# /u/config.toml:2"));
	free(txt);
	/* the user's persist: an untrusted project may keep it, or narrow it to tmp */
	assert_int_equal(apply(&c, "/w/.agentjail.toml", "[agent.codex]\nhome = \"persist\"\n",
			       CFG_PROJECT, false, &w, &e),
			 0);
	assert_int_equal(w.n, 0);
	assert_int_equal(apply(&c, "/w/.agentjail.toml", "[agent.codex]\nhome = \"tmp\"\n",
			       CFG_PROJECT, false, &w, &e),
			 0);
	assert_int_equal(config_base_policy(&c, "codex", "/w", "/u", &p, &fs_set, &net_set, &e), 0);
	assert_int_equal(p.home, HOME_TMP);
	policy_free(&p);
	/* … but not choose it where the user did not */
	assert_int_equal(apply(&c, "/w/.agentjail.toml", "[policy]\nhome = \"persist\"\n",
			       CFG_PROJECT, false, &w, &e),
			 0);
	assert_int_equal(w.n, 1);
	assert_non_null(strstr(w.v[0], "/w/.agentjail.toml:2: `home = persist` in [policy] keeps the "
				       "jail's home between runs"));
	assert_non_null(strstr(w.v[0], "(yours: tmp)"));
	static const char *const bad[][2] = {
		{"[policy]\nhome = \"keep\"\n", "expected tmp or persist"},
		{"[policy]\nhome = 1\n", "a string (tmp or persist)"},
		{"[policy]\nhmoe = \"tmp\"\n", "did you mean `home`"},
	};
	user_file_errors(&c, bad, sizeof bad / sizeof *bad);
	strv_free(&w);
	config_free(&c);
}

static void unknown_agent(void **state)
{
	(void)state;
	struct config c;
	config_init(&c);
	struct strv w = STRV_INIT;
	struct err e = {0};
	assert_int_equal(apply(&c, "f", "[agent.cluade]\nnet = \"on\"\n", CFG_USER, false, &w, &e),
			 0);
	static const char *const names[] = {"claude", "codex", NULL};
	assert_int_equal(config_check_agents(&c, names, &e), -1);
	assert_string_equal(e.path, "f:1:8");
	assert_string_equal(e.hint, "did you mean [agent.claude]?");
	strv_free(&w);
	config_free(&c);
}

/* ---- the host loader, on temporary files ---- */

struct tmp {
	char root[64];
	char home[128], xdg[128], state[128], ws[128], sys[128];
};

static void tmp_make(struct tmp *t)
{
	strcpy(t->root, "/tmp/aj-test-config-XXXXXX");
	assert_non_null(mkdtemp(t->root));
	assert_int_equal(chmod(t->root, 0755), 0);
	snprintf(t->home, sizeof t->home, "%s/home", t->root);
	snprintf(t->xdg, sizeof t->xdg, "%s/home/.config", t->root);
	snprintf(t->state, sizeof t->state, "%s/state", t->root);
	snprintf(t->ws, sizeof t->ws, "%s/ws", t->root);
	snprintf(t->sys, sizeof t->sys, "%s/sys/config.toml", t->root);
	test_put(t->root, "home/.config/agentjail", NULL);
	test_put(t->root, "ws", NULL);
	test_put(t->root, "sys", NULL);
	const char *dirs[] = {t->home, t->xdg, t->ws, NULL};
	for (size_t i = 0; dirs[i]; i++)
		assert_int_equal(chmod(dirs[i], 0755), 0);
}

static int load(struct tmp *t, struct config *c, struct config_loaded *r, struct err *e)
{
	struct config_env env = {.home = t->home, .xdg_config_home = t->xdg,
				 .env_state_dir = t->state, .system_file = t->sys,
				 .workspace = t->ws, .net_default = NET_OFF};
	config_init(c);
	return config_load(c, &env, r, e);
}

static void put_mode(const char *base, const char *rel, const char *text, mode_t mode)
{
	test_put(base, rel, text);
	char p[512];
	snprintf(p, sizeof p, "%s/%s", base, rel);
	assert_int_equal(chmod(p, mode), 0);
}

static void loader_refuses_writable_or_foreign(void **state)
{
	(void)state;
	struct tmp t;
	tmp_make(&t);
	struct config c;
	struct config_loaded r;
	struct err e = {0};
	/* nothing there: nothing read, no error */
	assert_int_equal(load(&t, &c, &r, &e), 0);
	assert_int_equal(c.files.n, 0);
	assert_int_equal(r.considered.n, 3);
	config_free(&c);
	config_loaded_free(&r);

	put_mode(t.xdg, "agentjail/config.toml", "[policy]\nfs = \"ro\"\n", 0664);
	assert_int_equal(load(&t, &c, &r, &e), -1);
	assert_non_null(strstr(e.what, "writable by its group"));
	assert_non_null(strstr(e.hint, "chmod go-w"));
	config_free(&c);
	config_loaded_free(&r);

	put_mode(t.xdg, "agentjail/config.toml", "[policy]\nfs = \"ro\"\n", 0644);
	char d[256];
	snprintf(d, sizeof d, "%s/agentjail", t.xdg);
	assert_int_equal(chmod(d, 0777), 0); /* its directory writable by others */
	assert_int_equal(load(&t, &c, &r, &e), -1);
	assert_string_equal(e.path, d);
	config_free(&c);
	config_loaded_free(&r);
	assert_int_equal(chmod(d, 0755), 0);

	if (geteuid() == 0) { /* a file of another user: only root can make one here */
		put_mode(t.root, "sys/config.toml", "[policy]\nnet = \"on\"\n", 0644);
		assert_int_equal(chown(t.sys, 65534, 65534), 0);
		assert_int_equal(load(&t, &c, &r, &e), -1);
		assert_non_null(strstr(e.what, "owned by uid 65534"));
		config_free(&c);
		config_loaded_free(&r);
		assert_int_equal(unlink(t.sys), 0);
	} else {
		print_message("# skip: a file of another user needs root\n");
	}

	/* a project file too large to be a configuration is refused before it is parsed (1 MiB
	 * of keys cost 20 s of CPU in the parser, on every run in that directory) */
	size_t big = (64 << 10) + 1;
	char *huge = malloc(big + 1);
	assert_non_null(huge);
	memset(huge, '#', big);
	huge[big] = '\0';
	put_mode(t.ws, ".agentjail.toml", huge, 0644);
	free(huge);
	assert_int_equal(load(&t, &c, &r, &e), -1);
	assert_non_null(strstr(e.what, "larger than 64 KiB"));
	config_free(&c);
	config_loaded_free(&r);

	/* a syntax error names FILE:LINE:COL */
	put_mode(t.ws, ".agentjail.toml", "[policy]\nnet = \n", 0644);
	assert_int_equal(load(&t, &c, &r, &e), -1);
	assert_non_null(strstr(e.path, "/ws/.agentjail.toml:2:"));
	config_free(&c);
	config_loaded_free(&r);
	assert_int_equal(test_rm_tree(t.root), 0);
}

static void trust_until_edited(void **state)
{
	(void)state;
	struct tmp t;
	tmp_make(&t);
	struct config c;
	struct config_loaded r;
	struct err e = {0};
	put_mode(t.ws, ".agentjail.toml", "[policy]\nrw = [\"~\"]\n", 0644);
	assert_int_equal(load(&t, &c, &r, &e), 0);
	assert_false(r.project_trusted);
	assert_int_equal(r.widening.n, 1);
	assert_int_equal(trust_add(r.state_dir, r.project, r.hash, &e), 0);
	config_free(&c);
	config_loaded_free(&r);

	char store[256];
	snprintf(store, sizeof store, "%s/trusted", t.state);
	struct stat st;
	assert_int_equal(stat(store, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	assert_int_equal(load(&t, &c, &r, &e), 0);
	assert_true(r.project_trusted);
	assert_int_equal(r.widening.n, 0);
	assert_int_equal(c.policy.l[CK_RW - CFG_NSCALAR].v.n, 1);
	config_free(&c);
	config_loaded_free(&r);

	/* edited: untrusted again */
	put_mode(t.ws, ".agentjail.toml", "[policy]\nrw = [\"~\", \"/srv\"]\n", 0644);
	assert_int_equal(load(&t, &c, &r, &e), 0);
	assert_false(r.project_trusted);
	assert_int_equal(r.widening.n, 2);
	assert_int_equal(trust_remove(r.state_dir, r.project, &e), 1);
	assert_int_equal(trust_remove(r.state_dir, r.project, &e), 0);
	config_free(&c);
	config_loaded_free(&r);

	/* a trust store someone else could write is not believed */
	assert_int_equal(chmod(store, 0666), 0);
	bool ok = true;
	assert_int_equal(trust_lookup(t.state, "/x", "00", &ok, &e), -1);
	assert_int_equal(test_rm_tree(t.root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layering_and_origins),
		cmocka_unit_test(errors_and_suggestions),
		cmocka_unit_test(widening_refused_unless_trusted),
		cmocka_unit_test(narrowing_accepted),
		cmocka_unit_test(never_from_project),
		cmocka_unit_test(opensandbox_keys),
		cmocka_unit_test(cache_key),
		cmocka_unit_test(secret_tables),
		cmocka_unit_test(home_key),
		cmocka_unit_test(unknown_agent),
		cmocka_unit_test(loader_refuses_writable_or_foreign),
		cmocka_unit_test(trust_until_edited),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
