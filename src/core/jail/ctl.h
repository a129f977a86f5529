/* ctl: the control channel between agentjail on the host and `__init` in the jail
 * (a SOCK_SEQPACKET socketpair: one message per packet, EOF when either side is gone). */
#pragma once

#define CTL_EXIT_SIGNALLED 0x10000
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum ctl_type {
	CTL_READY = 1,   /* init → host: the command runs; value = its pid in the jail */
	CTL_STOPPED,     /* init → host: the command was stopped; value = the signal */
	CTL_CONT,        /* host → init: resume the command (foreground it, SIGCONT) */
	CTL_EXIT,        /* init → host: the command's status, shell-style, | CTL_EXIT_SIGNALLED
			  * when it died of a signal (status is then 128+N) */
	CTL_SIGNAL,      /* host → init: send value to the command's process group */
	CTL_LANDLOCK,    /* init → host: Landlock ABI in the low byte, flags above (LL_*) */
	CTL_EXEC_FAILED, /* init → host: the command could not be executed; value = errno */
	CTL_GO,          /* host → init: start the command (sent once the session is recorded,
			  * which happens while bwrap builds the jail) */
	CTL_STDERR,      /* host → init, before CTL_GO, with an fd attached (ctl_send_fd): the
			  * command's stderr. bwrap's own stderr is a pipe the host reads, so
			  * what bwrap says while it builds the jail is told apart from what the
			  * command says (core/backend/bwrap/bwrapmsg.h); init makes this fd its 2
			  * */
	CTL_NOTE,        /* init → host, before CTL_EXIT: what init saw in the jail that the
			  * host may explain after the run; value = CTL_NOTE_* bits */
	CTL_BINDS,       /* host → init, before CTL_GO, with a memfd attached: what each bind
			  * must show in the jail's view (core/jail/bindcheck.h); init checks it
			  * before the command starts */
	CTL_CAPTURE,     /* init's child → host, with two fds attached, before the command's
			  * exec (--net allow): the listener of the seccomp filter that captures
			  * the command's connects (core/confine/capfilter.h), which the host's
			  * proxy answers (core/net/capture.c), and the proxy's end of init's
			  * channel for the Unix-socket connects (core/plan/capwire.h) */
	CTL_PUBLISH,     /* host → init, before CTL_GO, with an fd attached (--publish): init's
			  * end of the publish channel, a SOCK_SEQPACKET socketpair of its own on
			  * which the host asks for connections to the published ports
			  * (core/plan/pubwire.h) */
	CTL_EXEC,        /* host → init, after CTL_GO, with four fds attached: the jail's end of
			  * an exec channel (core/plan/execwire.h)
			  * and the command's stdin, stdout, stderr (`agentjail exec`): init runs
			  * the request waiting on the channel as a child of its own */
};

/* CTL_NOTE bits */
#define CTL_NOTE_LOCK 0x1 /* a lock file was made beside the --note-lock file (git tried to
			   * rewrite ~/.gitconfig, a read-only bind: EBUSY) */

#define CTL_LL_FS 0x100      /* the writable view is enforced by Landlock too */
#define CTL_LL_SCOPED 0x200  /* abstract Unix sockets and signals are scoped to the jail */

struct ctl_msg {
	uint32_t type;
	int32_t value;
};

/* 0, or -1 with errno. Retries EINTR. */
int ctl_send(int fd, uint32_t type, int32_t value);
/* 1 with a message, 0 at EOF, -1 with errno (EAGAIN when non-blocking and empty). */
int ctl_recv(int fd, struct ctl_msg *m);
#define CTL_FDS_MAX 4 /* fds one message carries (util/fdmsg.h carries the messages) */
/* ctl_send with the fd `pass` attached (SCM_RIGHTS). */
int ctl_send_fd(int fd, uint32_t type, int32_t value, int pass);
/* … with n (1..CTL_FDS_MAX) fds attached. */
int ctl_send_fds(int fd, uint32_t type, int32_t value, const int *pass, size_t n);
/* ctl_recv that also takes an attached fd: *got is it (close-on-exec), or -1. */
int ctl_recv_fd(int fd, struct ctl_msg *m, int *got);
/* … up to max attached fds, in got[0..max) (the others -1); fds beyond max are closed. */
int ctl_recv_fds(int fd, struct ctl_msg *m, int *got, size_t max);
/* One message of any size on a SOCK_SEQPACKET socket into buf[len) with up to max
 * (CTL_FDS_MAX) fds into got (close-on-exec; the others -1), recvmsg's flags added: what
 * recvmsg returned (EINTR retried). Unless exactly len bytes came, no fd is kept. */
ssize_t ctl_recv_with_fds(int fd, void *buf, size_t len, int *got, size_t max, int flags);
