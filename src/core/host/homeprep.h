/* homeprep: a workspace's persisted home on disk (`--home persist`; core/plan/homekeep.h says
 * where it is and what a plan makes in it; doc/design.md §3 step 5).
 *
 * What a jail left in its home is hostile input to the next jail's bwrap, which makes its mount
 * points there as the user (or root) before any confinement, following symlinks: a link
 * `~/.config -> /oldroot/etc` left by one jail had the next one's bwrap make directories and
 * files in the host's /etc. So one jail at a time uses a home (a lock agentjail holds for the
 * whole run), and before bwrap starts everything on the way to a mount point that is not a
 * plain directory, and at a mount point anything but what bwrap needs, is renamed aside. Nothing
 * here reads a file of the home: names, types and sizes only. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "core/plan/homekeep.h"
#include "util/err.h"
#include "util/strv.h"

/* Before a jail of `workspace` (canonical) uses the home under `root` (homekeep_root): root and
 * root/home made 0700 (the home made 0700 again whatever a jail set), the workspace recorded
 * (its time: this run), and the home's lock taken. *lock_fd holds it until closed: keep it
 * open until the jail has ended. -1 with e when a file cannot be made, or with EBUSY when
 * another agentjail's jail uses the home (naming its pid and session). `who` is recorded in the
 * lock for that message (this session's id). */
int homeprep_prepare(const char *root, const char *workspace, const char *who, int *lock_fd,
		     struct err *e) WUR;

/* The way cleared in the home `dir` (its lock held) for the places of `pts`: a symlink or
 * anything but a directory on the way to a place, and at the place anything but what it needs
 * (a directory, a regular file, a link to the same target), is renamed in its own directory to
 * NAME.agentjail-moved (-2, -3… when taken). Each rename adds "PATH (WHAT): renamed to NAME" to
 * `moved`, PATH relative to the home. */
int homeprep_clear(const char *dir, const struct homekeep_points *pts, struct strv *moved,
		   struct err *e) WUR;

struct home_entry {
	char *root;      /* <state>/home/KEY */
	char *workspace; /* the workspace it was made for, or NULL */
	uint64_t bytes;  /* the home's size (a directory the user cannot read not counted) */
	long long used;  /* last use, seconds since the epoch; 0: unknown */
	bool in_use;     /* a jail is using it now */
};
/* Every persisted home in <state>/home, by workspace (or directory). */
int homeprep_list(const char *state_dir, struct home_entry **out, size_t *n, struct err *e) WUR;
void homeprep_list_free(struct home_entry *v, size_t n);
/* Remove a persisted home whole, its lock held meanwhile: -1 with EBUSY (naming the jail) when
 * a jail uses it. *freed: the bytes removed. */
int homeprep_remove(const struct home_entry *h, uint64_t *freed, struct err *e) WUR;
