/* gitcfg_judge: a new repository's config is kept only when every key is known to run nothing
 * (issue 26, item 4; doc/design.md §3b). The host's next git reads what is kept, so each way of
 * making git run a command or read more config must be caught, including those hidden by the
 * syntax (case, a variable on the header's line, continuation lines, quotes, comments). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/gitcfg.h"

static struct gitcfg_judgement judge(const char *text)
{
	struct gitcfg_judgement j;
	gitcfg_judge(text, strlen(text), &j);
	return j;
}

static void expect(const char *text, enum gitcfg_verdict v, const char *key)
{
	struct gitcfg_judgement j = judge(text);
	if (j.verdict != v || (key && strcmp(j.key, key) != 0))
		fail_msg("config:\n%s\ngot verdict %d key '%s', want %d '%s'", text, j.verdict,
			 j.key, v, key ? key : "(any)");
}

#define INIT_CONFIG                                                                             \
	"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"          \
	"\tlogallrefupdates = true\n"

static void harmless_configs(void **state)
{
	(void)state;
	/* what `git init` writes, then the identity set inside the jail */
	expect(INIT_CONFIG, GITCFG_HARMLESS, "");
	expect(INIT_CONFIG "[user]\n\tname = Jail User\n\temail = jail@example.invalid\n",
	       GITCFG_HARMLESS, "");
	/* what `git clone` writes */
	expect(INIT_CONFIG "[remote \"origin\"]\n\turl = https://github.com/o/r.git\n"
			   "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"
			   "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n",
	       GITCFG_HARMLESS, "");
	expect("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = sha256\n",
	       GITCFG_HARMLESS, "");
	expect("[remote \"o\"]\n\turl = git@github.com:o/r.git\n[remote \"p\"]\n\turl = /srv/r.git\n"
	       "[remote \"q\"]\n\turl = file:///srv/r.git\n[submodule \"lib\"]\n\turl = ../lib\n"
	       "\tactive = true\n",
	       GITCFG_HARMLESS, "");
	expect("[core]\n\tbare\n\tautocrlf = input\n\teol = lf\n; comment\n# comment\n"
	       "[pull]\n\trebase = false\n[push]\n\tdefault = simple\n[init]\n\tdefaultBranch = main\n",
	       GITCFG_HARMLESS, "");
	expect("", GITCFG_HARMLESS, "");
	expect("[user]\n\tname = x # [core] fsmonitor = y\n\temail = \"a;b\" ; c\n", GITCFG_HARMLESS,
	       "");
}

static void keys_that_run_commands(void **state)
{
	(void)state;
	expect(INIT_CONFIG "\tfsmonitor = /tmp/x\n", GITCFG_RUNS, "core.fsmonitor");
	expect(INIT_CONFIG "\thooksPath = .husky\n", GITCFG_RUNS, "core.hookspath");
	expect("[core]\n\tpager = sh -c x\n", GITCFG_RUNS, "core.pager");
	expect("[core]\n\teditor = x\n", GITCFG_RUNS, "core.editor");
	expect("[core]\n\tsshCommand = x\n", GITCFG_RUNS, "core.sshcommand");
	expect("[core]\n\taskPass = x\n", GITCFG_RUNS, "core.askpass");
	expect("[core]\n\tworktree = /home/u\n", GITCFG_RUNS, "core.worktree");
	expect("[alias]\n\tst = !sh -c x\n", GITCFG_RUNS, "alias.st");
	expect("[alias]\n\tlg = -c core.pager=x log\n", GITCFG_RUNS, "alias.lg");
	expect("[filter \"lfs\"]\n\tclean = git-lfs clean -- %f\n", GITCFG_RUNS, "filter.lfs.clean");
	expect("[diff \"x\"]\n\ttextconv = x\n", GITCFG_RUNS, "diff.x.textconv");
	expect("[credential]\n\thelper = x\n", GITCFG_RUNS, "credential.helper");
	expect("[gpg]\n\tprogram = x\n", GITCFG_RUNS, "gpg.program");
	expect("[pager]\n\tlog = x\n", GITCFG_RUNS, "pager.log");
	expect("[remote \"o\"]\n\turl = ext::sh -c x\n", GITCFG_RUNS, "remote.o.url");
	expect("[remote \"o\"]\n\turl = fd::7\n", GITCFG_RUNS, "remote.o.url");
	expect("[remote \"o\"]\n\turl = -oProxyCommand=x\n", GITCFG_RUNS, "remote.o.url");
	expect("[remote \"o\"]\n\turl = ssh://-oProxyCommand=x/r\n", GITCFG_RUNS, "remote.o.url");
	expect("[remote \"o\"]\n\turl = https://x\n\tuploadpack = x\n", GITCFG_RUNS,
	       "remote.o.uploadpack");
	expect("[url \"ext::sh -c x\"]\n\tinsteadOf = https://\n", GITCFG_RUNS,
	       "url.ext??sh?-c?x.insteadof");
	expect("[submodule \"s\"]\n\tupdate = !x\n", GITCFG_RUNS, "submodule.s.update");
	expect("[extensions]\n\tworktreeConfig = true\n", GITCFG_RUNS, "extensions.worktreeconfig");
	expect("[include]\n\tpath = /tmp/x\n", GITCFG_INCLUDES, "include.path");
	expect("[includeIf \"gitdir:/\"]\n\tpath = x\n", GITCFG_INCLUDES, "includeif.gitdir?/.path");
}

static void unknown_keys_and_values(void **state)
{
	(void)state;
	expect(INIT_CONFIG "[gc]\n\tauto = 0\n", GITCFG_UNKNOWN, "gc.auto");
	expect("[core]\n\tfilemode = maybe\n", GITCFG_UNKNOWN, "core.filemode");
	expect("[core]\n\trepositoryformatversion = 2\n", GITCFG_UNKNOWN,
	       "core.repositoryformatversion");
	expect("[core]\n\tsharedRepository = 0777\n", GITCFG_RUNS, "core.sharedrepository");
	expect("[user \"x\"]\n\tname = a\n", GITCFG_UNKNOWN, "user.x.name"); /* no subsection */
	expect("[branch]\n\tremote = origin\n", GITCFG_UNKNOWN, "branch.remote");
	expect("name = x\n", GITCFG_UNKNOWN, ".name"); /* before any section */
	expect("[init]\n\tdefaultBranch = -x\n", GITCFG_UNKNOWN, "init.defaultbranch");
}

/* What the syntax could hide: each must still be seen as git sees it. */
static void hidden_by_syntax(void **state)
{
	(void)state;
	expect("[CoRe]\n\tFsMonitor = x\n", GITCFG_RUNS, "core.fsmonitor");
	expect("[core] fsmonitor = x\n", GITCFG_RUNS, "core.fsmonitor"); /* on the header's line */
	expect("[core.x]\n\tfsmonitor = y\n", GITCFG_RUNS, "core.x.fsmonitor");
	expect("[core \"x\"]\n\tfsmonitor = y\n", GITCFG_RUNS, "core.x.fsmonitor");
	expect("[user]\n\tname = \"a\" ; \"b\n[core]\n\tfsmonitor = x\n", GITCFG_RUNS,
	       "core.fsmonitor");
	/* a continuation line keeps the next line in the value (user.name), as git does */
	expect("[user]\n\tname = a\\\n[core] fsmonitor = x\n", GITCFG_HARMLESS, "");
	expect("[user]\n\tname = a\\\n\n[core]\n\tfsmonitor = x\n", GITCFG_RUNS, "core.fsmonitor");
	/* not strictly git config: moved aside */
	expect(INIT_CONFIG "\tfsmonitor = x\r\n", GITCFG_UNPARSABLE, "");
	expect("[core]\r\n\tbare = false\r\n", GITCFG_UNPARSABLE, "");
	expect("\xef\xbb\xbf[core]\n\tbare = false\n", GITCFG_UNPARSABLE, "");
	expect("[core]\n\v\tbare = false\n", GITCFG_UNPARSABLE, "");
	expect("[user]\n\tname = \"unterminated\n", GITCFG_UNPARSABLE, "");
	expect("[user]\n\tname = a\\q\n", GITCFG_UNPARSABLE, ""); /* an escape git rejects */
	expect("[user\n\tname = a\n", GITCFG_UNPARSABLE, "");
	expect("[]\n", GITCFG_UNPARSABLE, "");
	expect("[user]\n\t1name = a\n", GITCFG_UNPARSABLE, "");
	expect("[user]\n\tname # x\n", GITCFG_UNPARSABLE, "");
	/* a syntax error after a dangerous key: still moved aside (as unparsable) */
	expect("[core]\n\tfsmonitor = x\n[user\n", GITCFG_UNPARSABLE, "");
	/* a NUL before the end: the bytes after it are not seen by a C string parser */
	struct gitcfg_judgement j;
	static const char nul[] = "[user]\n\tname = a\0\n[core]\n\tfsmonitor = x\n";
	gitcfg_judge(nul, sizeof nul - 1, &j);
	assert_int_equal(j.verdict, GITCFG_UNPARSABLE);
	/* too large */
	size_t n = GITCFG_MAX + 1;
	char *big = malloc(n + 1);
	memset(big, '#', n);
	big[n] = '\0';
	gitcfg_judge(big, n, &j);
	assert_int_equal(j.verdict, GITCFG_UNPARSABLE);
	free(big);
}

static void explained(void **state)
{
	(void)state;
	struct gitcfg_judgement j = judge("[core]\n\tfsmonitor = x\n[gc]\n\tauto = 0\n");
	char *s = gitcfg_explain(&j);
	assert_string_equal(s, "it sets core.fsmonitor, which runs a command (and 1 more key not "
			       "known to be harmless)");
	free(s);
	j = judge("[gc]\n\tauto = 0\n");
	s = gitcfg_explain(&j);
	assert_string_equal(s, "it sets gc.auto, which agentjail does not know to be harmless");
	free(s);
	j = judge("[include]\n\tpath = x\n");
	s = gitcfg_explain(&j);
	assert_string_equal(s, "it sets include.path, which includes another file");
	free(s);
	j = judge("[core]\r\n");
	s = gitcfg_explain(&j);
	assert_string_equal(s, "it is not plain git config (a carriage return)");
	free(s);
	j = judge(INIT_CONFIG);
	assert_null(gitcfg_explain(&j));
	/* a hostile subsection reaches the terminal cleaned and bounded */
	j = judge("[alias \"\x1b]0;x\x07\"]\n\ta = b\n[remote \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]\n");
	assert_null(strpbrk(j.key, "\x1b\x07"));
	j = judge("[remote \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"]\n\tvcs = x\n");
	assert_true(strlen(j.key) < 60);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(harmless_configs),
		cmocka_unit_test(keys_that_run_commands),
		cmocka_unit_test(unknown_keys_and_values),
		cmocka_unit_test(hidden_by_syntax),
		cmocka_unit_test(explained),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
