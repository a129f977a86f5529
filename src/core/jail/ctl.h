/* ctl: the control channel between agentjail on the host and `__init` in the jail
 * (a SOCK_SEQPACKET socketpair: one message per packet, EOF when either side is gone). */
#pragma once

#define CTL_EXIT_SIGNALLED 0x10000
#include <stdint.h>

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
			  * command says (core/plan/bwrapmsg.h); init makes this fd its 2 */
	CTL_NOTE,        /* init → host, before CTL_EXIT: what init saw in the jail that the
			  * host may explain after the run; value = CTL_NOTE_* bits */
	CTL_BINDS,       /* host → init, before CTL_GO, with a memfd attached: what each bind
			  * must show in the jail's view (core/jail/bindcheck.h); init checks it
			  * before the command starts */
	CTL_PUBLISH,     /* host → init, before CTL_GO, with an fd attached (--publish): init's
			  * end of the publish channel, a SOCK_SEQPACKET socketpair of its own on
			  * which the host asks for connections to the published ports
			  * (core/plan/pubwire.h) */
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
/* ctl_send with the fd `pass` attached (SCM_RIGHTS), none when pass < 0. */
int ctl_send_fd(int fd, uint32_t type, int32_t value, int pass);
/* ctl_recv that also takes an attached fd: *got is it (close-on-exec), or -1. */
int ctl_recv_fd(int fd, struct ctl_msg *m, int *got);
