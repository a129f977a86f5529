/* ovlns: the overlay of --fs review (ovlns.h, doc/design.md §3c). */
#include "core/backend/bwrap/ovlns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/host/userns_diag.h"
#include "core/plan/review.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/xalloc.h"

/* mount API names older headers lack */
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif

enum { MSG_ID, MSG_DONE, MSG_FAILED };

/* One report: a source's identity, the end, or the step that failed. */
struct ovlns_msg {
	int32_t errnum;
	uint32_t kind;
	uint32_t index;
	uint32_t mode;
	uint64_t dev, ino;
	char step[64];
	char detail[256]; /* the kernel's words (overlayfs's log), or the path concerned */
};

static const char *const layer_steps[4] = {
	"open the workspace (the lower layer)", "open the change set (the upper layer)",
	"open overlayfs's work directory", "open the overlay's mount point"};

static void req_init(struct ovlns_req *req)
{
	memset(req, 0, sizeof *req);
	req->sock = -1;
	for (int i = 0; i < 4; i++)
		req->host_fd[i] = -1;
}

int ovlns_prepare(const struct bw_plan *plan, struct ovlns_req *req, int *parent_end,
		  struct err *e)
{
	req_init(req);
	*parent_end = -1;
	const char *paths[4] = {plan->ovl.lower, plan->ovl.upper, plan->ovl.work, plan->ovl.mnt};
	for (int i = 0; i < 4; i++) {
		req->path[i] = paths[i];
		req->host_fd[i] = fs_open_nofollow(paths[i], O_PATH | O_DIRECTORY);
		if (req->host_fd[i] < 0) {
			err_set(e, errno, paths[i], "--fs review: cannot %s without following "
						    "symlinks",
				layer_steps[i] + 5);
			err_hint(e, "the session's review directory is made before each run; run "
				    "again, or `agentjail discard` the session");
			return -1;
		}
	}
	size_t n = 0;
	for (size_t i = 0; i < plan->nops; i++)
		n += plan->ops[i].ovl_rel != NULL;
	const char **rel = xcalloc(n ? n : 1, sizeof *rel);
	int *fd = xcalloc(n ? n : 1, sizeof *fd);
	n = 0;
	for (size_t i = 0; i < plan->nops; i++) {
		if (!plan->ops[i].ovl_rel)
			continue;
		rel[n] = plan->ops[i].ovl_rel;
		fd[n++] = plan->ops[i].fd;
	}
	req->n = n;
	req->rel = rel;
	req->fd = fd;
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return err_set(e, errno, NULL, "--fs review: cannot create the overlay's report "
					       "socketpair");
	*parent_end = sp[0];
	req->sock = sp[1];
	req->own_userns = !plan->net_allow; /* the --net allow holder made one already */
	req->uid = getuid();
	req->gid = getgid();
#ifdef AJ_TEST_BUILD
	/* test builds only: make one step fail, to see the refusal and nothing run */
	const char *f = getenv("AGENTJAIL_TEST_OVL_FAIL");
	if (f)
		(void)strncpy(req->inject.step, f, sizeof req->inject.step - 1);
#endif
	return 0;
}

void ovlns_req_free(struct ovlns_req *req)
{
	for (int i = 0; i < 4; i++)
		if (req->host_fd[i] >= 0)
			(void)close(req->host_fd[i]);
	if (req->sock >= 0)
		(void)close(req->sock);
	free((void *)req->rel);
	free((void *)req->fd);
	req_init(req);
}

/* ---- the child: system calls and its own stack only ------------------------------------- */

static void send_msg(int sock, const struct ovlns_msg *m)
{
	while (send(sock, m, sizeof *m, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
}

static int fail(const struct ovlns_req *r, const char *step, int errnum, const char *detail)
{
	struct ovlns_msg m;
	memset(&m, 0, sizeof m);
	m.kind = MSG_FAILED;
	m.errnum = errnum ? errnum : EIO;
	(void)nsc_put_str(m.step, 0, sizeof m.step, step);
	if (detail)
		(void)nsc_put_str(m.detail, 0, sizeof m.detail, detail);
	send_msg(r->sock, &m);
	return -1;
}

static int fd_path(char *buf, size_t cap, int fd)
{
	size_t n = nsc_put_str(buf, 0, cap, "/proc/self/fd/");
	(void)nsc_put_uint(buf, n, cap, (unsigned long)fd);
	return 0;
}

static long openat2_(int dir, const char *path, unsigned long long flags, unsigned long long how)
{
	struct open_how oh;
	memset(&oh, 0, sizeof oh);
	oh.flags = flags;
	oh.resolve = how;
	return syscall(SYS_openat2, dir, path, &oh, sizeof oh);
}

/* The kernel's own words about a failed fsconfig (overlayfs logs why to the context). */
static void fs_log(int fsfd, char *out, size_t cap)
{
	out[0] = '\0';
	size_t at = 0;
	char line[256];
	for (int i = 0; i < 4; i++) {
		ssize_t n = read(fsfd, line, sizeof line - 1);
		if (n <= 0)
			break;
		line[n] = '\0';
		if (at)
			at = nsc_put_str(out, at, cap, "; ");
		at = nsc_put_str(out, at, cap, line[0] && line[1] == ' ' ? line + 2 : line);
	}
}

static int set_str(int fsfd, const char *key, const char *value)
{
	return (int)syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, key, value, 0);
}

/* The layers opened again in this mount namespace (overlayfs refuses a layer of another
 * one), each the same directory agentjail opened. */
static int open_layers(const struct ovlns_req *r, int lay[4])
{
	for (int i = 0; i < 4; i++) {
		const char *step = layer_steps[i];
		long fd = openat2_(AT_FDCWD, r->path[i], O_PATH | O_DIRECTORY | O_CLOEXEC,
				   RESOLVE_NO_SYMLINKS);
		if (nsc_injected(&r->inject, step) || fd < 0)
			return fail(r, step, errno, r->path[i]);
		lay[i] = (int)fd;
		struct stat a, b;
		if (fstat(lay[i], &a) < 0 || fstat(r->host_fd[i], &b) < 0)
			return fail(r, step, errno, r->path[i]);
		if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
			return fail(r, step, ESTALE, r->path[i]);
	}
	return 0;
}

static int mount_overlay(const struct ovlns_req *r, const int lay[4], int *mfd)
{
	char detail[256];
	const char *step = "fsopen(\"overlay\")";
	int fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
	if (nsc_injected(&r->inject, step) || fsfd < 0)
		return fail(r, step, errno, NULL);
	static const char *const keys[3] = {"lowerdir", "upperdir", "workdir"};
	int rc = 0;
	for (int i = 0; i < 3 && rc == 0; i++) {
		char p[40];
		(void)fd_path(p, sizeof p, lay[i]);
		rc = set_str(fsfd, keys[i], p);
	}
	step = "configure overlayfs (fsconfig)";
	/* in a user namespace overlayfs keeps its own attributes as user.overlay.*; a rename of
	 * a directory is a copy and a whiteout (no redirects), every file copied up whole */
	if (rc == 0)
		rc = (int)syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_FLAG, "userxattr", NULL, 0);
	if (rc == 0)
		rc = set_str(fsfd, "redirect_dir", "nofollow");
	if (rc == 0)
		rc = set_str(fsfd, "metacopy", "off");
	if (rc == 0)
		rc = set_str(fsfd, "index", "off");
	if (rc < 0) {
		int saved = errno;
		fs_log(fsfd, detail, sizeof detail);
		return fail(r, step, saved, detail);
	}
	step = "mount overlayfs (fsconfig FSCONFIG_CMD_CREATE)";
	if (nsc_injected(&r->inject, step) ||
	    syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		int saved = errno;
		fs_log(fsfd, detail, sizeof detail);
		return fail(r, step, saved, detail);
	}
	step = "fsmount";
	*mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
			    MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (*mfd < 0)
		return fail(r, step, errno, NULL);
	(void)close(fsfd);
	step = "attach the overlay at its mount point (move_mount)";
	if (syscall(SYS_move_mount, *mfd, "", lay[3], "",
		    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return fail(r, step, errno, r->path[3]);
	return 0;
}

int ovlns_enter(const struct ovlns_req *r)
{
	const char *step;
	if (r->own_userns) {
		if (nsc_userns(r->uid, r->gid, CLONE_NEWNS, &r->inject, &step) < 0)
			return fail(r, step, errno, NULL);
	} else {
		step = "unshare(CLONE_NEWNS)";
		if (nsc_injected(&r->inject, step) || unshare(CLONE_NEWNS) < 0)
			return fail(r, step, errno, NULL);
	}
	step = "make the mounts private (mount MS_REC|MS_PRIVATE)";
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail(r, step, errno, NULL);
	int lay[4] = {-1, -1, -1, -1};
	int mfd = -1;
	if (open_layers(r, lay) < 0 || mount_overlay(r, lay, &mfd) < 0)
		return -1;
	for (size_t i = 0; i < r->n; i++) {
		step = "open a bind source in the overlay";
		long fd = r->rel[i][0] ? openat2_(mfd, r->rel[i], O_PATH | O_CLOEXEC,
						  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
							  RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV)
				       : fcntl(mfd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return fail(r, step, errno, r->rel[i][0] ? r->rel[i] : ".");
		struct stat st;
		int parked = dup3((int)fd, r->high + (int)i, O_CLOEXEC);
		if (parked < 0 || fstat(parked, &st) < 0)
			return fail(r, step, errno, r->rel[i]);
		(void)close((int)fd);
		struct ovlns_msg m;
		memset(&m, 0, sizeof m);
		m.kind = MSG_ID;
		m.index = (uint32_t)i;
		m.dev = st.st_dev;
		m.ino = st.st_ino;
		m.mode = st.st_mode & S_IFMT;
		send_msg(r->sock, &m);
	}
	for (int i = 0; i < 4; i++)
		(void)close(lay[i]);
	(void)close(mfd);
	struct ovlns_msg done;
	memset(&done, 0, sizeof done);
	done.kind = MSG_DONE;
	send_msg(r->sock, &done);
	return 0;
}

int ovlns_place(const struct ovlns_req *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (dup2(r->high + (int)i, r->fd[i]) < 0) /* dup2 clears CLOEXEC on the copy */
			return -1;
	return 0;
}

/* ---- the parent ------------------------------------------------------------------------- */

#define OVL_FAILED "--fs review: the workspace's overlay could not be mounted: %s failed"

static int explain(const struct ovlns_msg *m, struct err *e)
{
	const char *step = m->step;
	const char *detail = m->detail;
	bool ns_step = !strncmp(step, "unshare", 7) || !strncmp(step, "write /proc/self", 16);
	if (ns_step) {
		struct userns_facts f;
		userns_facts_read(&f);
		struct userns_cause c = userns_diagnose(&f);
		err_set(e, m->errnum, NULL, OVL_FAILED " (%s)", step, c.cause);
		err_hint(e, "%s; nothing was run (review never falls back to workspace-write)",
			 c.fix);
		return -1;
	}
	if (!strncmp(step, "open a bind source", 18)) {
		err_set(e, m->errnum, detail, "--fs review: the change set holds something else at "
					      "this protected path or on the way to it than the "
					      "workspace (a symlink, or missing)");
		err_hint(e, "the session's earlier runs changed it: `agentjail diff` shows it, "
			    "then `agentjail apply`, `rollback` or `discard`; nothing was run");
		return -1;
	}
	if (!strncmp(step, "open ", 5)) {
		err_set(e, m->errnum, detail, OVL_FAILED, step);
		err_hint(e, m->errnum == ESTALE ? "the directory was replaced while the jail was set "
						  "up; run again"
						: "nothing was run; run again");
		return -1;
	}
	err_set(e, m->errnum, NULL, OVL_FAILED "%s%s", step, detail[0] ? ": " : "", detail);
	if (m->errnum == ENODEV)
		err_hint(e, "this kernel has no overlayfs (modprobe overlay); nothing was run");
	else
		err_hint(e, "overlayfs in a user namespace needs Linux 5.11 or later, and the state "
			    "directory on a file system that keeps user extended attributes (ext4, "
			    "xfs, btrfs; tmpfs since 6.6), not overlayfs, NFS or FUSE: set "
			    "AGENTJAIL_STATE_DIR elsewhere, or use --fs workspace-write; `agentjail "
			    "doctor` checks it; nothing was run");
	return -1;
}

int ovlns_receive(int sock, size_t n, int timeout_ms, struct ovlns_id *ids, struct err *e)
{
	size_t got_ids = 0;
	for (;;) {
		struct pollfd p = {.fd = sock, .events = POLLIN};
		int pr;
		while ((pr = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
			;
		if (pr <= 0)
			return err_set(e, pr < 0 ? errno : ETIMEDOUT, NULL,
				       "--fs review: the overlay's holder did not report within %d ms",
				       timeout_ms);
		struct ovlns_msg m;
		memset(&m, 0, sizeof m);
		ssize_t got;
		while ((got = recv(sock, &m, sizeof m, MSG_DONTWAIT)) < 0 && errno == EINTR)
			;
		if (got == 0)
			return err_set(e, 0, NULL, "--fs review: the overlay's holder ended without "
						   "reporting");
		if (got != (ssize_t)sizeof m)
			return err_set(e, got < 0 ? errno : EPROTO, NULL,
				       "--fs review: cannot read the overlay's report");
		m.step[sizeof m.step - 1] = m.detail[sizeof m.detail - 1] = '\0';
		if (m.kind == MSG_FAILED)
			return explain(&m, e);
		if (m.kind == MSG_DONE && got_ids == n)
			return 0;
		if (m.kind != MSG_ID || m.index != got_ids || m.index >= n)
			return err_set(e, EPROTO, NULL, "--fs review: the overlay's report is "
							"malformed");
		ids[got_ids++] = (struct ovlns_id){m.dev, m.ino, m.mode};
	}
}

int ovlns_probe(const char *base, const char *lower, struct err *e)
{
	_cleanup_free_ char *name = xasprintf(".agentjail-review-probe-%d", (int)getpid());
	struct bw_plan plan = {0};
	plan.ovl.dir = path_join(base, name);
	plan.ovl.lower = xstrdup(lower);
	plan.ovl.upper = path_join(plan.ovl.dir, REVIEW_UPPER);
	plan.ovl.work = path_join(plan.ovl.dir, REVIEW_WORK);
	plan.ovl.mnt = path_join(plan.ovl.dir, REVIEW_MNT);
	int rc = 0;
	const char *dirs[] = {plan.ovl.dir, plan.ovl.upper, plan.ovl.work, plan.ovl.mnt};
	for (size_t i = 0; i < 4 && rc == 0; i++)
		if (mkdir(dirs[i], 0700) < 0)
			rc = err_set(e, errno, dirs[i], "cannot make the probe's directory");
	struct ovlns_req req;
	req_init(&req);
	int sock = -1;
	if (rc == 0)
		rc = ovlns_prepare(&plan, &req, &sock, e);
	req.high = 64; /* nothing to park: no source */
	pid_t pid = rc == 0 ? fork() : -1;
	if (pid == 0)
		_exit(ovlns_enter(&req) == 0 ? 0 : 1);
	if (rc == 0 && pid < 0)
		rc = err_set(e, errno, NULL, "cannot fork the overlay probe");
	if (req.sock >= 0) {
		(void)close(req.sock);
		req.sock = -1;
	}
	if (rc == 0)
		rc = ovlns_receive(sock, 0, 5000, NULL, e);
	if (pid > 0) {
		if (rc < 0)
			(void)kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (sock >= 0)
		(void)close(sock);
	ovlns_req_free(&req);
	(void)fs_remove_tree(plan.ovl.dir);
	bw_plan_free(&plan);
	return rc;
}
