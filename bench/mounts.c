/* bench/mounts: what one bind mount costs raw bwrap. bwrap re-reads /proc/self/mountinfo for the
 * binds it makes read-only, so each mount costs more as the mount table grows. Runs `bwrap
 * <a minimal view> + N file binds -- /bin/true` for N = 0, 10, 25, 50, 100, 150, 200, the binds
 * read-only (--ro-bind) and writable (--bind), R runs each, interleaved, and prints the median
 * per N and the cost per added mount.
 * usage: mounts [R]   (doc/design.md §7 quotes its figures) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"

static const int counts[] = {0, 10, 25, 50, 100, 150, 200};
enum { NC = sizeof counts / sizeof counts[0], MAXN = 200 };

static char *find_bwrap(void)
{
	const char *env = getenv("AGENTJAIL_BWRAP");
	if (env)
		return strdup(env);
	const char *dirs[] = {"/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap", NULL};
	for (int i = 0; dirs[i]; i++)
		if (access(dirs[i], X_OK) == 0)
			return strdup(dirs[i]);
	return NULL;
}

static double run_once(char **argv)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		char *envp[] = {NULL};
		execve(argv[0], argv, envp);
		_exit(127);
	}
	int ws;
	if (pid < 0 || waitpid(pid, &ws, 0) < 0 || !WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
		fprintf(stderr, "mounts: bwrap failed\n");
		exit(1);
	}
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 30;
	if (reps < 1)
		reps = 30;
	char *bwrap = find_bwrap();
	if (!bwrap) {
		fprintf(stderr, "mounts: no bwrap found (set AGENTJAIL_BWRAP)\n");
		return 1;
	}
	static const char *base[] = {"--unshare-all", "--die-with-parent", "--ro-bind", "/usr", "/usr",
				     "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
				     "--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev",
				     "--tmpfs", "/tmp", NULL};
	size_t nb = 0;
	while (base[nb])
		nb++;
	char **av = calloc(nb + 4 * MAXN + 4, sizeof *av);
	static char dst[MAXN][32];
	double *t[2][NC];
	for (int w = 0; w < 2; w++)
		for (int c = 0; c < NC; c++)
			t[w][c] = calloc((size_t)reps, sizeof *t[w][c]);
	for (int r = 0; r < reps; r++)
		for (int c = 0; c < 2 * NC; c++) {
			int w = c % 2;
			size_t k = 0;
			av[k++] = bwrap;
			for (size_t i = 0; i < nb; i++)
				av[k++] = (char *)base[i];
			for (int i = 0; i < counts[c / 2]; i++) {
				snprintf(dst[i], sizeof dst[i], "/tmp/m%d", i);
				av[k++] = w ? "--bind" : "--ro-bind";
				av[k++] = "/etc/hostname";
				av[k++] = dst[i];
			}
			av[k++] = "--";
			av[k++] = "/bin/true";
			av[k] = NULL;
			t[w][c / 2][r] = run_once(av);
		}
	printf("bwrap mounts (median of %d runs each; per bind: the cost over 0 binds, divided):\n",
	       reps);
	for (int w = 0; w < 2; w++) {
		double m0 = median(t[w][0], reps);
		for (int c = 0; c < NC; c++) {
			double m = c ? median(t[w][c], reps) : m0;
			printf("  %3d %s file binds: %7.2f ms", counts[c], w ? "writable " : "read-only",
			       m);
			if (c)
				printf("  (+%.3f ms per bind)", (m - m0) / counts[c]);
			printf("\n");
		}
	}
	return 0;
}
