/* Helpers shared by the unit tests. */
#pragma once
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

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
