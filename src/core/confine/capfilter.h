/* capfilter: the seccomp filter `--net allow` stacks on the jail's command to capture its
 * connections (doc/design.md §4, capture). Installed by the jail's init in the command's
 * process before its exec, over bwrap's filter (§3); its listener fd goes to agentjail, whose
 * proxy thread decides each connect() (core/net/capture.c). The program:
 *   - connect(2) and listen(2) go to the listener (SECCOMP_RET_USER_NOTIF), whatever the
 *     socket: BPF can read neither the address, which is in the caller's memory, nor what the
 *     descriptor is; agentjail carries each one out itself, on the socket it inspected;
 *   - TCP Fast Open is refused (data in a SYN would leave before any decision, and a socket
 *     of ours handed to the jail must never carry data to a peer it was not approved for):
 *     sendto/sendmsg/sendmmsg with MSG_FASTOPEN answer EOPNOTSUPP (what a kernel without
 *     client Fast Open answers: clients fall back to connect), setsockopt TCP_FASTOPEN_CONNECT
 *     and TCP_FASTOPEN_NO_COOKIE answer ENOPROTOOPT;
 *   - everything else, and any other architecture or an x32 call, is allowed by this filter
 *     (bwrap's filter below it still decides those: ERRNO and KILL take precedence over
 *     USER_NOTIF and ALLOW).
 * Once it is installed, no process of the jail can install another filter with a listener
 * (the kernel answers EBUSY), so no one else can answer the jail's connects. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include <linux/filter.h>

#include "util/err.h"

#define CAPFILTER_MAX 32 /* instructions */

/* The program for this architecture into out (CAPFILTER_MAX): its length, or 0 when the
 * architecture is not one capture knows (x86_64, aarch64). */
size_t capfilter_program(struct sock_filter *out);

/* The same program with on_call (a SECCOMP_RET_ value) for connect and listen instead. */
size_t capfilter_program_ret(struct sock_filter *out, uint32_t on_call);

/* Install it on the calling thread (no_new_privs must be set) with a new listener: *listener
 * is the listener's fd (close-on-exec). 0, or -1 with e. */
int capfilter_install(int *listener, struct err *e) WUR;

/* Install the program with connect(2) and listen(2) refused (EACCES) rather than sent to a
 * listener: for a process of a `--net allow` jail that is not the command's descendant
 * (`agentjail exec`'s, core/jail/init.c), which no capture serves. Without it such a process,
 * handed a socket the capture installed (a host socket, SCM_RIGHTS from the command), could
 * disconnect it and connect it anywhere from the host's network. 0, or -1 with e. */
int capfilter_refuse(struct err *e) WUR;
