/* self: see self.h. */
#include "core/jail/self.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

static int close_from(unsigned first)
{
	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return 0;
	/* kernels before 5.9: walk /proc/self/fd */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	int dfd = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9' && fd >= (int)first && fd != dfd)
			(void)close(fd);
	}
	(void)closedir(d);
	return 0;
}

int launch_harden_self(bool nnp, struct err *e)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return err_set(e, errno, NULL, "cannot make agentjail non-dumpable");
	struct rlimit rl = {0, 0};
	if (setrlimit(RLIMIT_CORE, &rl) < 0)
		return err_set(e, errno, NULL, "cannot disable core dumps");
	/* an inherited session keyring is readable from a new user namespace: start a fresh one.
	 * Where keyrings are unavailable (ENOSYS, or refused in a container) there is nothing
	 * to inherit either. */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS &&
	    errno != EPERM && errno != EACCES && errno != EDQUOT)
		return err_set(e, errno, NULL, "cannot join a fresh session keyring");
	if (close_from(3) < 0)
		return err_set(e, errno, "/proc/self/fd", "cannot close inherited file descriptors");
	/* a closed 0-2 (started with 2>&-) would be taken by the next fd we open, and handed to
	 * the jail as its stdin/stdout/stderr: /dev/null instead */
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", O_RDWR);
		if (n != fd) {
			if (n >= 0)
				(void)close(n);
			return err_set(e, errno, "/dev/null", "cannot open /dev/null for closed fd %d",
				       fd);
		}
	}
	if (nnp && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_set(e, errno, NULL, "cannot set no_new_privs");
	return 0;
}

static volatile pid_t unjailed_child;
static volatile sig_atomic_t unjailed_term;

static void forward_to_child(int sig)
{
	unjailed_term = sig;
	if (unjailed_child > 0)
		(void)kill(unjailed_child, sig);
}

int launch_unjailed(char **argv, int *cmd_signal, int *term_signal, struct err *e)
{
	*cmd_signal = *term_signal = 0;
	unjailed_term = 0;
	/* like system(): the terminal's INT/QUIT reach the command (same process group) and
	 * must not kill us first; TERM/HUP sent to us are passed on */
	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_to_child};
	struct sigaction old[4];
	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	(void)sigaction(SIGINT, &ign, &old[0]);
	(void)sigaction(SIGQUIT, &ign, &old[1]);
	(void)sigaction(SIGTERM, &fwd, &old[2]);
	(void)sigaction(SIGHUP, &fwd, &old[3]);
	pid_t pid = fork();
	if (pid == 0) {
		(void)sigaction(SIGINT, &old[0], NULL);
		(void)sigaction(SIGQUIT, &old[1], NULL);
		(void)sigaction(SIGTERM, &old[2], NULL);
		(void)sigaction(SIGHUP, &old[3], NULL);
		execvp(argv[0], argv);
		int saved = errno;
		static const char msg[] = "agentjail: cannot run the command (not found or not "
					  "executable)\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		_exit(saved == ENOENT ? 127 : 126);
	}
	int rc;
	if (pid < 0) {
		err_set(e, errno, NULL, "cannot fork");
		rc = 125;
	} else {
		unjailed_child = pid;
		int ws;
		while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
			;
		rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
		*cmd_signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
	}
	*term_signal = unjailed_term;
	(void)sigaction(SIGINT, &old[0], NULL);
	(void)sigaction(SIGQUIT, &old[1], NULL);
	(void)sigaction(SIGTERM, &old[2], NULL);
	(void)sigaction(SIGHUP, &old[3], NULL);
	return rc;
}
