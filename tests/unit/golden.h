/* Golden-file cases shared by the unit tests: tests/data/DIR/NAME.facts → NAME.golden.
 * AJ_UPDATE_GOLDEN=1 rewrites the goldens. Include after <cmocka.h>. */
#pragma once
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/hostfacts.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/xalloc.h"

/* $AJ_SRC/tests/data/SUB (static storage) */
static inline const char *golden_dir(const char *sub)
{
	static char buf[4096];
	const char *src = getenv("AJ_SRC");
	snprintf(buf, sizeof buf, "%s/tests/data/%s", src ? src : ".", sub);
	return buf;
}

static inline char *golden_read_all(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	struct strbuf b = STRBUF_INIT;
	char tmp[4096];
	size_t n;
	while ((n = fread(tmp, 1, sizeof tmp, f)) > 0)
		sb_addn(&b, tmp, n);
	fclose(f);
	return sb_steal(&b);
}

/* Compare `got` with DIR/NAME.golden (rewritten first under AJ_UPDATE_GOLDEN). */
static inline void golden_check(const char *dir, const char *name, const char *got)
{
	char golden[4200];
	snprintf(golden, sizeof golden, "%s/%s.golden", dir, name);
	if (getenv("AJ_UPDATE_GOLDEN")) {
		FILE *f = fopen(golden, "we");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
	}
	char *want = golden_read_all(golden);
	if (!want || strcmp(want, got) != 0) {
		fprintf(stderr, "# golden mismatch for %s; got:\n%s", name, got);
		fail_msg("%s differs from %s (AJ_UPDATE_GOLDEN=1 rewrites it)", name, golden);
	}
	free(want);
}

static inline int golden_cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The case names (NAME of NAME.facts) in dir, sorted; -1 when dir cannot be read. */
static inline int golden_names(const char *dir, struct strv *names)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);
		if (n > 6 && !strcmp(de->d_name + n - 6, ".facts"))
			strv_push_take(names, xstrndup(de->d_name, n - 6));
	}
	closedir(d);
	if (names->n)
		qsort(names->v, names->n, sizeof *names->v, golden_cmp_name);
	return 0;
}

/* main() of a golden-file test: one case per NAME.facts in dir (run by `fn`, with the name as
 * its state), then `extra`. */
static inline int golden_main(const char *group, const char *dir, CMUnitTestFunction fn,
			      const struct CMUnitTest *extra, size_t nextra)
{
	struct strv names = STRV_INIT;
	if (golden_names(dir, &names) < 0) {
		printf("1..0 # SKIP no fixtures at %s (set AJ_SRC)\n", dir);
		return 0;
	}
	struct CMUnitTest *tests = xcalloc(names.n + nextra, sizeof *tests);
	size_t k = 0;
	for (size_t i = 0; i < names.n; i++) {
		tests[k].name = names.v[i];
		tests[k].test_func = fn;
		tests[k].initial_state = names.v[i];
		k++;
	}
	for (size_t i = 0; i < nextra; i++)
		tests[k++] = extra[i];
	int rc = _cmocka_run_group_tests(group, tests, k, NULL, NULL);
	free(tests);
	strv_free(&names);
	return rc;
}

/* Load case NAME's host facts (dir/NAME.facts, whose path goes to facts[4200]) into hf. */
static inline void golden_load(const char *dir, const char *name, struct hostfacts *hf,
			       char facts[4200])
{
	snprintf(facts, 4200, "%s/%s.facts", dir, name);
	hostfacts_init(hf);
	struct err e = {0};
	assert_int_equal(hostfacts_load_fixture(hf, facts, &e), 0);
}
