/* fdmsg: one small message, with at most one file descriptor attached (SCM_RIGHTS), over a
 * SOCK_SEQPACKET socket: a packet is a message, whole or not at all. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Send len bytes of msg, with pass attached when pass >= 0. flags are send(2)'s, MSG_NOSIGNAL
 * added; EINTR retried. 0, or -1 with errno (EMSGSIZE when it went out short). */
int fdmsg_send(int sock, const void *msg, size_t len, int pass, int flags);
/* Receive one message into msg[len) and its attached fd into *got (close-on-exec; -1 when none
 * came). flags are recvmsg(2)'s (MSG_DONTWAIT). 1 with exactly len bytes, 0 at EOF, -1 with
 * errno (EAGAIN: nothing now; EMSGSIZE: another size, whose fd is closed). */
int fdmsg_recv(int sock, void *msg, size_t len, int *got, int flags);
