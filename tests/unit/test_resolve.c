/* Command resolution for real install layouts: fixtures with symlinks and "#!" lines, and one
 * live tree on disk read through the host probe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/host/hostfacts_probe.h"
#include "core/plan/resolve.h"
#include "testutil.h"

static void load(struct hostfacts *hf, const char *text) { test_load_facts(hf, text); }

static const char base[] = "home /home/u\n"
			   "cwd /home/u/proj\n"
			   "d /home\nd /home/u\nd /home/u/proj\n"
			   "d /usr\nd /usr/bin\nd /usr/local\nd /usr/local/bin\n"
			   "f /usr/bin/node 0755\nf /usr/bin/bash 0755\nf /usr/bin/env 0755\n"
			   "d /home/u/.local\nd /home/u/.local/bin\nd /home/u/.local/share\n";

struct layout {
	const char *name;
	const char *facts; /* appended to base */
	const char *path;  /* PATH */
	const char *cmd;
	const char *skip;  /* skip_real */
	int rc;
	const char *want_path, *want_real, *want_interp;
	const char *binds; /* space separated, in order */
	const char *links; /* "LINK>TARGET" space separated */
	const char *err;   /* substring of the error when rc < 0 */
};

static const struct layout layouts[] = {
	{"native installer: ~/.local/bin link to versions/V (one binary)",
	 "d /home/u/.local/share/claude\nd /home/u/.local/share/claude/versions\n"
	 "f /home/u/.local/share/claude/versions/2.0.14 0755\n"
	 "f /home/u/.local/share/claude/versions/1.9.0 0755\n"
	 "l /home/u/.local/bin/claude /home/u/.local/share/claude/versions/2.0.14\n",
	 "/home/u/.local/bin:/usr/bin", "claude", NULL, 0, "/home/u/.local/bin/claude",
	 "/home/u/.local/share/claude/versions/2.0.14", NULL,
	 "/home/u/.local/share/claude/versions/2.0.14",
	 "/home/u/.local/bin/claude>/home/u/.local/share/claude/versions/2.0.14", NULL},
	{"npm global prefix under $HOME, #!/usr/bin/env node with the system node",
	 "d /home/u/.npm-global\nd /home/u/.npm-global/bin\nd /home/u/.npm-global/lib\n"
	 "d /home/u/.npm-global/lib/node_modules\n"
	 "d /home/u/.npm-global/lib/node_modules/@openai\n"
	 "d /home/u/.npm-global/lib/node_modules/@openai/codex\n"
	 "d /home/u/.npm-global/lib/node_modules/@openai/codex/bin\n"
	 "f /home/u/.npm-global/lib/node_modules/@openai/codex/bin/codex.js 0755\n"
	 "head /home/u/.npm-global/lib/node_modules/@openai/codex/bin/codex.js #!/usr/bin/env node\n"
	 "l /home/u/.npm-global/bin/codex ../lib/node_modules/@openai/codex/bin/codex.js\n",
	 "/home/u/.npm-global/bin:/usr/bin", "codex", NULL, 0, "/home/u/.npm-global/bin/codex",
	 "/home/u/.npm-global/lib/node_modules/@openai/codex/bin/codex.js", "/usr/bin/node",
	 "/home/u/.npm-global/lib/node_modules/@openai/codex",
	 "/home/u/.npm-global/bin/codex>../lib/node_modules/@openai/codex/bin/codex.js", NULL},
	{"nvm: the package and one node version",
	 "d /home/u/.nvm\nd /home/u/.nvm/versions\nd /home/u/.nvm/versions/node\n"
	 "d /home/u/.nvm/versions/node/v20.1.0\nd /home/u/.nvm/versions/node/v20.1.0/bin\n"
	 "d /home/u/.nvm/versions/node/v18.0.0\n"
	 "f /home/u/.nvm/versions/node/v20.1.0/bin/node 0755\n"
	 "d /home/u/.nvm/versions/node/v20.1.0/lib\n"
	 "d /home/u/.nvm/versions/node/v20.1.0/lib/node_modules\n"
	 "d /home/u/.nvm/versions/node/v20.1.0/lib/node_modules/@google\n"
	 "d /home/u/.nvm/versions/node/v20.1.0/lib/node_modules/@google/gemini-cli\n"
	 "d /home/u/.nvm/versions/node/v20.1.0/lib/node_modules/@google/gemini-cli/dist\n"
	 "f /home/u/.nvm/versions/node/v20.1.0/lib/node_modules/@google/gemini-cli/dist/index.js "
	 "0755\n"
	 "head /home/u/.nvm/versions/node/v20.1.0/lib/node_modules/@google/gemini-cli/dist/index.js "
	 "#!/usr/bin/env node\n"
	 "l /home/u/.nvm/versions/node/v20.1.0/bin/gemini "
	 "../lib/node_modules/@google/gemini-cli/dist/index.js\n",
	 "/home/u/.nvm/versions/node/v20.1.0/bin:/usr/bin", "gemini", NULL, 0,
	 "/home/u/.nvm/versions/node/v20.1.0/bin/gemini",
	 "/home/u/.nvm/versions/node/v20.1.0/lib/node_modules/@google/gemini-cli/dist/index.js",
	 "/home/u/.nvm/versions/node/v20.1.0/bin/node",
	 /* nvm (core/plan/toolmgr): the node version that holds the package, package included */
	 "/home/u/.nvm/versions/node/v20.1.0",
	 "/home/u/.nvm/versions/node/v20.1.0/bin/gemini>"
	 "../lib/node_modules/@google/gemini-cli/dist/index.js",
	 NULL},
	{"fnm: PATH through a symlinked multishell directory",
	 "d /home/u/.local/state\nd /home/u/.local/state/fnm_multishells\n"
	 "l /home/u/.local/state/fnm_multishells/7_1 "
	 "/home/u/.local/share/fnm/node-versions/v22.0.0/installation\n"
	 "d /home/u/.local/share/fnm\nd /home/u/.local/share/fnm/node-versions\n"
	 "d /home/u/.local/share/fnm/node-versions/v22.0.0\n"
	 "d /home/u/.local/share/fnm/node-versions/v22.0.0/installation\n"
	 "d /home/u/.local/share/fnm/node-versions/v22.0.0/installation/bin\n"
	 "f /home/u/.local/share/fnm/node-versions/v22.0.0/installation/bin/pi 0755\n"
	 "head /home/u/.local/share/fnm/node-versions/v22.0.0/installation/bin/pi "
	 "#!/usr/bin/env -S node --no-warnings\n"
	 "f /home/u/.local/share/fnm/node-versions/v22.0.0/installation/bin/node 0755\n",
	 "/home/u/.local/state/fnm_multishells/7_1/bin", "pi", NULL, 0,
	 "/home/u/.local/state/fnm_multishells/7_1/bin/pi",
	 "/home/u/.local/share/fnm/node-versions/v22.0.0/installation/bin/pi",
	 "/home/u/.local/share/fnm/node-versions/v22.0.0/installation/bin/node",
	 /* fnm (core/plan/toolmgr): the whole node version (npm lives in its lib/) */
	 "/home/u/.local/share/fnm/node-versions/v22.0.0",
	 "/home/u/.local/state/fnm_multishells/7_1>"
	 "/home/u/.local/share/fnm/node-versions/v22.0.0/installation",
	 NULL},
	{"volta: a shim binary that reads its tools tree",
	 "d /home/u/.volta\nd /home/u/.volta/bin\nd /home/u/.volta/tools\nd /home/u/.volta/log\n"
	 "f /home/u/.volta/bin/claude 0755\n",
	 "/home/u/.volta/bin:/usr/bin", "claude", NULL, 0, "/home/u/.volta/bin/claude",
	 "/home/u/.volta/bin/claude", NULL, "/home/u/.volta/bin /home/u/.volta/tools", "", NULL},
	{"asdf: a bash shim, the data dir and the global .tool-versions",
	 "d /home/u/.asdf\nd /home/u/.asdf/shims\nf /home/u/.tool-versions 0644\n"
	 "f /home/u/.asdf/shims/codex 0755\n"
	 "head /home/u/.asdf/shims/codex #!/usr/bin/env bash\n",
	 "/home/u/.asdf/shims:/usr/bin", "codex", NULL, 0, "/home/u/.asdf/shims/codex",
	 "/home/u/.asdf/shims/codex", "/usr/bin/bash", "/home/u/.asdf /home/u/.tool-versions", "",
	 NULL},
	{"a shim (agentjail itself) first on PATH is passed over",
	 "d /home/u/.local/share/agentjail\nd /home/u/.local/share/agentjail/bin\n"
	 "f /usr/local/bin/agentjail 0755\n"
	 "l /home/u/.local/share/agentjail/bin/claude /usr/local/bin/agentjail\n"
	 "f /usr/bin/claude 0755\n",
	 "/home/u/.local/share/agentjail/bin:/usr/bin", "claude", "/usr/local/bin/agentjail", 0,
	 "/usr/bin/claude", "/usr/bin/claude", NULL, "", "", NULL},
	{"only the shim: not found",
	 "d /home/u/.local/share/agentjail\nd /home/u/.local/share/agentjail/bin\n"
	 "f /usr/local/bin/agentjail 0755\n"
	 "l /home/u/.local/share/agentjail/bin/claude /usr/local/bin/agentjail\n",
	 "/home/u/.local/share/agentjail/bin:/usr/bin", "claude", "/usr/local/bin/agentjail", -1,
	 NULL, NULL, NULL, NULL, NULL, "command not found on PATH"},
	{"a script whose interpreter is missing",
	 "f /home/u/.local/bin/tool 0755\nhead /home/u/.local/bin/tool #!/usr/bin/env deno\n",
	 "/home/u/.local/bin:/usr/bin", "tool", NULL, -1, NULL, NULL, NULL, NULL, NULL,
	 "is a script for `deno`, which is not on PATH"},
	{"a script naming a missing absolute interpreter",
	 "f /home/u/.local/bin/tool 0755\nhead /home/u/.local/bin/tool #!/opt/py/bin/python3 -u\n",
	 "/home/u/.local/bin:/usr/bin", "tool", NULL, -1, NULL, NULL, NULL, NULL, NULL,
	 "`/opt/py/bin/python3`, which does not exist"},
	{"a symlink loop is not found",
	 "l /home/u/.local/bin/loop /home/u/.local/bin/loop2\n"
	 "l /home/u/.local/bin/loop2 /home/u/.local/bin/loop\n",
	 "/home/u/.local/bin", "loop", NULL, -1, NULL, NULL, NULL, NULL, NULL, "not found"},
	{"a file without an execute bit is skipped",
	 "f /home/u/.local/bin/tool 0644\nf /usr/bin/tool 0755\n",
	 "/home/u/.local/bin:/usr/bin", "tool", NULL, 0, "/usr/bin/tool", "/usr/bin/tool", NULL, "",
	 "", NULL},
	{"relative PATH entries are ignored; a path is taken relative to the cwd",
	 "d /home/u/proj/bin\nf /home/u/proj/bin/run 0755\n", ".:bin", "./bin/run", NULL, 0,
	 "/home/u/proj/bin/run", "/home/u/proj/bin/run", NULL, "/home/u/proj/bin", "", NULL},
	{"a tool tree outside $HOME and the system dirs is shown; /usr is not",
	 "d /srv\nd /srv/tools\nd /srv/tools/bin\nf /srv/tools/bin/agent 0755\n"
	 "head /srv/tools/bin/agent #!/usr/bin/env node\n"
	 "l /home/u/.local/bin/agent /srv/tools/bin/agent\n",
	 "/home/u/.local/bin:/usr/bin", "agent", NULL, 0, "/home/u/.local/bin/agent",
	 "/srv/tools/bin/agent", "/usr/bin/node", "/srv/tools/bin",
	 "/home/u/.local/bin/agent>/srv/tools/bin/agent", NULL},
	{"a program in ~/.ssh is never shown (its directory would come along)",
	 "d /home/u/.ssh\nf /home/u/.ssh/helper 0755\nl /home/u/.local/bin/helper /home/u/.ssh/helper\n",
	 "/home/u/.local/bin:/usr/bin", "helper", NULL, -1, NULL, NULL, NULL, NULL, NULL,
	 "lies in ~/.ssh, which agentjail never shows a jail"},
	{"... nor one whose interpreter lives in ~/.aws",
	 "d /home/u/.aws\nf /home/u/.aws/py 0755\nf /home/u/.local/bin/t 0755\n"
	 "head /home/u/.local/bin/t #!/home/u/.aws/py\n",
	 "/home/u/.local/bin:/usr/bin", "t", NULL, -1, NULL, NULL, NULL, NULL, NULL, "~/.aws"},
	{"a script interpreted by a script (two levels)",
	 "f /home/u/.local/bin/a 0755\nhead /home/u/.local/bin/a #!/home/u/.local/bin/b\n"
	 "f /home/u/.local/bin/b 0755\nhead /home/u/.local/bin/b #!/usr/bin/env bash\n",
	 "/home/u/.local/bin:/usr/bin", "a", NULL, 0, "/home/u/.local/bin/a", "/home/u/.local/bin/a",
	 "/usr/bin/bash", "/home/u/.local/bin", "", NULL},
};

static void join(const struct strv *v, size_t step, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < v->n; i += step) {
		size_t o = strlen(buf);
		if (step == 2)
			snprintf(buf + o, len - o, "%s%s>%s", i ? " " : "", v->v[i], v->v[i + 1]);
		else
			snprintf(buf + o, len - o, "%s%s", i ? " " : "", v->v[i]);
	}
}

static void layouts_resolve(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
		const struct layout *l = &layouts[k];
		char text[8192];
		snprintf(text, sizeof text, "%s%s", base, l->facts);
		struct hostfacts hf;
		load(&hf, text);
		struct resolved r;
		struct err e = {0};
		int rc = resolve_command(&hf, l->cmd, l->path, l->skip, &r, &e);
		print_message("# %s\n", l->name);
		assert_int_equal(rc, l->rc);
		if (rc < 0) {
			char msg[2048];
			err_format(&e, msg, sizeof msg);
			if (!strstr(msg, l->err))
				fail_msg("%s: error `%s` lacks `%s`", l->name, msg, l->err);
			hostfacts_free(&hf);
			continue;
		}
		assert_string_equal(r.path, l->want_path);
		assert_string_equal(r.real, l->want_real);
		if (l->want_interp)
			assert_string_equal(r.interp, l->want_interp);
		else
			assert_null(r.interp);
		char got[4096];
		join(&r.binds, 1, got, sizeof got);
		if (strcmp(got, l->binds))
			fail_msg("%s: binds `%s`, want `%s`", l->name, got, l->binds);
		join(&r.links, 2, got, sizeof got);
		if (strcmp(got, l->links))
			fail_msg("%s: links `%s`, want `%s`", l->name, got, l->links);
		/* nothing bound is $HOME itself, above it, or a system directory */
		for (size_t i = 0; i < r.binds.n; i++)
			assert_true(strncmp(r.binds.v[i], "/home/u/", 8) == 0 ||
				    strncmp(r.binds.v[i], "/srv/", 5) == 0);
		resolved_free(&r);
		hostfacts_free(&hf);
	}
}

static void install_roots(void **state)
{
	(void)state;
	static const char *const cases[][2] = {
		{"/h/.npm-global/lib/node_modules/@a/b/cli.js", "/h/.npm-global/lib/node_modules/@a/b"},
		{"/h/p/node_modules/x/bin/x.js", "/h/p/node_modules"},
		{"/h/p/node_modules/@openai/codex/bin/codex.js", "/h/p/node_modules"},
		{"/h/.nvm/versions/node/v20/lib/node_modules/@google/gemini-cli/dist/index.js",
		 "/h/.nvm/versions/node/v20/lib/node_modules/@google/gemini-cli"},
		{"/h/.local/share/claude/versions/2.0.1", "/h/.local/share/claude/versions/2.0.1"},
		{"/h/.local/share/kiro/versions/1.2/bin/kiro", "/h/.local/share/kiro/versions/1.2"},
		{"/h/.nvm/versions/node/v20/bin/node", "/h/.nvm/versions/node/v20"},
		{"/h/.local/bin/aider", "/h/.local/bin"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *r = resolve_install_root(cases[i][0]);
		assert_string_equal(r, cases[i][1]);
		free(r);
	}
}

/* The same resolution on a real tree, through the host probe (lstat, readlink, read). */
static void live_tree(void **state)
{
	(void)state;
	char root[] = "/tmp/aj-resolve-tree-XXXXXX";
	assert_non_null(mkdtemp(root));
	char p[512], q[512];
	const char *dirs[] = {"home", "home/.npm-global", "home/.npm-global/bin",
			      "home/.npm-global/lib", "home/.npm-global/lib/node_modules",
			      "home/.npm-global/lib/node_modules/@x",
			      "home/.npm-global/lib/node_modules/@x/agent", "home/node", "home/node/bin",
			      NULL};
	for (size_t i = 0; dirs[i]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	snprintf(p, sizeof p, "%s/home/.npm-global/lib/node_modules/@x/agent/cli.js", root);
	FILE *f = fopen(p, "we");
	assert_non_null(f);
	fputs("#!/usr/bin/env mynode\nconsole.log(1)\n", f);
	fclose(f);
	assert_int_equal(chmod(p, 0755), 0);
	snprintf(q, sizeof q, "%s/home/.npm-global/bin/agent", root);
	assert_int_equal(symlink("../lib/node_modules/@x/agent/cli.js", q), 0);
	snprintf(p, sizeof p, "%s/home/node/bin/mynode", root);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs("\x7f" "ELF", f);
	fclose(f);
	assert_int_equal(chmod(p, 0755), 0);

	struct hostfacts hf;
	hostfacts_init(&hf);
	hostfacts_use_host(&hf);
	snprintf(p, sizeof p, "%s/home", root);
	hf.home = strdup(p);
	hf.cwd = strdup(root);
	char path_env[1024];
	snprintf(path_env, sizeof path_env, "%s/home/.npm-global/bin:%s/home/node/bin", root, root);
	struct resolved r;
	struct err e = {0};
	assert_int_equal(resolve_command(&hf, "agent", path_env, NULL, &r, &e), 0);
	snprintf(p, sizeof p, "%s/home/.npm-global/lib/node_modules/@x/agent/cli.js", root);
	assert_string_equal(r.real, p);
	snprintf(p, sizeof p, "%s/home/node/bin/mynode", root);
	assert_string_equal(r.interp, p);
	assert_int_equal(r.binds.n, 2);
	snprintf(p, sizeof p, "%s/home/.npm-global/lib/node_modules/@x/agent", root);
	assert_string_equal(r.binds.v[0], p);
	snprintf(p, sizeof p, "%s/home/node/bin", root);
	assert_string_equal(r.binds.v[1], p);
	assert_int_equal(r.links.n, 2);
	assert_string_equal(r.links.v[1], "../lib/node_modules/@x/agent/cli.js");
	resolved_free(&r);
	hostfacts_free(&hf);
	assert_int_equal(test_rm_tree(root), 0);
}

/* hf_realpath answers a path it walked before from its memo (the same answer, the same links
 * appended each time), and forgets it when a fact is added: a link made after the first walk
 * is followed by the next one. */
static void realpath_memo(void **state)
{
	(void)state;
	struct hostfacts hf;
	load(&hf, "d /a\nd /a/b\nl /a/l b\nd /c\n");
	struct strv links = STRV_INIT;
	char *r1 = hf_realpath(&hf, "/a/l//.", &links);
	assert_string_equal(r1, "/a/b");
	char *r2 = hf_realpath(&hf, "/a/l", &links);
	assert_string_equal(r2, "/a/b");
	assert_int_equal(links.n, 4); /* both calls appended the link they passed */
	assert_string_equal(links.v[2], "/a/l");
	assert_string_equal(links.v[3], "b");
	assert_null(hf_realpath(&hf, "/a/m", NULL));
	/* /a/m appears, /a/l now leads to /c: the memo must not answer from before */
	hf_add(&hf, "/a/m", HF_DIR, 0755, 0, NULL);
	hf_add(&hf, "/a/l", HF_SYMLINK, 0777, 0, "/c");
	char *r3 = hf_realpath(&hf, "/a/m", NULL);
	assert_string_equal(r3, "/a/m");
	char *r4 = hf_realpath(&hf, "/a/l", NULL);
	assert_string_equal(r4, "/c");
	free(r1);
	free(r2);
	free(r3);
	free(r4);
	strv_free(&links);
	hostfacts_free(&hf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layouts_resolve),
		cmocka_unit_test(install_roots),
		cmocka_unit_test(live_tree),
		cmocka_unit_test(realpath_memo),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
