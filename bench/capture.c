/* bench/capture: the capture of direct connections (doc/design.md §4), in a real `--net allow`
 * jail against servers on the host's loopback, each figure against the same client unjailed,
 * measured alternately in one run:
 * - throughput: one connection downloading MIB MiB from a local server, captured (the client
 *   connects to the name the jail's DNS stub answers for, mapped to 127.0.0.1) against direct;
 *   the ratio of the median times (goal >= 0.95: nothing of ours is on the data's path);
 * - connect latency: N blocking connects, each timed around connect() alone, captured against
 *   direct; the added median (goal <= 0.3 ms).
 * The servers run in threads of this process; the client is this program again (`client`
 * verbs), run directly and inside jails of AGENTJAIL from a scratch workspace.
 * usage: capture AGENTJAIL [MIB] [N] [ROUNDS] */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"

#define CHUNK (256 << 10)

static void die(const char *what)
{
	fprintf(stderr, "capture bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the client (run as `capture client-…`, in a jail or not) ---- */

static struct addrinfo *resolve(const char *host, const char *port)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	if (getaddrinfo(host, port, &hints, &res) != 0) {
		fprintf(stderr, "capture bench: cannot resolve %s\n", host);
		exit(1);
	}
	return res;
}

/* N connects to a server that closes at once; prints the median connect() time in µs. */
static int client_connect(const char *host, const char *port, int n)
{
	struct addrinfo *ai = resolve(host, port);
	double *t = malloc(sizeof *t * (size_t)n);
	char c;
	for (int i = 0; i < n; i++) {
		int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		double t0 = now_ms();
		if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
			die("connect");
		t[i] = (now_ms() - t0) * 1000;
		while (read(fd, &c, 1) > 0) /* the server closes first: its side keeps TIME_WAIT */
			;
		close(fd);
	}
	printf("%.1f\n", median(t, n));
	freeaddrinfo(ai);
	free(t);
	return 0;
}

/* One download to EOF; prints the seconds from connect to EOF and the bytes. */
static int client_download(const char *host, const char *port)
{
	struct addrinfo *ai = resolve(host, port);
	static char buf[CHUNK];
	double t0 = now_ms();
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
		die("connect");
	long long total = 0;
	ssize_t k;
	while ((k = read(fd, buf, sizeof buf)) > 0)
		total += k;
	printf("%.4f %lld\n", (now_ms() - t0) / 1000, total);
	close(fd);
	freeaddrinfo(ai);
	return 0;
}

/* ---- the servers (threads of the bench) ---- */

static long long mib;

static int listen_lo(uint16_t *port)
{
	int fd = bench_listen_lo(port);
	if (fd < 0)
		die("listen");
	return fd;
}

static void *serve_source(void *arg)
{
	int l = (int)(intptr_t)arg;
	static char buf[CHUNK];
	memset(buf, 'x', sizeof buf);
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c < 0)
			continue;
		for (long long left = mib << 20; left > 0;) {
			ssize_t k = write(c, buf, left < CHUNK ? (size_t)left : CHUNK);
			if (k <= 0)
				break;
			left -= k;
		}
		close(c);
	}
	return NULL;
}

static void *serve_close(void *arg)
{
	int l = (int)(intptr_t)arg;
	for (;;) {
		int c = accept(l, NULL, NULL);
		if (c >= 0)
			close(c);
	}
	return NULL;
}

/* Run argv, return its stdout's first line in out. */
static int run(char *const argv[], char *out, size_t cap)
{
	int p[2];
	if (pipe(p) < 0)
		die("pipe");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(p[1], 1);
		int devnull = open("/dev/null", O_WRONLY);
		dup2(devnull, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	size_t n = 0;
	ssize_t k;
	while (n < cap - 1 && (k = read(p[0], out + n, cap - 1 - n)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(p[0]);
	int ws;
	waitpid(pid, &ws, 0);
	return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && n ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "client-connect"))
		return client_connect(argv[2], argv[3], atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "client-download"))
		return client_download(argv[2], argv[3]);
	if (argc < 2) {
		fprintf(stderr, "usage: capture AGENTJAIL [MIB] [N] [ROUNDS]\n");
		return 2;
	}
	const char *aj = argv[1];
	mib = argc > 2 ? atoll(argv[2]) : 1024;
	int n = argc > 3 ? atoi(argv[3]) : 1000, rounds = argc > 4 ? atoi(argv[4]) : 3;
	uint16_t psrc, pclose;
	pthread_t t;
	pthread_create(&t, NULL, serve_source, (void *)(intptr_t)listen_lo(&psrc));
	pthread_create(&t, NULL, serve_close, (void *)(intptr_t)listen_lo(&pclose));

	/* a scratch workspace and state directory holding the client */
	char ws[] = "/tmp/aj-bench-capture.XXXXXX", self[4096], client[4200], state[4200];
	if (!mkdtemp(ws))
		die("mkdtemp");
	chmod(ws, 0755);
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	if (sl < 0)
		die("readlink");
	self[sl] = '\0';
	snprintf(client, sizeof client, "%s/capture", ws);
	snprintf(state, sizeof state, "%s/.state", ws);
	char cp[8400];
	snprintf(cp, sizeof cp, "cp '%s' '%s'", self, client);
	if (system(cp) != 0)
		die("cp");
	setenv("AGENTJAIL_STATE_DIR", state, 1);
	if (chdir(ws) < 0)
		die("chdir");
	char ssrc[8], sclose[8], map[64] = "bench.test=127.0.0.1", a1[64], a2[64], ns[16];
	snprintf(ssrc, sizeof ssrc, "%u", psrc);
	snprintf(sclose, sizeof sclose, "%u", pclose);
	snprintf(a1, sizeof a1, "bench.test:%u", psrc);
	snprintf(a2, sizeof a2, "bench.test:%u", pclose);
	snprintf(ns, sizeof ns, "%d", n);
	char *jail[] = {(char *)aj, "run", "--quiet", "--net", "allow", "--map-host", map,
			"--allow-domain", a1, "--allow-domain", a2, "--", client, NULL, NULL,
			NULL, NULL, NULL};
	const int jc = 13; /* where the client's arguments go */

	double down_d[16], down_j[16], con_d[16], con_j[16];
	char out[256];
	if (rounds > 16)
		rounds = 16;
	for (int r = 0; r < rounds; r++) {
		char *direct_dl[] = {client, "client-download", "127.0.0.1", ssrc, NULL};
		if (run(direct_dl, out, sizeof out) < 0)
			die("the direct download");
		down_d[r] = atof(out);
		jail[jc] = "client-download", jail[jc + 1] = "bench.test", jail[jc + 2] = ssrc;
		jail[jc + 3] = NULL;
		if (run(jail, out, sizeof out) < 0 || atoll(strchr(out, ' ') + 1) != mib << 20) {
			fprintf(stderr, "capture bench: the captured download failed: %s\n", out);
			return 1;
		}
		down_j[r] = atof(out);
		char *direct_c[] = {client, "client-connect", "127.0.0.1", sclose, ns, NULL};
		if (run(direct_c, out, sizeof out) < 0)
			die("the direct connects");
		con_d[r] = atof(out);
		jail[jc] = "client-connect", jail[jc + 1] = "bench.test", jail[jc + 2] = sclose;
		jail[jc + 3] = ns;
		if (run(jail, out, sizeof out) < 0) {
			fprintf(stderr, "capture bench: the captured connects failed\n");
			return 1;
		}
		con_j[r] = atof(out);
	}
	double md = median(down_d, rounds), mj = median(down_j, rounds);
	double cd = median(con_d, rounds), cj = median(con_j, rounds);
	printf("bench: capture-throughput %.3f (goal >= 0.95; %lld MiB in %.3f s captured, %.3f s "
	       "direct, median of %d)\n", md / mj, mib, mj, md, rounds);
	printf("bench: capture-connect-added-ms %.3f (goal <= 0.3; median connect %.1f us "
	       "captured, %.1f us direct, over %d connects, median of %d runs)\n",
	       (cj - cd) / 1000, cj, cd, n, rounds);
	snprintf(cp, sizeof cp, "rm -rf '%s'", ws);
	if (system(cp) != 0)
		fprintf(stderr, "capture bench: could not remove %s\n", ws);
	return 0;
}
