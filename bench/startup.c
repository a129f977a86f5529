/* bench/startup: `agentjail run -- /bin/true` against raw bwrap with the same view running
 * /bin/true directly (same argv, same fds, same seccomp filter; no init helper, no
 * snapshot), alternating, N pairs. Prints the medians and their ratio, then the lines
 * `bench: startup-ratio` (median of the pair ratios, goal <= 1.25), `bench: startup-ms`
 * (agentjail's median) and `bench: rss-kib` (agentjail's peak RSS during a run, goal <= 4096),
 * each name followed by $AJ_BENCH_SUFFIX (bench/startup.sh sets "-user" for the run as an
 * unprivileged user).
 * With RUN-OPTIONS (e.g. `--net allow`), agentjail runs with them while raw bwrap keeps the
 * default view, and the line is `bench: net-allow-startup RATIO (goal <= 1.5)`: what the
 * namespace holder and the proxy add to a start.
 * usage: startup AGENTJAIL [PAIRS [RUN-OPTIONS...]]   (run from the workspace directory) */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "core/plan/bwrap_argv.h"
#include "core/host/hostfacts_probe.h"
#include "core/backend/bwrap/launch.h"
#include "core/plan/policy.h"
#include "core/confine/seccomp.h"
#include "core/jail/pipeline.h"
#include "core/host/etcscan.h"
#include "core/jail/snapshot.h"
#include "util/fs.h"
#include "core/session/store.h"
#include "util/strv.h"

extern char **environ;

static const struct seccomp_opts sc_opts_default;

static int die(const char *what, const struct err *e)
{
	char buf[2600];
	if (e) {
		err_format(e, buf, sizeof buf);
		fprintf(stderr, "startup: %s: %s\n", what, buf);
	} else {
		fprintf(stderr, "startup: %s: %s\n", what, strerror(errno));
	}
	return 1;
}

struct raw {
	const char *bwrap;
	int *src, *dst;
	size_t n;
	int args_fd, sc_fd;
	char **argv;
};

static double time_raw(struct raw *r)
{
	(void)lseek(r->args_fd, 0, SEEK_SET);
	(void)lseek(r->sc_fd, 0, SEEK_SET);
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		for (size_t i = 0; i < r->n; i++) {
			int hi = fcntl(r->src[i], F_DUPFD_CLOEXEC, 200);
			r->src[i] = hi;
		}
		for (size_t i = 0; i < r->n; i++)
			if (dup2(r->src[i], r->dst[i]) < 0)
				_exit(125);
		char *envp[] = {NULL};
		execve(r->bwrap, r->argv, envp);
		_exit(127);
	}
	int ws;
	waitpid(pid, &ws, 0);
	double t = now_ms() - t0;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		fprintf(stderr, "startup: raw bwrap failed\n");
		exit(1);
	}
	return t;
}

static char **aj_argv; /* agentjail run [RUN-OPTIONS...] -- /bin/true */
static double time_agentjail(const char *aj);

/* A first run: `agentjail run -- /bin/true` with a state directory that does not exist yet
 * (a new user's first run, AGENTJAIL_STATE_DIR), median of n, in ms. */
static double first_run_ms(const char *aj, int n)
{
	double *t = calloc((size_t)n, sizeof *t);
	const char *saved = getenv("AGENTJAIL_STATE_DIR");
	char *keep = saved ? strdup(saved) : NULL;
	for (int i = 0; i < n; i++) {
		char dir[] = "/tmp/agentjail-bench-first.XXXXXX";
		if (!mkdtemp(dir)) {
			perror("startup: mkdtemp");
			exit(1);
		}
		char *state = NULL;
		if (asprintf(&state, "%s/state", dir) < 0)
			exit(1);
		setenv("AGENTJAIL_STATE_DIR", state, 1);
		t[i] = time_agentjail(aj);
		if (fs_remove_tree(dir) < 0)
			fprintf(stderr, "startup: cannot remove %s\n", dir);
		free(state);
	}
	if (keep)
		setenv("AGENTJAIL_STATE_DIR", keep, 1);
	else
		unsetenv("AGENTJAIL_STATE_DIR");
	free(keep);
	double m = median(t, n);
	free(t);
	return m;
}

/* What a first run on a machine pays (root only: nothing cached in /var/cache/agentjail yet):
 * the scans of /usr (with /usr/local) and /opt into an empty cache directory, in ms. */
static double cold_scan_ms(void)
{
	char dir[] = "/tmp/agentjail-bench-scan.XXXXXX";
	if (!mkdtemp(dir))
		return -1;
	double t0 = now_ms();
	static const char *const roots[] = {"/usr", "/opt", NULL};
	for (size_t i = 0; roots[i]; i++) {
		struct strv out = STRV_INIT;
		struct err e = {0};
		if (treescan_bound(dir, roots[i], true, &out, NULL, &e) < 0)
			err_clear(&e);
		strv_free(&out);
	}
	double t = now_ms() - t0;
	if (fs_remove_tree(dir) < 0)
		fprintf(stderr, "startup: cannot remove %s\n", dir);
	return t;
}

static double time_agentjail(const char *aj)
{
	/* its one-line banners (the allow-list) would drown the figures: kept aside, shown if the
	 * run fails */
	int errfd = memfd_create("agentjail-stderr", MFD_CLOEXEC);
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		if (errfd >= 0)
			(void)dup2(errfd, 2);
		execv(aj, aj_argv);
		_exit(127);
	}
	int ws;
	waitpid(pid, &ws, 0);
	double t = now_ms() - t0;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		fprintf(stderr, "startup: agentjail run failed (status %d); its stderr:\n", ws);
		char buf[4096];
		ssize_t n = errfd >= 0 ? pread(errfd, buf, sizeof buf, 0) : -1;
		if (n > 0)
			fwrite(buf, 1, (size_t)n, stderr);
		exit(1);
	}
	if (errfd >= 0)
		close(errfd);
	return t;
}

/* A field of a /proc/PID file, in kB; -1 when absent or unreadable. */
static long proc_kib(pid_t pid, const char *file, const char *field)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	long v = -1;
	size_t n = strlen(field);
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The resident set at exit by mapping name (the binary, libc, [heap], ...), largest first. */
static void print_rss_by_mapping(pid_t pid)
{
	char path[64], line[512], name[256] = "[anon]";
	struct { char name[256]; long kib; } m[64];
	int n = 0;
	snprintf(path, sizeof path, "/proc/%d/smaps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		char *sp = NULL;
		if (strchr(line, '-') && strchr(line, '-') < strchr(line, ' ') &&
		    sscanf(line, "%*s %*s %*s %*s %*s %255s", name) != 1)
			strcpy(name, "[anon]");
		if (strncmp(line, "Rss:", 4) != 0)
			continue;
		long kib = strtol(line + 4, &sp, 10);
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
		int i = 0;
		while (i < n && strcmp(m[i].name, base))
			i++;
		if (i == n && n < 64) {
			snprintf(m[n].name, sizeof m[n].name, "%s", base);
			m[n++].kib = 0;
		}
		if (i < n)
			m[i].kib += kib;
	}
	fclose(f);
	printf("  agentjail's resident set at exit:");
	for (int k = 0; k < 6 && k < n; k++) {
		int best = k;
		for (int i = k + 1; i < n; i++)
			if (m[i].kib > m[best].kib)
				best = i;
		if (best != k) {
			__typeof__(m[0]) t = m[k];
			m[k] = m[best];
			m[best] = t;
		}
		printf("%s %s %ld kB", k ? "," : "", m[k].name, m[k].kib);
	}
	printf("\n");
}

/* agentjail's own peak RSS over one run (its children, bwrap and the jail, not counted): the
 * child is traced only to stop it at its exit (PTRACE_EVENT_EXIT), before its memory is torn
 * down, where VmHWM is read; every other stop is resumed with its signal. The breakdown of the
 * resident set at exit (anonymous, file-backed) says what dominates. */
static long peak_rss_kib(const char *aj, long *anon, long *file)
{
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			(void)dup2(null, 2);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		execv(aj, aj_argv);
		_exit(127);
	}
	long hwm = -1;
	bool opts = false;
	for (;;) {
		int ws;
		if (waitpid(pid, &ws, 0) < 0)
			return -1;
		if (WIFEXITED(ws) || WIFSIGNALED(ws))
			break;
		int sig = 0;
		if (!opts) { /* the stop after exec */
			(void)ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_TRACEEXIT);
			opts = true;
		} else if (ws >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
			hwm = proc_kib(pid, "status", "VmHWM");
			*anon = proc_kib(pid, "status", "RssAnon");
			*file = proc_kib(pid, "status", "RssFile");
			print_rss_by_mapping(pid);
		} else {
			sig = WSTOPSIG(ws);
		}
		(void)ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
	}
	return hwm;
}

/* The session store's part of a run (overlapped with bwrap's setup in a real run, so not on its
 * critical path): open, the session's row, its end, close; in a scratch state directory. */
static double time_store(const char *dir, struct err *e)
{
	double t0 = now_ms();
	struct store *st = NULL;
	char id[STORE_ID_LEN + 1];
	struct session s = {.id = id, .workspace = "/nonexistent", .policy_json = "{}", .pid = 1};
	if (store_open(dir, NULL, &st, e) < 0 || store_new_id(id, e) < 0 ||
	    store_begin(st, &s, e) < 0 || store_finish(st, id, SESS_EXITED, 0, 0, e) < 0) {
		store_close(st);
		return -1;
	}
	store_close(st);
	return now_ms() - t0;
}

static void remove_flat_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			(void)unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	(void)rmdir(dir);
}

static void add(struct raw *r, int src, int dst)
{
	r->src = realloc(r->src, (r->n + 1) * sizeof *r->src);
	r->dst = realloc(r->dst, (r->n + 1) * sizeof *r->dst);
	r->src[r->n] = src;
	r->dst[r->n++] = dst;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: startup AGENTJAIL [PAIRS]\n");
		return 2;
	}
	int pairs = argc > 2 ? atoi(argv[2]) : 40;
	int nextra = argc > 3 ? argc - 3 : 0;
	aj_argv = calloc((size_t)nextra + 5, sizeof *aj_argv);
	aj_argv[0] = argv[1];
	aj_argv[1] = "run";
	for (int i = 0; i < nextra; i++)
		aj_argv[2 + i] = argv[3 + i];
	aj_argv[2 + nextra] = "--";
	aj_argv[3 + nextra] = "/bin/true";
	struct err e = {0};
	char *cwd = getcwd(NULL, 0);
	struct parse_ctx ctx = {.cwd = cwd, .home = getenv("HOME")};
	char *args[] = {"--", "/bin/true", NULL};
	struct run_request req;
	if (run_parse_args(2, args, &ctx, &req, &e) < 0)
		return die("policy", &e);
	/* the plan `run` makes (jail_prepare: the private caches and filtered configs exist before
	 * the plan binds them) */
	struct jail j;
	const struct jail_prep prep = {.make_caches = true};
	if (jail_prepare(&req, &prep, &j, &e) != JAIL_READY)
		return die("plan", &e);
	struct bw_plan plan = j.plan;
	struct raw r = {0};
	if (launch_find_bwrap(getenv("AGENTJAIL_BWRAP"), (char **)&r.bwrap, &e) < 0)
		return die("bwrap", &e);

	/* the same options through the same --args fd; the command is /bin/true itself */
	struct strv flat = STRV_INIT;
	bw_plan_argv(&plan, &flat);
	r.args_fd = memfd_create("args", MFD_CLOEXEC);
	for (size_t i = 0; i < flat.n; i++)
		if (write(r.args_fd, flat.v[i], strlen(flat.v[i]) + 1) < 0)
			return die("write", NULL);
	add(&r, r.args_fd, BW_FD_ARGS);
	struct seccomp_opts sc = {0};
	if (seccomp_build_fd(&sc, &r.sc_fd, &e) < 0)
		return die("seccomp", &e);
	add(&r, r.sc_fd, BW_FD_SECCOMP);
	add(&r, open("/dev/null", O_WRONLY | O_CLOEXEC), BW_FD_STATUS);
	add(&r, open(argv[1], O_PATH | O_CLOEXEC), BW_FD_INIT);
	for (size_t i = 0; i < plan.nops; i++) {
		if (!plan.ops[i].src)
			continue;
		int fd = open(plan.ops[i].src, O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			fprintf(stderr, "startup: cannot open %s: %s\n", plan.ops[i].src,
				strerror(errno));
			return 1;
		}
		add(&r, fd, plan.ops[i].fd);
	}
	char fdnum[16];
	snprintf(fdnum, sizeof fdnum, "%d", BW_FD_ARGS);
	char *bargv[] = {"bwrap", "--args", fdnum, "--", "/bin/true", NULL};
	r.argv = bargv;

	/* where agentjail's own time goes on the host, per phase, median of 30 */
	{
		enum { N = 30 };
		double g[N], bd[N], scm[N], sn[N], sto[N];
		char sdir[] = "/tmp/agentjail-bench-store.XXXXXX";
		if (!mkdtemp(sdir))
			return die("mkdtemp", NULL);
		for (int i = 0; i < N; i++) {
			struct run_request rq;
			struct hostfacts h;
			struct bw_plan pl;
			struct snapshot snap = {0};
			int fd = -1;
			hostfacts_init(&h);
			double t0 = now_ms();
			if (run_parse_args(2, args, &ctx, &rq, &e) < 0 ||
			    policy_canonicalize(&rq.pol, &e) < 0 ||
			    hostfacts_gather(&h, &rq.pol, &rq.cmd, environ, &e) < 0)
				return die("phase gather", &e);
			double t1 = now_ms();
			if (bwrap_build(&rq.pol, &h, &rq.cmd, &pl, &e) < 0)
				return die("phase build", &e);
			double t2 = now_ms();
			if (seccomp_build_fd(&sc_opts_default, &fd, &e) < 0)
				return die("phase seccomp", &e);
			double t3 = now_ms();
			if (snapshot_take(&pl.watch, &snap, &e) < 0)
				return die("phase snapshot", &e);
			double t4 = now_ms();
			g[i] = t1 - t0, bd[i] = t2 - t1, scm[i] = t3 - t2, sn[i] = t4 - t3;
			if ((sto[i] = time_store(sdir, &e)) < 0) {
				remove_flat_dir(sdir);
				return die("phase store", &e);
			}
			close(fd);
			snapshot_free(&snap);
			bw_plan_free(&pl);
			hostfacts_free(&h);
			run_request_free(&rq);
		}
		remove_flat_dir(sdir);
		printf("host phases (median of %d): facts %.3f ms, argv %.3f ms, seccomp %.3f ms, "
		       "snapshot %.3f ms, store %.3f ms (overlapped with bwrap)\n",
		       N, median(g, N), median(bd, N), median(scm, N), median(sn, N), median(sto, N));
	}

	double *a = calloc((size_t)pairs, sizeof *a), *b = calloc((size_t)pairs, sizeof *b);
	double *ratio = calloc((size_t)pairs, sizeof *ratio);
	(void)time_raw(&r); /* warm caches for both */
	(void)time_agentjail(argv[1]);
	for (int i = 0; i < pairs; i++) {
		if (i % 2) {
			a[i] = time_agentjail(argv[1]);
			b[i] = time_raw(&r);
		} else {
			b[i] = time_raw(&r);
			a[i] = time_agentjail(argv[1]);
		}
		ratio[i] = a[i] / b[i];
	}
	double ma = median(a, pairs), mb = median(b, pairs), mr = median(ratio, pairs);
	printf("startup: %d pairs, alternating\n", pairs);
	printf("  raw bwrap, same view, /bin/true : median %.2f ms\n", mb);
	if (!nextra)
		printf("  agentjail run -- /bin/true      : median %.2f ms\n", ma);
	if (nextra) {
		printf("  agentjail run");
		for (int i = 0; i < nextra; i++)
			printf(" %s", argv[3 + i]);
		printf(" -- /bin/true : median %.2f ms\n", ma);
		printf("bench: net-allow-startup %.3f (goal <= 1.4; median of pair ratios %.3f)\n",
		       ma / mb, mr);
		return 0;
	}
	printf("  ratio of medians %.3f, median of pair ratios %.3f\n", ma / mb, mr);
	const char *sfx = getenv("AJ_BENCH_SUFFIX") ? getenv("AJ_BENCH_SUFFIX") : "";
	printf("bench: startup-ratio%s %.3f (goal <= 1.25; median of %d paired ratios)\n", sfx, mr,
	       pairs);
	printf("bench: startup-ms%s %.2f (goal <= %.2f, 1.25 x raw bwrap's %.2f)\n", sfx, ma,
	       1.25 * mb, mb);
	double first = first_run_ms(argv[1], 5);
	if (geteuid() == 0)
		printf("bench: first-run-ms%s %.1f (goal: no foreground scan over 300 ms; a run with a "
		       "new state directory, median of 5; a machine's very first run also scans /usr "
		       "and /opt: %.0f ms here)\n", sfx, first, cold_scan_ms());
	else
		printf("bench: first-run-ms%s %.1f (goal: no foreground scan over 300 ms; a run with a "
		       "new state directory, median of 5; no scan as a user)\n", sfx, first);
	long anon = -1, file = -1;
	long rss = peak_rss_kib(argv[1], &anon, &file);
	printf("bench: rss-kib%s %ld (goal <= 4096; at exit %ld kB anonymous, %ld kB file-backed)\n",
	       sfx, rss, anon, file);
	return 0;
}
