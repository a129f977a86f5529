/* avail: run the jail `run` would build, on /bin/true, and say whether it works here. */
#include "core/backend/bwrap/avail.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/plan/bwrap_argv.h"
#include "core/host/toolprep.h"
#include "core/backend/bwrap/launch.h"
#include "core/jail/pipeline.h"
#include "core/jail/self.h"
#include "core/plan/policy.h"
#include "core/plan/toolcache.h"
#include "util/cleanup.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/fs.h"
#include "util/xalloc.h"
#include "util/clock.h"


/* What the probe child reports back, through a shared anonymous mapping (it closes every
 * inherited fd >= 3 while hardening itself, as run does, so a pipe would not survive). */
struct shared {
	int rc; /* 0: launch_run ran; -1: e says why not */
	bool started;
	int status;
	struct err e;
};

/* Stderr of the probe is kept to this much. */
#define MSG_MAX 4096

/* ---------------------------------------------------------------------------------------- */
/* The child: the jail exactly as run builds it (core/jail/pipeline.h), then launched. */

/* The scratch workspace's private caches (made empty for the probe's jail, as run would):
 * gone with it, so `agentjail cache` never lists a doctor's scratch directory. */
static void forget_caches(const struct jail *j, const struct run_request *req)
{
	_cleanup_free_ char *root = toolcache_root(j->hf.state_dir, req->pol.workspace,
						   CACHE_WORKSPACE);
	struct cache_entry c = {.kind = CACHE_KIND_WORKSPACE, .dir = root};
	uint64_t freed;
	struct err ignored = {0};
	if (root && toolprep_cache_remove(&c, &freed, &ignored) < 0)
		err_clear(&ignored);
}

static int probe_jail(const char *ws, const char *quarantine, const char *bwrap, struct shared *sh)
{
	_cleanup_free_ char *ws_copy = xstrdup(ws);
	char a0[] = "--workspace", a2[] = "--", a3[] = "/bin/true";
	char *args[] = {a0, ws_copy, a2, a3, NULL};
	const char *home = getenv("HOME");
	struct parse_ctx ctx = {.cwd = ws, .home = home};
	struct run_request req;
	if (run_parse_args(4, args, &ctx, &req, &sh->e) < 0)
		return -1;
	int rc = policy_validate(&req.pol, home, &sh->e);
	if (rc == 0)
		rc = launch_harden_self(true, &sh->e);
	if (rc == 0) {
		/* doctor never creates the state directory: without one, the probe's jail goes
		 * without the private caches that would live there */
		struct jail_prep o = {.make_caches = true, .no_new_state_dir = true};
		struct jail j;
		rc = jail_prepare(&req, &o, &j, &sh->e) == JAIL_READY ? 0 : -1;
		if (rc == 0) {
			struct launch_result lr;
			rc = jail_launch(&req, &j, bwrap, quarantine, NULL, &lr, &sh->e);
			if (rc == 0) {
				sh->started = lr.started;
				sh->status = lr.status;
				/* bwrap's own words came on a pipe (launch.h): into our stderr, the
				 * memory file the parent reads */
				if (lr.bwrap_stderr &&
				    fs_write_all(STDERR_FILENO, lr.bwrap_stderr,
						 strlen(lr.bwrap_stderr)) < 0)
					err_set(&sh->e, errno, NULL, "cannot keep bwrap's message");
			}
			launch_result_free(&lr); /* filled either way (launch.h) */
		}
		forget_caches(&j, &req);
		jail_free(&j);
	}
	run_request_free(&req);
	return rc;
}

/* Never returns. stdin/stdout on /dev/null, stderr on errfd, cwd the scratch workspace. */
static void probe_child(const char *ws, const char *quarantine, const char *bwrap, int errfd,
                        struct shared *sh)
{
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(errfd, 2) < 0) {
		err_set(&sh->e, errno, "/dev/null", "cannot redirect the probe's standard fds");
		_exit(0);
	}
	if (chdir(ws) < 0) {
		err_set(&sh->e, errno, ws, "cannot enter the probe's workspace");
		_exit(0);
	}
	sh->rc = probe_jail(ws, quarantine, bwrap, sh);
	_exit(0);
}

/* ---------------------------------------------------------------------------------------- */
/* The parent: wait with a deadline, collect the child's stderr. */

/* Wait for pid until deadline (CLOCK_MONOTONIC ms); kill it then. true when it exited in time. */
static bool wait_until(pid_t pid, long deadline)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	for (;;) {
		int ws;
		pid_t w = waitpid(pid, &ws, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		long left = deadline - clock_mono_ms();
		if (left <= 0) {
			(void)kill(pid, SIGKILL);
			while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
				;
			if (pfd >= 0)
				(void)close(pfd);
			return false;
		}
		if (pfd >= 0) {
			struct pollfd p = {.fd = pfd, .events = POLLIN};
			(void)poll(&p, 1, (int)(left > 1000 ? 1000 : left));
		} else {
			struct timespec ts = {0, 5 * 1000000L};
			(void)nanosleep(&ts, NULL);
		}
	}
	if (pfd >= 0)
		(void)close(pfd);
	return true;
}

/* The memory file's content, trimmed of surrounding whitespace. */
static char *read_message(int fd)
{
	char *buf = xmalloc(MSG_MAX + 1);
	ssize_t n = pread(fd, buf, MSG_MAX, 0);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	char *s = buf;
	while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r')
		s++;
	size_t len = strlen(s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\n' || s[len - 1] == '\t' ||
	               s[len - 1] == '\r'))
		s[--len] = '\0';
	char *out = xstrdup(s);
	free(buf);
	return out;
}

static void fill_outcome(struct avail_result *r, const struct shared *sh, bool in_time)
{
	if (!in_time) {
		r->outcome = AVAIL_TIMEOUT;
	} else if (sh->rc < 0) {
		r->outcome = AVAIL_PREPARE;
		r->prep_err = sh->e;
	} else if (!sh->started) {
		r->outcome = AVAIL_NOT_STARTED;
		r->status = sh->status;
		struct userns_facts f;
		avail_userns_facts(&f);
		userns_facts_note_bwrap(&f, r->message);
		r->diag = userns_diagnose(&f);
	} else {
		r->status = sh->status;
		r->outcome = sh->status == 0 ? AVAIL_OK : AVAIL_CMD_FAILED;
	}
	r->ok = r->outcome == AVAIL_OK;
}

static int run_probe(const char *scratch, struct avail_result *r, struct err *e)
{
	_cleanup_free_ char *ws = path_join(scratch, "ws");
	_cleanup_free_ char *quarantine = path_join(scratch, "quarantine");
	if (mkdir(ws, 0700) < 0)
		return err_set(e, errno, ws, "cannot create the probe's workspace");
	_cleanup_close_ int errfd = memfd_create("agentjail-avail-stderr", MFD_CLOEXEC);
	if (errfd < 0)
		return err_set(e, errno, NULL, "cannot create a memory file for bwrap's messages");
	struct shared *sh =
	        mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return err_set(e, errno, NULL, "cannot map memory for the probe's result");
	memset(sh, 0, sizeof *sh);
	sh->rc = -1;
	err_set(&sh->e, 0, NULL, "the probe process ended without a result");
	long start = clock_mono_ms();
	pid_t pid = fork();
	if (pid < 0) {
		int saved = errno;
		(void)munmap(sh, sizeof *sh);
		return err_set(e, saved, NULL, "cannot fork the availability probe");
	}
	if (pid == 0)
		probe_child(ws, quarantine, r->bwrap, errfd, sh);
	bool in_time = wait_until(pid, start + AVAIL_TIMEOUT_MS);
	r->elapsed_ms = clock_mono_ms() - start;
	r->message = read_message(errfd);
	fill_outcome(r, sh, in_time);
	(void)munmap(sh, sizeof *sh);
	return 0;
}

int avail_probe(struct avail_result *r, struct err *e)
{
	memset(r, 0, sizeof *r);
	r->status = -1;
	r->outcome = AVAIL_PREPARE;
	if (launch_find_bwrap(getenv("AGENTJAIL_BWRAP"), &r->bwrap, e) < 0)
		return -1;
	char scratch[] = "/tmp/agentjail-avail-XXXXXX";
	if (!mkdtemp(scratch))
		return err_set(e, errno, "/tmp", "cannot create a scratch directory for the probe");
	int rc = run_probe(scratch, r, e);
	if (fs_remove_tree(scratch) < 0)
		r->leftover = xstrdup(scratch);
	return rc;
}

void avail_result_free(struct avail_result *r)
{
	free(r->bwrap);
	free(r->message);
	free(r->leftover);
	memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------------------- */
/* User namespace facts */

static bool write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t len = strlen(s);
	bool ok = write(fd, s, len) == (ssize_t)len;
	return close(fd) == 0 && ok;
}

bool avail_userns_works(void)
{
	uid_t uid = getuid();
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		char map[64];
		snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		/* "deny" first: an unprivileged writer may not map gids otherwise; absent before
		 * Linux 3.19, which is fine */
		(void)write_str("/proc/self/setgroups", "deny");
		_exit(write_str("/proc/self/uid_map", map) ? 0 : 2);
	}
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0) {
		if (errno != EINTR)
			return false;
	}
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
}

#ifdef AJ_TEST_BUILD
static long fake_long(const char *root, const char *rel, long dflt)
{
	_cleanup_free_ char *p = path_join(root, rel);
	_cleanup_fclose_ FILE *f = fopen(p, "re");
	long v = dflt;
	if (f && fscanf(f, "%ld", &v) != 1)
		v = dflt;
	return v;
}

static bool fake_exists(const char *root, const char *rel)
{
	_cleanup_free_ char *p = path_join(root, rel);
	return access(p, F_OK) == 0;
}

static void fake_facts(const char *root, struct userns_facts *f)
{
	memset(f, 0, sizeof *f);
	f->uid = (int)getuid();
	f->apparmor_restrict =
	        (int)fake_long(root, "sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	f->max_user_ns = fake_long(root, "sys/user/max_user_namespaces", -1);
	f->unpriv_clone = (int)fake_long(root, "sys/kernel/unprivileged_userns_clone", -1);
	f->in_container = fake_exists(root, "agentjail-test/container");
	_cleanup_free_ char *k = path_join(root, "sys/kernel");
	struct stat st;
	f->proc_masked = stat(k, &st) < 0 || !S_ISDIR(st.st_mode) || access(k, R_OK) != 0;
	f->userns_works = fake_long(root, "agentjail-test/userns_works", 0) == 1;
	_cleanup_free_ char *aa = path_join(root, "apparmor/profiles");
	_cleanup_fclose_ FILE *af = fopen(aa, "re");
	char list[4096] = "";
	size_t n = af ? fread(list, 1, sizeof list - 1, af) : 0;
	list[n] = '\0';
	f->aa_agentjail = userns_aa_loaded(af ? list : NULL, "agentjail");
	f->aa_bwrap = userns_aa_loaded(af ? list : NULL, "bwrap");
}
#endif

void avail_userns_facts(struct userns_facts *f)
{
#ifdef AJ_TEST_BUILD
	const char *root = getenv("AGENTJAIL_TEST_PROCFS");
	if (root && root[0] == '/') {
		fake_facts(root, f);
		return;
	}
#endif
	userns_facts_read(f);
	f->userns_works = f->userns_works && avail_userns_works();
}
