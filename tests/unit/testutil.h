/* Helpers shared by the unit tests. */
#pragma once
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/plan/hostfacts.h"

static int test_rm_failed;

static inline int test_rm_entry(const char *path, const struct stat *st, int flag,
				struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	if (remove(path) < 0)
		test_rm_failed = 1;
	return 0; /* keep going: remove as much as possible */
}

/* Remove a test's scratch tree, depth first, without following symlinks or crossing mounts.
 * 0 when everything went, -1 otherwise. */
static inline int test_rm_tree(const char *dir)
{
	test_rm_failed = 0;
	if (nftw(dir, test_rm_entry, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return -1;
	return test_rm_failed ? -1 : 0;
}

/* Write `content` at base/rel (content NULL: make a directory there), creating the parents.
 * Include <cmocka.h> before this file. */
static inline void test_put(const char *base, const char *rel, const char *content)
{
	char p[4096];
	int n = snprintf(p, sizeof p, "%s/%s", base, rel);
	assert_true(n > 0 && (size_t)n < sizeof p);
	for (char *q = p + strlen(base) + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = '\0';
		assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
		*q = '/';
	}
	if (!content) {
		assert_true(mkdir(p, 0755) == 0 || errno == EEXIST);
		return;
	}
	FILE *fp = fopen(p, "we");
	assert_non_null(fp);
	fputs(content, fp);
	fclose(fp);
}

/* Load fixture text (the tests/data format) into a fresh hf. Include <cmocka.h> first. */
static inline void test_load_facts(struct hostfacts *hf, const char *text)
{
	char tmpl[] = "/tmp/aj-facts-XXXXXX";
	int fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	hostfacts_init(hf);
	struct err e = {0};
	assert_int_equal(hostfacts_load_fixture(hf, tmpl, &e), 0);
	unlink(tmpl);
}
