/* bench/initexec: what the jail's init costs a run. `INIT __init -- /bin/true` against
 * `/bin/true` alone, each forked, exec'd and waited for, alternating, N pairs, outside a jail;
 * the difference of the medians is init's own cost (exec, its checks, Landlock, the fork of
 * the command, the reaping). Printed as `bench: init-exec-ms VALUE (goal …)`, with the same
 * difference in CPU time (user + system, from wait4), which a loaded machine disturbs less.
 *
 * The children get what a jail gives init, or init refuses to run: no capabilities in any set
 * and no_new_privs. This process empties its own sets first; a user, who may not empty the
 * bounding set, does it in a user namespace of its own (as bwrap's jail does).
 * usage: initexec INIT [PAIRS [INIT-OPTION]...]: the options go to init before its `--` (e.g. a
 * real run's --writable and --deny-read lists, to time its Landlock walk). */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "benchutil.h"

extern char **environ;

/* No capability in any set from here on, and no_new_privs: what init checks for. */
static int drop_privileges(void)
{
	if (geteuid() != 0 && unshare(CLONE_NEWUSER) < 0)
		return -1;
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}, {0}};
	if (syscall(SYS_capset, &h, d) < 0 ||
	    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

/* ms from fork to the child's exit, and its CPU ms (with what it reaped) in *cpu; -1 when it
 * did not exit 0 */
static double time_exec(char *const argv[], double *cpu)
{
	double t0 = now_ms();
	pid_t pid = fork();
	if (pid == 0) {
		execve(argv[0], argv, environ);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) < 0)
		return -1;
	double t = now_ms() - t0;
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: initexec INIT [PAIRS [INIT-OPTION]...]\n", stderr);
		return 2;
	}
	int pairs = argc > 2 ? atoi(argv[2]) : 200;
	if (pairs < 1)
		pairs = 1;
	if (drop_privileges() < 0) {
		fprintf(stderr, "initexec: cannot drop privileges: %s\n", strerror(errno));
		return 1;
	}
	int nopt = argc > 3 ? argc - 3 : 0; /* INIT __init [OPTION]... -- /bin/true */
	char **init_argv = calloc((size_t)nopt + 5, sizeof *init_argv);
	if (!init_argv)
		return 1;
	init_argv[0] = argv[1], init_argv[1] = "__init";
	memcpy(init_argv + 2, argv + 3, (size_t)nopt * sizeof *argv);
	init_argv[2 + nopt] = "--", init_argv[3 + nopt] = "/bin/true";
	char *true_argv[] = {"/bin/true", NULL};
	double *a = calloc((size_t)pairs, sizeof *a), *b = calloc((size_t)pairs, sizeof *b);
	double *ca = calloc((size_t)pairs, sizeof *ca), *cb = calloc((size_t)pairs, sizeof *cb);
	if (!a || !b || !ca || !cb)
		return 1;
	double c0;
	if (time_exec(init_argv, &c0) < 0) { /* warm the caches, and see that it works at all */
		fprintf(stderr, "initexec: %s __init -- /bin/true failed (run it by hand to see why)\n",
			argv[1]);
		return 1;
	}
	(void)time_exec(true_argv, &c0);
	for (int i = 0; i < pairs; i++) {
		if (i % 2) {
			a[i] = time_exec(init_argv, &ca[i]);
			b[i] = time_exec(true_argv, &cb[i]);
		} else {
			b[i] = time_exec(true_argv, &cb[i]);
			a[i] = time_exec(init_argv, &ca[i]);
		}
		if (a[i] < 0 || b[i] < 0) {
			fputs("initexec: a run failed\n", stderr);
			return 1;
		}
	}
	double ma = median(a, pairs), mb = median(b, pairs);
	double mca = median(ca, pairs), mcb = median(cb, pairs);
	printf("init-exec: %d pairs, alternating, outside a jail\n", pairs);
	printf("  %s __init -- /bin/true : median %.3f ms (cpu %.3f ms)\n", argv[1], ma, mca);
	printf("  /bin/true alone : median %.3f ms (cpu %.3f ms)\n", mb, mcb);
	printf("bench: init-exec-ms %.3f (goal <= 0.5; init's own cost, the difference of the "
	       "medians; in CPU time %.3f)\n",
	       ma - mb, mca - mcb);
	return 0;
}
