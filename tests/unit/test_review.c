/* The pure parts of --fs review (core/plan/review.h, doc/design.md §3c): how far each path of a
 * change set is protected (git's own names: objects and refs go, hooks and config never), when
 * an `apply` PATH names one, the mode a file is applied with, symlinks that leave the
 * workspace, the baselines' format, and the unified diff (checked against known output and, on
 * generated files, by applying it back). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/review.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/xalloc.h"

static bool head_in(void *arg, const char *dir)
{
	const struct strv *heads = arg;
	return strv_contains(heads, dir);
}

static enum rv_guard guard(const char *rel, bool dir, const struct rv_rules *r, const char *root)
{
	struct strv heads = STRV_INIT;
	strv_push(&heads, "evil"); /* evil/HEAD: a git dir without the name .git */
	char *got = NULL;
	enum rv_guard g = review_guard(rel, dir, r, head_in, &heads, &got);
	assert_string_equal(got ? got : "-", root);
	free(got);
	strv_free(&heads);
	return g;
}

static void guards(void **state)
{
	(void)state;
	struct rv_rules r = {STRV_INIT, STRV_INIT};
	strv_push(&r.named, "tools/run.sh");
	strv_push(&r.never, ".husky");
	/* a commit in the jail: objects, refs, logs, HEAD, index are the change set's own */
	assert_int_equal(guard(".git/objects/ab/cdef", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".git/refs/heads/main", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".git/logs/HEAD", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".git/HEAD", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".git/index", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".git/COMMIT_EDITMSG", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".git", true, &r, "-"), RV_FREE);
	assert_int_equal(guard("sub/.git/refs/tags/v1", false, &r, "-"), RV_FREE);
	/* what git runs or follows: never */
	assert_int_equal(guard(".git/hooks/pre-commit", false, &r, ".git/hooks"), RV_NEVER);
	assert_int_equal(guard(".git/config", false, &r, ".git/config"), RV_NEVER);
	assert_int_equal(guard(".GIT/Config", false, &r, ".GIT/Config"), RV_NEVER);
	assert_int_equal(guard(".git/info/attributes", false, &r, ".git/info"), RV_NEVER);
	assert_int_equal(guard(".git/modules/lib/config", false, &r, ".git/modules"), RV_NEVER);
	assert_int_equal(guard(".git/worktrees/w/gitdir", false, &r, ".git/worktrees"), RV_NEVER);
	assert_int_equal(guard(".git/rebase-merge/git-rebase-todo", false, &r,
			       ".git/rebase-merge"),
			 RV_NEVER);
	assert_int_equal(guard("vendor/x/.git/hooks/post-checkout", false, &r,
			       "vendor/x/.git/hooks"),
			 RV_NEVER);
	assert_int_equal(guard("sub/.git", false, &r, "sub/.git"), RV_NEVER); /* a pointer */
	assert_int_equal(guard(".git", false, &r, ".git"), RV_NEVER);
	assert_int_equal(guard("evil/config", false, &r, "evil/config"), RV_NEVER);
	assert_int_equal(guard("evil/hooks/x", false, &r, "evil/hooks"), RV_NEVER);
	assert_int_equal(guard("other/config", false, &r, "-"), RV_FREE); /* no other/HEAD */
	assert_int_equal(guard(".husky/pre-commit", false, &r, ".husky"), RV_NEVER);
	/* protected, applied when named: unknown git names, alternates, the top names */
	assert_int_equal(guard(".git/objects/info/alternates", false, &r, ".git/objects/info"),
			 RV_NAMED);
	assert_int_equal(guard(".git/lfs/x", false, &r, ".git/lfs"), RV_NAMED);
	assert_int_equal(guard(".envrc", false, &r, ".envrc"), RV_NAMED);
	assert_int_equal(guard(".vscode/tasks.json", false, &r, ".vscode"), RV_NAMED);
	assert_int_equal(guard(".VSCode/tasks.json", false, &r, ".VSCode"), RV_NAMED);
	assert_int_equal(guard(".claude/settings.local.json", false, &r,
			       ".claude/settings.local.json"),
			 RV_NAMED);
	assert_int_equal(guard(".claude/settings.team.json", false, &r,
			       ".claude/settings.team.json"),
			 RV_NAMED);
	assert_int_equal(guard(".claude/notes.md", false, &r, "-"), RV_FREE);
	assert_int_equal(guard("tools/run.sh", false, &r, "tools/run.sh"), RV_NAMED);
	assert_int_equal(guard("tools/run.shx", false, &r, "-"), RV_FREE);
	assert_int_equal(guard("src/main.c", false, &r, "-"), RV_FREE);
	assert_int_equal(guard(".envrc.d", false, &r, "-"), RV_FREE);
	assert_string_equal(rv_guard_name(RV_NEVER), "never applied");
	rv_rules_free(&r);
}

static void named(void **state)
{
	(void)state;
	struct strv p = STRV_INIT;
	strv_push(&p, "src");
	strv_push(&p, ".vscode");
	assert_true(review_named("src/a.c", NULL, &p));
	assert_true(review_named("src", NULL, &p));
	assert_false(review_named("srcx/a.c", NULL, &p));
	assert_false(review_named("docs/a", NULL, &p));
	/* a protected path needs a PATH at or below its root */
	assert_true(review_named(".vscode/tasks.json", ".vscode", &p));
	assert_false(review_named(".envrc", ".envrc", &p));
	strv_free(&p);
	strv_push(&p, ""); /* the top: everything, but no protected path */
	assert_true(review_named("a/b", NULL, &p));
	assert_false(review_named(".envrc", ".envrc", &p));
	strv_free(&p);
	strv_push(&p, ".git");
	assert_false(review_named(".git/hooks/x", ".git/hooks", &p));
	strv_free(&p);
}

static void modes_links(void **state)
{
	(void)state;
	assert_int_equal(review_mode(04755, false, 0), 0755);
	assert_int_equal(review_mode(06777, false, 0), 0755);
	assert_int_equal(review_mode(01777, true, 0777), 0777);
	assert_int_equal(review_mode(0664, true, 0664), 0664);
	assert_int_equal(review_mode(0666, true, 0644), 0644); /* o+w was the jail's */
	assert_int_equal(review_mode(0644, true, 0666), 0644); /* …and taken away by it */
	assert_true(review_link_inside("a/l", "b"));
	assert_true(review_link_inside("a/l", "../b"));
	assert_true(review_link_inside("a/b/l", "../../c/d"));
	assert_true(review_link_inside("l", "."));
	assert_false(review_link_inside("l", ".."));
	assert_false(review_link_inside("a/l", "../../etc"));
	assert_false(review_link_inside("a/l", "/etc/passwd"));
	assert_false(review_link_inside("a/l", ""));
	assert_false(review_link_inside("a/l", "b/../../../x"));
	char *at;
	assert_string_equal((at = review_link_lands("lockfile", ".git/hooks/post-checkout")),
			    ".git/hooks/post-checkout");
	free(at);
	assert_string_equal((at = review_link_lands("dir/envlink", "../.envrc")), ".envrc");
	free(at);
	assert_string_equal((at = review_link_lands("a/l", "..")), "");
	free(at);
	assert_null(review_link_lands("a/l", "../../x"));
	assert_null(review_link_lands("l", "/etc"));
}

static void baselines(void **state)
{
	(void)state;
	struct rv_manifest m = {0};
	struct rv_base b = {.rel = "dir/f\nname", .kind = 'f', .size = 12, .ino = 99,
			    .mtime_ns = 1700000000123456789LL, .ctime_ns = -1, .during = true};
	for (int i = 0; i < 32; i++)
		b.hash[i] = (unsigned char)(i * 7);
	rv_manifest_add(&m, &b);
	struct rv_base c = {.rel = "a", .kind = '-'};
	rv_manifest_add(&m, &c);
	size_t len;
	char *text = rv_manifest_format(&m, &len);
	struct rv_manifest back;
	struct err e = {0};
	assert_int_equal(rv_manifest_parse(text, len, "x", &back, &e), 0);
	assert_int_equal(back.n, 2);
	const struct rv_base *f = rv_manifest_find(&back, "dir/f\nname");
	assert_non_null(f);
	assert_int_equal(f->size, 12);
	assert_int_equal(f->mtime_ns, 1700000000123456789LL);
	assert_true(f->during);
	assert_memory_equal(f->hash, b.hash, 32);
	assert_true(rv_base_same(f, &b));
	struct rv_base d = b;
	d.mtime_ns++;
	assert_true(rv_base_same(f, &d)); /* touched: the same bytes */
	d.hash[0] ^= 1;
	assert_false(rv_base_same(f, &d));
	d = b;
	d.kind = '-';
	assert_false(rv_base_same(f, &d));
	assert_null(rv_manifest_find(&back, "nope"));
	rv_manifest_free(&back);
	/* damaged: cut short, a bad kind, no name */
	assert_int_equal(rv_manifest_parse(text, len - 3, "x", &back, &e), -1);
	char *bad = xmalloc(len);
	memcpy(bad, text, len);
	bad[strlen("dir/f\nname") + 1] = 'z';
	assert_int_equal(rv_manifest_parse(bad, len, "x", &back, &e), -1);
	assert_int_equal(rv_manifest_parse("\0f 1 1 1 1 0 00", 16, "x", &back, &e), -1);
	free(bad);
	free(text);
	rv_manifest_free(&m);
}

static char *udiff(const char *a, const char *b, struct rv_diffstat *st)
{
	struct strbuf out = STRBUF_INIT;
	rv_unified(&out, "f", a, a ? strlen(a) : 0, b, b ? strlen(b) : 0, st);
	return out.s ? sb_steal(&out) : xstrdup("");
}

static void diff_known(void **state)
{
	(void)state;
	struct rv_diffstat st;
	char *d = udiff("a\nb\nc\nd\ne\nf\ng\nh\ni\n", "a\nb\nc\nd\nE\nf\ng\nh\ni\n", &st);
	assert_string_equal(d, "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n");
	assert_int_equal(st.ins, 1);
	assert_int_equal(st.del, 1);
	free(d);
	d = udiff(NULL, "x\ny", &st);
	assert_string_equal(d, "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n"
			       "\\ No newline at end of file\n");
	free(d);
	d = udiff("x\n", NULL, &st);
	assert_string_equal(d, "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n");
	free(d);
	d = udiff("same\n", "same\n", &st);
	assert_string_equal(d, "");
	assert_int_equal(st.ins + st.del, 0);
	free(d);
	/* two changes far apart: two hunks */
	d = udiff("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n",
		  &st);
	/* as diff -u prints it */
	assert_string_equal(d, "--- a/f\n+++ b/f\n@@ -1,3 +1,4 @@\n+0\n 1\n 2\n 3\n"
			       "@@ -9,4 +10,3 @@\n 9\n 10\n 11\n-12\n");
	free(d);
	struct strbuf out = STRBUF_INIT;
	rv_unified(&out, "bin", "a\0b", 3, "a", 1, &st);
	assert_true(st.binary);
	assert_string_equal(sb_str(&out), "Binary files a/bin and b/bin differ\n");
	sb_free(&out);
}

/* Apply a unified diff (ours) to old: the hunks in order, every context and deleted line
 * checked. NULL when it does not apply. */
static char *patch(const char *old, const char *diff)
{
	struct strv ol = STRV_INIT;
	for (const char *p = old; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p + 1) : strlen(p);
		strv_push_take(&ol, xstrndup(p, l));
		p += l;
	}
	struct strbuf out = STRBUF_INIT;
	size_t at = 0;
	const char *p = strstr(diff, "@@");
	while (p && !strncmp(p, "@@ -", 4)) {
		size_t start = strtoul(p + 4, NULL, 10);
		const char *body = strchr(p, '\n') + 1;
		size_t want = start ? start - 1 : 0;
		if (strstr(p, ",0 +") && strstr(p, ",0 +") < body)
			want = start; /* "-N,0": after line N */
		while (at < want && at < ol.n)
			sb_add(&out, ol.v[at++]);
		for (p = body; *p && *p != '@';) {
			const char *nl = strchr(p, '\n');
			size_t l = (size_t)(nl - p + 1);
			char *line = xstrndup(p + 1, l - 1);
			bool nonl = !strncmp(nl + 1, "\\ No newline", 12);
			if (nonl)
				line[l - 2] = '\0';
			if (*p == ' ' || *p == '-') {
				if (at >= ol.n || strcmp(ol.v[at], line)) {
					free(line);
					strv_free(&ol);
					sb_free(&out);
					return NULL;
				}
				at++;
			}
			if (*p == ' ' || *p == '+')
				sb_add(&out, line);
			free(line);
			p = nl + 1;
			if (nonl)
				p = strchr(p, '\n') + 1;
		}
	}
	while (at < ol.n)
		sb_add(&out, ol.v[at++]);
	strv_free(&ol);
	return out.s ? sb_steal(&out) : xstrdup("");
}

static char *random_text(unsigned *seed, int lines)
{
	struct strbuf b = STRBUF_INIT;
	for (int i = 0; i < lines; i++)
		sb_addf(&b, "%c\n", 'a' + (char)(rand_r(seed) % 4));
	if (rand_r(seed) % 3 == 0)
		sb_add(&b, "tail");
	return b.s ? sb_steal(&b) : xstrdup("");
}

static void diff_applies(void **state)
{
	(void)state;
	unsigned seed = 30;
	for (int round = 0; round < 400; round++) {
		char *a = random_text(&seed, rand_r(&seed) % 40);
		char *b = random_text(&seed, rand_r(&seed) % 40);
		struct rv_diffstat st;
		char *d = udiff(a, b, &st);
		char *got = patch(a, d);
		if (!got || strcmp(got, b))
			fail_msg("round %d: the diff of\n%s\nto\n%s\nis\n%s", round, a, b, d);
		free(got);
		free(d);
		free(a);
		free(b);
	}
	/* past the search's bound: still a diff that applies */
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	for (int i = 0; i < 3000; i++) {
		sb_addf(&a, "%d\n", i);
		sb_addf(&b, "%d\n", i % 2 ? i : -i - 1);
	}
	struct rv_diffstat st;
	char *d = udiff(sb_str(&a), sb_str(&b), &st);
	char *got = patch(sb_str(&a), d);
	assert_non_null(got);
	assert_string_equal(got, sb_str(&b));
	free(got);
	free(d);
	sb_free(&a);
	sb_free(&b);
}

static void git_dir_len(void **state)
{
	(void)state;
	assert_int_equal(review_git_dir_len(".git/refs/heads/side"), 4);
	assert_int_equal(review_git_dir_len("sub/.GIT/objects/ab/cd"), 8);
	assert_int_equal(review_git_dir_len(".git"), 4);
	assert_int_equal(review_git_dir_len("a/b.git/c"), 0);
	assert_int_equal(review_git_dir_len(".gitignore"), 0);
	assert_int_equal(review_git_dir_len("x/.git2/y"), 0);
	assert_int_equal(review_git_dir_len(""), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(guards),     cmocka_unit_test(named),
		cmocka_unit_test(modes_links), cmocka_unit_test(baselines),
		cmocka_unit_test(diff_known), cmocka_unit_test(diff_applies),
		cmocka_unit_test(git_dir_len),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
