/* probes, category "terminal": TIOCSTI and TIOCLINUX, with high bits and the i386 ABI. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Terminals                                                                               */

/* A fresh pty whose slave becomes our controlling terminal (the probe runs in a child of its
 * own, so setsid is ours to call). The slave fd, or -1 with a SKIP set. */
static int own_pty(struct probe_out *o)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	char name[128];
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || ptsname_r(m, name, sizeof name) != 0) {
		pr_set(o, PROBE_SKIP, "no pseudo-terminal to test on (/dev/ptmx: %s)", pr_ename(errno));
		return -1;
	}
	(void)setsid();
	int s = open(name, O_RDWR | O_CLOEXEC);
	if (s < 0) {
		pr_set(o, PROBE_SKIP, "cannot open %s: %s", name, pr_ename(errno));
		return -1;
	}
	(void)ioctl(s, TIOCSCTTY, 0);
	/* m stays open (the pair must live); the probe's process ends soon */
	return s;
}

#define HIGH_BITS 0x100000000UL

static void tiocsti(struct probe_out *o, unsigned long extra)
{
	int s = own_pty(o);
	if (s < 0)
		return;
	char ch = '#';
	long rc = syscall(SYS_ioctl, s, (unsigned long)TIOCSTI | extra, &ch);
	int err = errno;
	if (rc == 0)
		pr_set(o, PROBE_FAIL, "ioctl(TIOCSTI%s) pushed a byte into a terminal's input",
		    extra ? " | 1<<32" : "");
	else
		pr_set(o, PROBE_PASS, "ioctl(TIOCSTI%s): %s", extra ? " | 1<<32" : "", pr_ename(err));
}

void p_tiocsti(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tiocsti(o, 0);
}

void p_tiocsti_high(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tiocsti(o, HIGH_BITS);
}

/* TIOCLINUX means something only on a virtual console (none is reachable here, and none is
 * opened): the filter must refuse it before any driver sees it, so the answer is EPERM, where
 * the tty layer of a pty would say ENOTTY. */
static void tioclinux(struct probe_out *o, unsigned long extra)
{
	int s = own_pty(o);
	if (s < 0)
		return;
	char sub[2] = {6 /* TIOCL_GETSHIFTSTATE: reads only */, 0};
	long rc = syscall(SYS_ioctl, s, (unsigned long)TIOCLINUX | extra, sub);
	int err = errno;
	const char *what = extra ? "ioctl(TIOCLINUX | 1<<32)" : "ioctl(TIOCLINUX)";
	if (rc == 0)
		pr_set(o, PROBE_FAIL, "%s succeeded", what);
	else if (err == EPERM)
		pr_set(o, PROBE_PASS, "%s: EPERM (refused before the tty layer)", what);
	else
		pr_set(o, PROBE_FAIL,
		    "%s reached the tty layer (%s): on a virtual console it could "
		    "paste into other programs' input",
		    what, pr_ename(err));
}

void p_tioclinux(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tioclinux(o, 0);
}

void p_tioclinux_high(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	tioclinux(o, HIGH_BITS);
}

#if defined(__x86_64__)
/* ioctl through the i386 entry point (int $0x80, eax = 54). The argument must be addressable
 * with 32 bits. */
static long int80_ioctl(int fd, unsigned cmd, uint32_t arg)
{
	long ret;
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(54L), "b"((long)fd), "c"((long)cmd), "d"((long)arg)
			 : "r8", "r9", "r10", "r11", "memory", "cc");
	return ret;
}

void p_tiocsti_i386(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	int s = own_pty(o);
	if (s < 0)
		return;
	char *buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (buf == MAP_FAILED) {
		pr_set(o, PROBE_SKIP, "no memory below 4 GiB for an i386 argument: %s", pr_ename(errno));
		return;
	}
	buf[0] = '#';
	pid_t pid = fork();
	if (pid == 0) {
		signal(SIGSYS, SIG_DFL);
		signal(SIGSEGV, SIG_DFL);
		long r = int80_ioctl(s, TIOCSTI, (uint32_t)(uintptr_t)buf);
		_exit(r == 0 ? 0 : (r < 0 && r > -256 ? (int)-r : 255));
	}
	int ws = 0;
	while (pid > 0 && waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (pid < 0)
		pr_set(o, PROBE_SKIP, "cannot fork: %s", pr_ename(errno));
	else if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSYS)
		pr_set(o, PROBE_PASS,
		    "int $0x80 ioctl(TIOCSTI): killed by SIGSYS (foreign "
		    "architecture refused)");
	else if (WIFSIGNALED(ws) && WTERMSIG(ws) == SIGSEGV)
		pr_set(o, PROBE_SKIP, "no IA32 emulation in this kernel (int $0x80 faults)");
	else if (WIFSIGNALED(ws))
		pr_set(o, PROBE_FAIL, "int $0x80 child died of signal %d", WTERMSIG(ws));
	else if (WEXITSTATUS(ws) == 0)
		pr_set(o, PROBE_FAIL, "int $0x80 ioctl(TIOCSTI) pushed a byte into a terminal");
	else
		pr_set(o, PROBE_FAIL,
		    "the i386 entry point reached the kernel (ioctl: %s): no filter "
		    "for that architecture",
		    pr_ename(WEXITSTATUS(ws)));
}
#else
void p_tiocsti_i386(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	pr_set(o, PROBE_SKIP, "not an x86_64 host: there is no i386 entry point");
}
#endif

