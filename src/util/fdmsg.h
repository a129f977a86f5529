/* fdmsg: one small message, with file descriptors attached (SCM_RIGHTS), over a SOCK_SEQPACKET
 * socket: a packet is a message, whole or not at all. The one sender and receiver of such
 * messages (the control channel, core/jail/ctl.h; the capture's and the publish channels to
 * the jail's init). */
#pragma once
#include <stddef.h>
#include <sys/types.h>

#define FDMSG_FDS_MAX 4 /* fds one message carries at the most */

/* Send len bytes of msg with fds[0..n) attached (n 0..FDMSG_FDS_MAX). flags are send(2)'s,
 * MSG_NOSIGNAL added; EINTR retried. 0, or -1 with errno (EMSGSIZE when it went out short). */
int fdmsg_send(int sock, const void *msg, size_t len, const int *fds, size_t n, int flags);
/* Receive one message into msg[len) and up to max attached fds into got[0..max)
 * (close-on-exec; the others -1; fds beyond max are closed). flags are recvmsg(2)'s
 * (MSG_DONTWAIT). What recvmsg returned (EINTR retried): unless exactly len bytes came, no fd
 * is kept. */
ssize_t fdmsg_recv(int sock, void *msg, size_t len, int *got, size_t max, int flags);
/* recv on a stream socket into buf[len), appending the fds that came with the bytes to
 * got[*k..max) (close-on-exec; more are closed), *k advanced: what recvmsg returned (EINTR
 * retried). A stream's fds come with the bytes their sender attached them to (the control
 * socket, core/jail/ctlsock.c). */
ssize_t fdmsg_recv_stream(int sock, void *buf, size_t len, int *got, size_t max, size_t *k,
			  int flags);
