/* --rw, --ro and --hide paths resolved over the host facts (core/plan/bindpath.h): every way a
 * path in the workspace can lead out of it, the places no jail is given, and hf_realpath
 * walking a link's `..` as the kernel does (a fixture, and a live tree against realpath(3)). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/hostfacts_probe.h"
#include "core/plan/bindpath.h"
#include "core/plan/resolve.h"
#include "util/path.h"
#include "util/xalloc.h"
#include "testutil.h"

static const char facts[] =
	"home /home/u\n"
	"cwd /home/u/proj\n"
	"state_dir /home/u/.local/state/agentjail\n"
	"config_dir /home/u/.config/agentjail\n"
	"d /home\nd /home/u\nd /home/u/proj\nd /home/u/proj/sub\nd /home/u/proj/sub/deep\n"
	"d /home/u/.ssh\nf /home/u/.ssh/known_hosts\nd /home/u/other\n"
	"d /home/u/.local\nd /home/u/.local/state\nd /home/u/.local/state/agentjail\n"
	"d /home/u/.local/state/agentjail/cache\nd /home/u/.config\n"
	"d /home/u/.config/agentjail\nd /srv\nd /srv/data\n"
	"l /home/u/proj/build ../..\n"
	"l /home/u/proj/up ..\n"
	"l /home/u/proj/sshl /home/u/.ssh\n"
	"l /home/u/proj/rootl /\n"
	"l /home/u/proj/statel /home/u/.local/state/agentjail/cache\n"
	"l /home/u/proj/cfgl ../.config/agentjail\n"
	"l /home/u/proj/inner sub\n"
	"l /home/u/proj/back ../proj/sub/deep\n"
	"l /home/u/proj/chain1 chain2\n"
	"l /home/u/proj/chain2 ../other\n"
	"l /home/u/proj/sub/hop /srv/data\n"
	"l /home/u/proj/dotdot sub/hop/..\n"
	"l /home/u/proj/dangling /nowhere\n"
	"l /home/u/wslink proj\n"
	"l /srv/tohome /home/u\n"
	"l /srv/tossh /home/u/.ssh\n";

static void load(struct hostfacts *hf) { test_load_facts(hf, facts); }

struct bcase {
	const char *opt;
	const char *given;
	const char *ws;   /* the workspace as the policy names it */
	const char *want; /* the resolved path, or NULL when refused */
	const char *err;  /* substrings of what failed (…|…), when refused */
};

static const struct bcase cases[] = {
	/* the case: the usual --fs read-only --rw build would be a writable $HOME's parent */
	{"--rw", "/home/u/proj/build", "/home/u/proj", NULL,
	 "is a symlink to ../..|leads out of the workspace, to /home"},
	{"--rw", "/home/u/proj/up", "/home/u/proj", NULL, "to /home/u"},
	/* --ro reading ~/.ssh through the workspace */
	{"--ro", "/home/u/proj/sshl", "/home/u/proj", NULL,
	 "is a symlink to /home/u/.ssh|leads out of the workspace"},
	/* a link in the middle, the last component existing or not */
	{"--ro", "/home/u/proj/sshl/known_hosts", "/home/u/proj", NULL,
	 "goes through /home/u/proj/sshl, a symlink to /home/u/.ssh"},
	{"--rw", "/home/u/proj/sshl/nothere", "/home/u/proj", NULL, "goes through /home/u/proj/sshl"},
	{"--rw", "/home/u/proj/build/u/.ssh", "/home/u/proj", NULL,
	 "goes through /home/u/proj/build"},
	{"--rw", "/home/u/proj/rootl", "/home/u/proj", NULL, "to /"},
	{"--rw", "/home/u/proj/statel", "/home/u/proj", NULL, "leads out of the workspace"},
	{"--ro", "/home/u/proj/cfgl", "/home/u/proj", NULL, "to /home/u/.config/agentjail"},
	/* a chain: the first link is named, with where the chain leads */
	{"--rw", "/home/u/proj/chain1", "/home/u/proj", NULL,
	 "is a symlink to chain2|to /home/u/other"},
	/* `..` after a link leaves the link's target, not its directory (lexically this is sub) */
	{"--rw", "/home/u/proj/dotdot", "/home/u/proj", NULL, "to /srv"},
	/* --hide too: what is hidden would not be the workspace's */
	{"--hide", "/home/u/proj/sshl", "/home/u/proj", NULL, "leads out of the workspace"},
	/* links that stay inside are followed */
	{"--rw", "/home/u/proj/inner", "/home/u/proj", "/home/u/proj/sub", NULL},
	{"--ro", "/home/u/proj/back", "/home/u/proj", "/home/u/proj/sub/deep", NULL},
	{"--hide", "/home/u/proj/inner/deep", "/home/u/proj", "/home/u/proj/sub/deep", NULL},
	/* the workspace named through a link: inside is inside either way */
	{"--rw", "/home/u/wslink/inner", "/home/u/wslink", "/home/u/proj/sub", NULL},
	{"--rw", "/home/u/wslink/sshl", "/home/u/wslink", NULL, "leads out of the workspace"},
	{"--rw", "/home/u/proj/sshl", "/home/u/wslink", NULL, "leads out of the workspace"},
	/* missing: kept as given, the existence rule is the plan's */
	{"--rw", "/home/u/proj/nothere", "/home/u/proj", "/home/u/proj/nothere", NULL},
	{"--rw", "/home/u/proj/dangling", "/home/u/proj", "/home/u/proj/dangling", NULL},
	/* named outside the workspace: the user's explicit choice, but never these places */
	{"--rw", "/srv/data", "/home/u/proj", "/srv/data", NULL},
	{"--ro", "/home/u/.ssh", "/home/u/proj", "/home/u/.ssh", NULL},
	{"--rw", "/home/u", "/home/u/proj", NULL, "your home directory or one of its ancestors"},
	{"--ro", "/home", "/home/u/proj", NULL, "your home directory or one of its ancestors"},
	{"--ro", "/", "/home/u/proj", NULL, "the root directory"},
	{"--rw", "/srv/tohome", "/home/u/proj", NULL, "leads to /home/u|your home directory"},
	{"--ro", "/srv/tossh", "/home/u/proj", "/home/u/.ssh", NULL},
	{"--rw", "/home/u/.local/state/agentjail", "/home/u/proj", NULL, "state directory"},
	{"--ro", "/home/u/.local/state/agentjail/cache", "/home/u/proj", NULL, "state directory"},
	{"--rw", "/home/u/.config/agentjail", "/home/u/proj", NULL, "configuration directory"},
	/* an ancestor of them is masked inside (bwrap_argv's add_masks), not refused */
	{"--rw", "/home/u/.local", "/home/u/proj", "/home/u/.local", NULL},
	/* hiding never widens: $HOME may be hidden */
	{"--hide", "/home/u", "/home/u/proj", "/home/u", NULL},
	/* a configuration file's key is named as such, and the fix spelled as in a file */
	{"rw", "/home/u/proj/sshl", "/home/u/proj", NULL, "rw /home/u/proj/sshl"},
};

static void resolve_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const struct bcase *c = &cases[i];
		struct hostfacts hf;
		load(&hf);
		struct err e = {0};
		char *real = NULL;
		bool never = strcmp(c->opt, "--hide") != 0;
		int rc = bindpath_resolve(&hf, c->opt, never, c->given, c->ws, &real, &e);
		char buf[ERR_FMT_MAX];
		err_format(&e, buf, sizeof buf);
		if (c->want) {
			if (rc != 0)
				fail_msg("%s %s: refused: %s", c->opt, c->given, buf);
			assert_string_equal(real, c->want);
		} else {
			if (rc == 0)
				fail_msg("%s %s: resolved to %s, not refused", c->opt, c->given, real);
			assert_null(real);
			char *want = xstrdup(c->err);
			char *save = NULL;
			for (char *w = strtok_r(want, "|", &save); w; w = strtok_r(NULL, "|", &save))
				if (!strstr(buf, w))
					fail_msg("%s %s: \"%s\" not in: %s", c->opt, c->given, w, buf);
			free(want);
		}
		free(real);
		hostfacts_free(&hf);
	}
}

/* The hint: how to name the place itself, unless no jail is given it. */
static void hints(void **state)
{
	(void)state;
	struct hostfacts hf;
	load(&hf);
	struct err e = {0};
	char *real = NULL;
	assert_int_equal(bindpath_resolve(&hf, "--ro", true, "/home/u/proj/sshl", "/home/u/proj",
					  &real, &e),
			 -1);
	assert_non_null(strstr(e.hint, "name it as it is: --ro /home/u/.ssh"));
	assert_int_equal(bindpath_resolve(&hf, "rw", true, "/home/u/proj/sshl", "/home/u/proj",
					  &real, &e),
			 -1);
	assert_non_null(strstr(e.hint, "rw = [\"/home/u/.ssh\"]"));
	assert_int_equal(bindpath_resolve(&hf, "--rw", true, "/home/u/proj/up", "/home/u/proj",
					  &real, &e),
			 -1);
	assert_null(strstr(e.hint, "name it as it is"));
	assert_non_null(strstr(e.hint, "which no jail is given"));
	hostfacts_free(&hf);
}

/* $HOME and the state dir are compared as named and as they resolve. */
static void never_forms(void **state)
{
	(void)state;
	struct hostfacts hf;
	load(&hf);
	hf_add(&hf, "/homelink", HF_SYMLINK, 0777, 0, "home");
	free(hf.home);
	hf.home = xstrdup("/homelink/u");
	assert_non_null(bindpath_never(&hf, "/home/u"));
	assert_non_null(bindpath_never(&hf, "/homelink/u"));
	assert_non_null(bindpath_never(&hf, "/home"));
	assert_null(bindpath_never(&hf, "/home/u/proj"));
	assert_null(bindpath_never(&hf, "/srv"));
	hostfacts_free(&hf);
}

/* The policy's three lists, in place; the first refusal stops. */
static void policy_lists(void **state)
{
	(void)state;
	struct hostfacts hf;
	load(&hf);
	struct policy pol;
	policy_init(&pol);
	pol.workspace = xstrdup("/home/u/proj");
	strv_push(&pol.rw, "/home/u/proj/inner");
	strv_push(&pol.ro, "/srv/tossh");
	strv_push(&pol.hide, "/home/u/proj/inner/deep");
	struct err e = {0};
	assert_int_equal(bindpath_resolve_policy(&hf, &pol, &e), 0);
	assert_string_equal(pol.rw.v[0], "/home/u/proj/sub");
	assert_string_equal(pol.ro.v[0], "/home/u/.ssh");
	assert_string_equal(pol.hide.v[0], "/home/u/proj/sub/deep");
	strv_push(&pol.ro, "/home/u/proj/build");
	assert_int_equal(bindpath_resolve_policy(&hf, &pol, &e), -1);
	assert_non_null(strstr(e.what, "--ro /home/u/proj/build"));
	policy_free(&pol);
	hostfacts_free(&hf);
}

/* hf_realpath over a live tree, read through the host probe, agrees with realpath(3). */
static void live_realpath(void **state)
{
	(void)state;
	char tmpl[] = "/tmp/aj-bindpath-live-XXXXXX";
	assert_non_null(mkdtemp(tmpl));
	char *root = realpath(tmpl, NULL);
	char p[PATH_MAX];
	static const char *const dirs[] = {"a", "a/b", "a/b/c", "t", "t/u", NULL};
	for (size_t i = 0; dirs[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	static const char *const links[][2] = {{"a/l1", "b/c/../.."}, /* plain .. : a */
					       {"a/l2", "../t/u"},
					       {"a/b/l3", "../l2/.."},   /* a/l2 -> t/u, .. -> t */
					       {"a/l4", "b/l3/u/../../a"}, /* t/u/../../a = a */
					       {"loop1", "loop2"},
					       {"loop2", "loop1"},
					       {NULL, NULL}};
	for (size_t i = 0; links[i][0]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, links[i][0]);
		assert_int_equal(symlink(links[i][1], p), 0);
	}
	static const char *const probe[] = {"a/l1", "a/l2", "a/b/l3", "a/l4", "a/b/l3/u",
					    "a/l2/../..", "loop1", "a/missing", NULL};
	struct hostfacts hf;
	hostfacts_init(&hf);
	hostfacts_use_host(&hf);
	for (size_t i = 0; probe[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, probe[i]);
		/* hf_realpath takes its argument normalized (".." in it is lexical): the links'
		 * targets are what it must walk as the kernel does */
		char *norm = path_normalize("/", p);
		char *want = realpath(norm, NULL);
		char *got = hf_realpath(&hf, norm, NULL);
		if (want)
			assert_string_equal(got, want);
		else
			assert_null(got);
		free(want);
		free(norm);
		free(got);
	}
	hostfacts_free(&hf);
	assert_int_equal(test_rm_tree(root), 0);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resolve_cases), cmocka_unit_test(hints),
		cmocka_unit_test(never_forms),	 cmocka_unit_test(policy_lists),
		cmocka_unit_test(live_realpath),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
