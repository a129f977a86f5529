/* bench/capture: the capture of direct connections (doc/design.md §4), in a real `--net allow`
 * jail against servers on the host's loopback, each figure against the same client unjailed,
 * measured alternately in one run:
 * - throughput: one connection downloading MIB MiB from a local server, captured (the client
 *   connects to the name the jail's DNS stub answers for, mapped to 127.0.0.1) against direct;
 *   the median of ROUNDS paired ratios of the times. On a port that is not judged (goal
 *   >= 0.95: nothing of ours is on the data's path), and on one that is (an allow entry
 *   NAME:PORT/http: the client sends an HTTP request first, whose Host is checked, and the
 *   connection is relayed by the proxy; goal >= 0.8, the proxy's);
 * - connect latency: N blocking connects, each timed around connect() alone, captured against
 *   direct; the median of the paired differences of their medians (goal <= 0.3 ms).
 * The servers run in threads of this process; the client is this program again (`client`
 * verbs), run directly and inside jails of AGENTJAIL from a scratch workspace.
 * usage: capture AGENTJAIL [MIB] [N] [ROUNDS] */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
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

/* A CONNECT tunnel to host:port through the jail's proxy, its answer read. */
static int tunnel(const char *host, const char *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(3128)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char req[300], head[1024];
	int n = snprintf(req, sizeof req, "CONNECT %s:%s HTTP/1.1\r\n\r\n", host, port);
	size_t got = 0;
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    write(fd, req, (size_t)n) != n)
		die("the proxy");
	while (got < sizeof head - 1 && read(fd, head + got, 1) == 1) /* the head, not beyond */
		if (++got >= 4 && !memcmp(head + got - 4, "\r\n\r\n", 4))
			break;
	head[got] = '\0';
	if (strncmp(head, "HTTP/1.1 200", 12))
		die("the proxy's answer");
	return fd;
}

/* One download to EOF (after an HTTP request naming host, when mode is "http" or "tunnel": the
 * latter through a CONNECT tunnel of the jail's proxy); prints the seconds from connect to EOF
 * and the bytes. */
static int client_download(const char *host, const char *port, const char *mode)
{
	static char buf[CHUNK];
	double t0 = now_ms();
	int fd;
	if (!strcmp(mode, "tunnel")) {
		fd = tunnel(host, port);
	} else {
		struct addrinfo *ai = resolve(host, port);
		t0 = now_ms();
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0)
			die("connect");
		freeaddrinfo(ai);
	}
	int n = *mode ? snprintf(buf, sizeof buf, "GET /bench HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		      : 0;
	if (n > 0 && write(fd, buf, (size_t)n) != n)
		die("write");
	long long total = 0;
	ssize_t k;
	while ((k = read(fd, buf, sizeof buf)) > 0)
		total += k;
	printf("%.4f %lld\n", (now_ms() - t0) / 1000, total);
	close(fd);
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

struct source {
	int l;
	bool http; /* read a request head first */
};

static void *serve_source(void *arg)
{
	const struct source *src = arg;
	static char buf[2][CHUNK];
	char *out = buf[src->http];
	memset(out, 'x', CHUNK);
	for (;;) {
		int c = accept(src->l, NULL, NULL);
		if (c < 0)
			continue;
		char head[4096];
		size_t hn = 0;
		ssize_t k;
		while (src->http && hn < sizeof head - 1 &&
		       (k = read(c, head + hn, sizeof head - 1 - hn)) > 0) {
			hn += (size_t)k;
			head[hn] = '\0';
			if (strstr(head, "\r\n\r\n"))
				break;
		}
		for (long long left = mib << 20; left > 0;) {
			k = write(c, out, left < CHUNK ? (size_t)left : CHUNK);
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

static char err_path[4200]; /* where a run's stderr goes */

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
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (err >= 0)
			dup2(err, 2); /* kept for a failure's words */
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
	if (WIFEXITED(ws) && WEXITSTATUS(ws) == 0 && n)
		return 0;
	char msg[2048] = "";
	int ef = open(err_path, O_RDONLY | O_CLOEXEC);
	ssize_t m = ef >= 0 ? read(ef, msg, sizeof msg - 1) : 0;
	if (ef >= 0)
		close(ef);
	msg[m > 0 ? m : 0] = '\0';
	fprintf(stderr, "capture bench: %s %s failed: %s%s", argv[0], argv[1], out, msg);
	return -1;
}

/* A download by the client in the jail (jail's arguments from jc on): to bench.test:port, mode
 * as client_download's (NULL: none); its seconds in *t. */
static int jail_download(char **jail, int jc, char *port, char *mode, double *t)
{
	char out[256];
	jail[jc] = "client-download", jail[jc + 1] = "bench.test";
	jail[jc + 2] = port, jail[jc + 3] = mode, jail[jc + 4] = NULL;
	if (run(jail, out, sizeof out) < 0 || !strchr(out, ' ') ||
	    atoll(strchr(out, ' ') + 1) != mib << 20) {
		fprintf(stderr, "capture bench: the download from the jail (port %s%s%s) failed: %s\n",
			port, mode ? ", " : "", mode ? mode : "", out);
		return -1;
	}
	*t = atof(out);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "client-connect"))
		return client_connect(argv[2], argv[3], atoi(argv[4]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "client-download"))
		return client_download(argv[2], argv[3], argc == 5 ? argv[4] : "");
	if (argc < 2) {
		fprintf(stderr, "usage: capture AGENTJAIL [MIB] [N] [ROUNDS]\n");
		return 2;
	}
	const char *aj = argv[1];
	mib = argc > 2 ? atoll(argv[2]) : 1024;
	int n = argc > 3 ? atoi(argv[3]) : 1000, rounds = argc > 4 ? atoi(argv[4]) : 3;
	uint16_t psrc, pclose, phttp;
	pthread_t t;
	static struct source plain, judged = {.http = true};
	plain.l = listen_lo(&psrc);
	judged.l = listen_lo(&phttp);
	pthread_create(&t, NULL, serve_source, &plain);
	pthread_create(&t, NULL, serve_source, &judged);
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
	snprintf(err_path, sizeof err_path, "%s/.err", ws);
	char cp[8400];
	snprintf(cp, sizeof cp, "cp '%s' '%s'", self, client);
	if (system(cp) != 0)
		die("cp");
	setenv("AGENTJAIL_STATE_DIR", state, 1);
	if (chdir(ws) < 0)
		die("chdir");
	char ssrc[8], sclose[8], shttp[8], map[64] = "bench.test=127.0.0.1", a1[64], a2[64], a3[64];
	char ns[16];
	snprintf(ssrc, sizeof ssrc, "%u", psrc);
	snprintf(sclose, sizeof sclose, "%u", pclose);
	snprintf(shttp, sizeof shttp, "%u", phttp);
	snprintf(a1, sizeof a1, "bench.test:%u", psrc);
	snprintf(a2, sizeof a2, "bench.test:%u", pclose);
	snprintf(a3, sizeof a3, "bench.test:%u/http", phttp);
	snprintf(ns, sizeof ns, "%d", n);
	char *jail[] = {(char *)aj, "run", "--quiet", "--net", "allow", "--map-host", map,
			"--allow-domain", a1, "--allow-domain", a2, "--allow-domain", a3, "--",
			client, NULL, NULL, NULL, NULL, NULL};
	const int jc = 15; /* where the client's arguments go */

	/* each round measures both, in turns (direct first, then captured first): a figure is the
	 * median of the rounds' ratios, so load that comes and goes on a shared machine weighs on
	 * both sides alike */
	double ratio[32], added[32], mj[32], md[32], cj[32], cd[32], hratio[32], hj[32], hd[32];
	double tj[32], tratio[32];
	char out[256];
	if (rounds > 32)
		rounds = 32;
	bool failed = false;
	for (int r = 0; r < rounds && !failed; r++) {
		char *direct_dl[] = {client, "client-download", "127.0.0.1", ssrc, NULL};
		char *direct_c[] = {client, "client-connect", "127.0.0.1", sclose, ns, NULL};
		char *direct_h[] = {client, "client-download", "bench.test", shttp, "http", NULL};
		for (int k = 0; k < 2; k++) {
			if ((k == 0) == (r % 2 == 0)) {
				if (run(direct_dl, out, sizeof out) < 0)
					die("the direct download");
				md[r] = atof(out);
				direct_h[2] = "127.0.0.1";
				if (run(direct_h, out, sizeof out) < 0)
					die("the direct download (HTTP)");
				hd[r] = atof(out);
				if (run(direct_c, out, sizeof out) < 0)
					die("the direct connects");
				cd[r] = atof(out);
				continue;
			}
			if (jail_download(jail, jc, ssrc, NULL, &mj[r]) < 0 ||
			    jail_download(jail, jc, shttp, "http", &hj[r]) < 0 ||
			    jail_download(jail, jc, shttp, "tunnel", &tj[r]) < 0) {
				failed = true;
				break;
			}
			jail[jc] = "client-connect", jail[jc + 1] = "bench.test";
			jail[jc + 2] = sclose, jail[jc + 3] = ns;
			if (run(jail, out, sizeof out) < 0) {
				fprintf(stderr, "capture bench: the captured connects failed\n");
				failed = true;
				break;
			}
			cj[r] = atof(out);
		}
		ratio[r] = md[r] / mj[r];
		hratio[r] = hd[r] / hj[r];
		tratio[r] = hd[r] / tj[r];
		added[r] = (cj[r] - cd[r]) / 1000;
	}
	snprintf(cp, sizeof cp, "rm -rf '%s'", ws);
	if (system(cp) != 0)
		fprintf(stderr, "capture bench: could not remove %s\n", ws);
	if (failed)
		return 1;
	double mr = median(ratio, rounds), ma = median(added, rounds), mh = median(hratio, rounds);
	printf("bench: capture-throughput %.3f (goal >= 0.95; %lld MiB on a port that is not "
	       "judged, median of %d paired ratios; captured %.3f s, direct %.3f s, medians)\n",
	       mr, mib, rounds, median(mj, rounds), median(md, rounds));
	printf("bench: capture-judged-throughput %.3f (goal >= 0.8, the proxy's; %lld MiB on a port "
	       "that carries HTTP, relayed, median of %d paired ratios; captured %.3f s, direct "
	       "%.3f s, medians; the same through a CONNECT tunnel from the jail %.3f s, ratio "
	       "%.3f)\n", mh, mib, rounds, median(hj, rounds), median(hd, rounds),
	       median(tj, rounds), median(tratio, rounds));
	printf("bench: capture-connect-added-ms %.3f (goal <= 0.3; the median connect over %d "
	       "connects, captured %.1f us, direct %.1f us, median of %d paired differences)\n",
	       ma, n, median(cj, rounds), median(cd, rounds), rounds);
	return 0;
}
