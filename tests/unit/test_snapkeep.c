/* Tests for core/jail/snapkeep and core/jail/guard (the Landlock backend's protected paths,
 * doc/design.md §4c): the bytes kept, restored after a replace or a removal, a racing change
 * found again. Each test works in its own mkdtemp directory. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/jail/guard.h"
#include "core/jail/snapkeep.h"
#include "util/strv.h"
#include "testutil.h"

struct fx {
	char root[PATH_MAX];
	char hooks[PATH_MAX + 32];
	char cfg[PATH_MAX + 32];
	char envrc[PATH_MAX + 32];
	char q[PATH_MAX + 32];
	struct strv paths;
};

static void put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static char *slurp(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);
	if (!f)
		return -1;
	snprintf(f->root, sizeof f->root, "/tmp/agentjail-keep-XXXXXX");
	if (!mkdtemp(f->root))
		return -1;
	char git[PATH_MAX + 16];
	snprintf(git, sizeof git, "%s/.git", f->root);
	snprintf(f->hooks, sizeof f->hooks, "%s/.git/hooks", f->root);
	snprintf(f->cfg, sizeof f->cfg, "%s/.git/config", f->root);
	snprintf(f->envrc, sizeof f->envrc, "%s/.envrc", f->root);
	snprintf(f->q, sizeof f->q, "%s/quarantine", f->root);
	if (mkdir(git, 0755) < 0 || mkdir(f->hooks, 0755) < 0)
		return -1;
	char sample[PATH_MAX + 64];
	snprintf(sample, sizeof sample, "%s/pre-commit.sample", f->hooks);
	put(sample, "#!/bin/sh\nexit 0\n", 0755);
	put(f->cfg, "[core]\n\tbare = false\n", 0644);
	strv_push(&f->paths, f->hooks);
	strv_push(&f->paths, f->cfg);
	strv_push(&f->paths, f->envrc);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	(void)test_rm_tree(f->root);
	strv_free(&f->paths);
	free(f);
	return 0;
}

static bool has_violation(const struct violations *v, const char *path, const char *what)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].path, path) && strstr(v->v[i].what, what))
			return true;
	return false;
}

static void replaced_and_removed_are_restored(void **state)
{
	struct fx *f = *state;
	struct guard *g = NULL;
	struct err live = {0}, e = {0};
	const struct guard_opts keep = {.keep = true, .live = true};
	assert_int_equal(guard_start(&f->paths, f->q, &keep, &g, &live, &e), 0);
	/* the command: config replaced by rename, a hook planted, .envrc created */
	char tmp[PATH_MAX + 16], hook[PATH_MAX + 64];
	snprintf(tmp, sizeof tmp, "%s/c2", f->root);
	put(tmp, "[core]\n\tfsmonitor = evil\n", 0644);
	assert_int_equal(rename(tmp, f->cfg), 0);
	snprintf(hook, sizeof hook, "%s/pre-commit", f->hooks);
	put(hook, "evil\n", 0755);
	put(f->envrc, "evil\n", 0644);
	struct violations v = {0};
	assert_int_equal(guard_finish(g, &v, &e), 0);
	guard_free(g);
	assert_true(has_violation(&v, f->cfg, "the original was restored"));
	assert_true(has_violation(&v, f->hooks, "the original was restored"));
	assert_true(has_violation(&v, f->envrc, "appeared"));
	assert_string_equal(slurp(f->cfg), "[core]\n\tbare = false\n");
	assert_null(slurp(hook));
	assert_null(slurp(f->envrc));
	char sample[PATH_MAX + 64];
	snprintf(sample, sizeof sample, "%s/pre-commit.sample", f->hooks);
	struct stat st;
	assert_int_equal(stat(sample, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_string_equal(slurp(sample), "#!/bin/sh\nexit 0\n");
	violations_free(&v);
}

static void removed_is_restored_and_kept_state_compares(void **state)
{
	struct fx *f = *state;
	struct guard *g = NULL;
	struct err live = {0}, e = {0};
	const struct guard_opts keep = {.keep = true, .live = true};
	assert_int_equal(guard_start(&f->paths, f->q, &keep, &g, &live, &e), 0);
	assert_int_equal(unlink(f->cfg), 0);
	struct violations v = {0};
	assert_int_equal(guard_finish(g, &v, &e), 0);
	guard_free(g);
	assert_true(has_violation(&v, f->cfg, "removed; the original was restored"));
	assert_string_equal(slurp(f->cfg), "[core]\n\tbare = false\n");
	violations_free(&v);

	/* snapkeep_same: what stands there is the kept state, until a byte or a mode changes */
	struct snapshot s;
	assert_int_equal(snapshot_take(&f->paths, &s, &e), 0);
	struct snapkeep k;
	snapkeep_take(&s, &k);
	assert_true(snapkeep_same(snapkeep_find(&k, f->hooks)));
	assert_true(snapkeep_same(snapkeep_find(&k, f->cfg)));
	assert_false(snapkeep_find(&k, f->envrc)->kept); /* it did not exist */
	put(f->cfg, "[core]\n\tbare = true\n", 0644);
	assert_false(snapkeep_same(snapkeep_find(&k, f->cfg)));
	assert_int_equal(chmod(f->hooks, 0700), 0);
	assert_false(snapkeep_same(snapkeep_find(&k, f->hooks)));
	snapkeep_free(&k);
	snapshot_free(&s);
}

static void nothing_changed_nothing_reported(void **state)
{
	struct fx *f = *state;
	struct guard *g = NULL;
	struct err live = {0}, e = {0};
	const struct guard_opts keep = {.keep = true, .live = true};
	assert_int_equal(guard_start(&f->paths, f->q, &keep, &g, &live, &e), 0);
	struct violations v = {0};
	assert_int_equal(guard_handle(g, &v), 0);
	assert_int_equal(guard_finish(g, &v, &e), 0);
	guard_free(g);
	assert_int_equal(v.n, 0);
	struct stat st;
	assert_int_equal(stat(f->q, &st) < 0, 1); /* no quarantine made for nothing */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(replaced_and_removed_are_restored, setup, teardown),
		cmocka_unit_test_setup_teardown(removed_is_restored_and_kept_state_compares, setup,
						teardown),
		cmocka_unit_test_setup_teardown(nothing_changed_nothing_reported, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
