#include "core/init.h"

#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* This runs as the jail's PID 1, so it reports on stderr itself: there is no command layer
 * between it and the user. */
static int fail(const char *what, int err)
{
	fprintf(stderr, "agentjail: jail init: %s%s%s\n", what, err ? ": " : "",
		err ? strerror(err) : "");
	return 125;
}

/* All five capability sets must be empty. */
static int caps_are_zero(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	char line[256];
	int seen = 0, nonzero = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "Cap", 3) != 0)
			continue;
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		seen++;
		if (strtoull(colon + 1, NULL, 16) != 0)
			nonzero++;
	}
	(void)fclose(f);
	return seen == 5 && nonzero == 0 ? 1 : 0;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AJ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AJ_ASAN 1
#endif

#ifdef AJ_ASAN
/* LeakSanitizer stops the world with ptrace, which the jail's seccomp filter refuses: in a
 * sanitizer build the in-jail init skips the leak check (the host side keeps it). */
static int in_jail_init;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_jail_init; }
#define MARK_IN_JAIL() (in_jail_init = 1)
#else
#define MARK_IN_JAIL() ((void)0)
#endif

static const int fwd_sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
#define NFWD (sizeof fwd_sigs / sizeof *fwd_sigs)

static void noop(int sig) { (void)sig; }

int init_main(int argc, char **argv)
{
	MARK_IN_JAIL();
	int i = 1;
	if (i < argc && !strcmp(argv[i], "__init"))
		i++;
	if (i < argc && !strcmp(argv[i], "--"))
		i++;
	if (i >= argc)
		return fail("no command given", 0);
	char **cmd = argv + i;

	/* bwrap's bind fds must not reach the command: a directory fd leads back to the host */
	if (syscall(SYS_close_range, 3U, ~0U, 0) < 0)
		return fail("cannot close inherited file descriptors", errno);
	int z = caps_are_zero();
	if (z != 1)
		return fail(z < 0 ? "cannot read /proc/self/status" : "capabilities are not empty: refusing to run", 0);
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return fail("no_new_privs is not set: refusing to run", 0);

	/* PID 1 only receives signals it handles: install handlers, then take them with
	 * sigwaitinfo so nothing is lost between fork and wait */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	struct sigaction sa = {0};
	sa.sa_handler = noop;
	sigemptyset(&sa.sa_mask);
	for (size_t k = 0; k < NFWD; k++) {
		sigaddset(&set, fwd_sigs[k]);
		if (sigaction(fwd_sigs[k], &sa, NULL) < 0)
			return fail("cannot install signal handlers", errno);
	}
	if (sigaction(SIGCHLD, &sa, NULL) < 0 || sigprocmask(SIG_BLOCK, &set, &old) < 0)
		return fail("cannot block signals", errno);

	pid_t child = fork();
	if (child < 0)
		return fail("cannot fork", errno);
	if (child == 0) {
		struct sigaction dfl = {0};
		dfl.sa_handler = SIG_DFL;
		for (size_t k = 0; k < NFWD; k++)
			(void)sigaction(fwd_sigs[k], &dfl, NULL);
		(void)sigaction(SIGCHLD, &dfl, NULL);
		(void)sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(cmd[0], cmd);
		int err = errno;
		fprintf(stderr, "agentjail: cannot run %s: %s\n", cmd[0], strerror(err));
		_exit(err == ENOENT || err == ENOTDIR ? 127 : 126);
	}

	int status = -1;
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&set, &si);
		if (sig < 0) {
			if (errno == EINTR)
				continue;
			return fail("sigwaitinfo failed", errno);
		}
		if (sig != SIGCHLD) {
			/* signals from the terminal reached the command's group already; forward
			 * only those a process sent to us (kill, agentjail on SIGTERM) */
			if (si.si_code == SI_USER || si.si_code == SI_QUEUE)
				(void)kill(child, sig);
			continue;
		}
		int ws;
		pid_t p;
		while ((p = waitpid(-1, &ws, WNOHANG)) > 0) {
			if (p == child)
				status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		}
		if (status >= 0)
			return status; /* PID 1 exiting takes the rest of the jail with it */
	}
}
