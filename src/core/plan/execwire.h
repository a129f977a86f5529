/* execwire: the exec channel between `agentjail exec` and the jail's init (doc/design.md §5,
 * "ps, exec, stop"). The channel is a SOCK_SEQPACKET socketpair the client makes; its jail end
 * reaches init (with the command's three standard fds) through the session's control socket
 * and the control channel (core/jail/ctl.h CTL_EXEC). The client has written one request on it
 * before (execwire_pack); init reads it, forks the command as its own child (so it inherits the
 * jail's namespaces, seccomp filter, Landlock domain, no_new_privs, rlimits and cgroup, and
 * nothing more) and answers with execwire_msg: EXW_STARTED, then EXW_EXITED when it is reaped;
 * the client passes on the signals it gets (EXW_SIGNAL), and its going away hangs it up.
 * Pure: packing and unpacking, tested without a jail. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

#define EXECWIRE_MAX 65536    /* a request's bytes at most */
#define EXECWIRE_ARGS_MAX 256 /* its arguments at most */
#define EXW_TTY 0x1           /* the command's stdio is a terminal: make it its controlling one */

enum execwire_type {
	EXW_STARTED = 1, /* init → client: value = the command's pid in the jail */
	EXW_EXITED,      /* init → client: its status, shell-style (128+N for signal N) */
	EXW_REFUSED,     /* init → client: not run; value = the errno */
	EXW_SIGNAL,      /* client → init: send value to the command's session (the client got
			  * it); EOF from the client (it is gone) sends SIGHUP */
};

struct execwire_msg {
	uint32_t type;
	int32_t value;
};

/* The request: "AJX1", a flags byte (EXW_*), then each argument NUL-terminated (none: the
 * jail's shell). Into out[cap): its length, or 0 when it does not fit, an argument holds no
 * byte, or argc is over EXECWIRE_ARGS_MAX. */
size_t execwire_pack(unsigned flags, const char *const *argv, size_t argc, char *out, size_t cap);
/* Back: argv[0..*argc) point into buf (NUL-terminated there), argv[*argc] = NULL; max is
 * argv's room less the NULL. -1 on anything else: another prefix, an unknown flag, a last
 * argument without its NUL, an empty argument, more than max. */
int execwire_unpack(char *buf, size_t len, unsigned *flags, char **argv, size_t max,
		    size_t *argc) WUR;
