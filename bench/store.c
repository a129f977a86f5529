/* bench/store: what the session store adds to a run — store_open, store_begin, store_finish,
 * store_close on a warm database (N sessions already in it), each in a fresh child process as
 * `agentjail run` would do it (SQLite's first use in a process included). Prints the medians.
 * usage: store [RUNS] [EXISTING_SESSIONS]   (works in a scratch directory under /tmp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "benchutil.h"
#include "core/session/store.h"

static int die(const char *what, const struct err *e)
{
	char buf[2600];
	err_format(e, buf, sizeof buf);
	fprintf(stderr, "store bench: %s: %s\n", what, buf);
	return 1;
}

enum { T_OPEN, T_BEGIN, T_FINISH, T_CLOSE, T_N };

/* One run's worth of store work; the four durations go to fd. */
static int one_run(const char *dir, int fd)
{
	static char policy[] = "{\"version\":1,\"fs\":\"workspace-write\",\"net\":\"off\","
			       "\"workspace\":\"/home/u/proj\",\"workspace_explicit\":false,"
			       "\"rw\":[],\"ro\":[],\"hide\":[],\"dev\":[],\"env\":[],"
			       "\"allow_ptrace\":false}";
	struct err e = {0};
	double t[T_N + 1];
	struct store *st;
	t[0] = now_ms();
	if (store_open(dir, NULL, &st, &e) < 0)
		return die("open", &e);
	t[1] = now_ms();
	char id[STORE_ID_LEN + 1];
	long long start;
	if (store_new_id(id, &e) < 0 || store_proc_start(0, &start, &e) < 0)
		return die("id", &e);
	struct session s = {.id = id, .profile = "claude", .workspace = "/home/u/proj",
			    .policy_json = policy, .pid = getpid(), .pid_start = start};
	char *argv[] = {"claude", "--dangerously-skip-permissions", NULL};
	s.argv.v = argv;
	s.argv.n = 2;
	/* a bwrap argv of a realistic size: ~3 KB */
	char bw[3200];
	size_t off = (size_t)snprintf(bw, sizeof bw, "[\"bwrap\"");
	while (off < sizeof bw - 64)
		off += (size_t)snprintf(bw + off, sizeof bw - off, ",\"--ro-bind\",\"/usr/lib\"");
	snprintf(bw + off, sizeof bw - off, "]");
	s.bwrap_json = bw;
	if (store_begin(st, &s, &e) < 0)
		return die("begin", &e);
	t[2] = now_ms();
	if (store_finish(st, id, SESS_EXITED, 0, 0, &e) < 0)
		return die("finish", &e);
	t[3] = now_ms();
	store_close(st);
	t[4] = now_ms();
	double d[T_N];
	for (int i = 0; i < T_N; i++)
		d[i] = t[i + 1] - t[i];
	return write(fd, d, sizeof d) == (ssize_t)sizeof d ? 0 : 1;
}

/* Run one_run in a child; 0 and the durations, or -1. */
static int in_child(const char *dir, double d[T_N])
{
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(p[0]);
		_exit(one_run(dir, p[1]));
	}
	close(p[1]);
	ssize_t n = read(p[0], d, sizeof(double) * T_N);
	close(p[0]);
	int ws;
	waitpid(pid, &ws, 0);
	return n == (ssize_t)(sizeof(double) * T_N) && WIFEXITED(ws) && !WEXITSTATUS(ws) ? 0 : -1;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 50;
	int existing = argc > 2 ? atoi(argv[2]) : 1000;
	if (runs < 1)
		runs = 1;
	char dir[] = "/tmp/aj-bench-store-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	double d[T_N];
	for (int i = 0; i < existing; i++) /* the warm database */
		if (in_child(dir, d) < 0)
			return 1;
	double *v[T_N], *tot = calloc((size_t)runs, sizeof *tot);
	for (int k = 0; k < T_N; k++)
		v[k] = calloc((size_t)runs, sizeof *v[k]);
	for (int i = 0; i < runs; i++) {
		if (in_child(dir, d) < 0)
			return 1;
		for (int k = 0; k < T_N; k++) {
			v[k][i] = d[k];
			tot[i] += d[k];
		}
	}
	static const char *const name[T_N] = {"open", "begin", "finish", "close"};
	printf("store, %d sessions already, %d runs, median ms:", existing, runs);
	for (int k = 0; k < T_N; k++)
		printf(" %s %.3f", name[k], median(v[k], runs));
	printf("  total %.3f\n", median(tot, runs));
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : 1;
}
