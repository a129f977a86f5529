/* ovlns: the overlay of --fs review (doc/design.md §3c), mounted by the child that is about to
 * exec bwrap. bubblewrap 0.8 (Debian's) has no overlay option, and agentjail on the host
 * cannot mount one (a user cannot, and root must not touch the host's mount table), so that
 * child makes a user namespace of its own (or uses the --net allow holder's) and a mount
 * namespace, mounts overlayfs there (lower the workspace, upper and work in the session's
 * review directory; userxattr, no redirects, no metacopy, no index, nosuid, nodev) at the
 * review directory's mnt, opens every bind source the plan takes from the overlay
 * (bw_op.ovl_rel) beneath it without following a symlink or crossing a mount, puts each at its
 * fd number, and execs bwrap there: bwrap's --bind-fd resolves the fd to its path in this
 * namespace and binds the overlay. The identity of each (device, inode, type) goes back to
 * agentjail over a socketpair, for init's check of the binds (bindcheck.h); a failed step goes
 * back instead, with its errno and the kernel's own words, and nothing runs. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/backend/bwrap/nschild.h"
#include "core/plan/bwrap_argv.h"
#include "util/err.h"

/* What the child needs, prepared before the fork (it then only makes system calls). */
struct ovlns_req {
	int sock;               /* the child's end of the report socketpair */
	bool own_userns;        /* make a user namespace (false: the --net allow holder made one) */
	uid_t uid;
	gid_t gid;
	/* the layers and the mount point, and the fds agentjail opened on them without following
	 * a symlink: the child opens each path again in its mount namespace and refuses one that
	 * is not that same directory */
	const char *path[4];    /* lower, upper, work, mnt */
	int host_fd[4];
	/* the sources: n paths inside the overlay ("" its top), each put at fd[i] */
	size_t n;
	const char *const *rel;
	const int *fd;
	int high;               /* where the child parks them until the other fds are in place:
				 * high + i, above every fd launch moves */
	struct nsc_inject inject; /* test builds: AGENTJAIL_TEST_OVL_FAIL */
};

/* Prepare req for plan's overlay: the socketpair (req gets the child's end, *parent_end ours),
 * the layers opened, the sources listed. 0, or -1 with e. ovlns_req_free either way. */
int ovlns_prepare(const struct bw_plan *plan, struct ovlns_req *req, int *parent_end,
		  struct err *e) WUR;
void ovlns_req_free(struct ovlns_req *req);

/* In the child, before exec: the namespaces, the mount, the sources opened and parked at
 * req->high + i, their identities reported. 0, or -1 after reporting the failed step. */
int ovlns_enter(const struct ovlns_req *req);
/* In the child, after launch moved its own fds: the parked sources to their numbers. */
int ovlns_place(const struct ovlns_req *req);

/* One source's identity (the S_IFMT bits in mode). */
struct ovlns_id {
	unsigned long long dev, ino;
	unsigned mode;
};
/* In the parent: wait at most timeout_ms for the child's report. 0 with ids[0..n) filled, or
 * -1 with e saying which step failed, why, and what to do. */
int ovlns_receive(int sock, size_t n, int timeout_ms, struct ovlns_id *ids, struct err *e) WUR;

/* doctor: can the review overlay be mounted here, with upper and work in a temporary
 * directory made in `base` (the state directory, or its nearest existing ancestor) and lower
 * the directory `lower`? A forked child mounts it in namespaces of its own; the temporary
 * directory is removed. 0, or -1 with e. */
int ovlns_probe(const char *base, const char *lower, struct err *e) WUR;
