/* ctlsock: a running session's control socket (doc/design.md §5, "The control socket"), by
 * which another process of the user's — `agentjail net`, `agentjail tui`, `agentjail ps`,
 * `exec`, `stop` — reaches the
 * agentjail supervising the jail. A Unix stream socket at <state>/run/<session>.sock, mode 0600
 * in a 0700 directory of the state directory, which no jail sees (§3 step 8); a peer is served
 * only when SO_PEERCRED says it is the same user or root. Lines of core/plan/ctlproto.h. The
 * server runs in supervise's loop (non-blocking: a slow or silent peer holds nothing up). */
#pragma once
#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/plan/ctlproto.h"
#include "util/err.h"
#include "util/strv.h"

#define CTLSOCK_CLIENTS_MAX 16

/* <state_dir>/run/<id>.sock. Allocated. */
char *ctlsock_path(const char *state_dir, const char *session_id);

struct ctlsock;

/* Listen at path: its directory made 0700 when missing (and refused when it is not ours or is
 * open to others), the socket 0600. A socket left there by a run that is gone (nobody answers)
 * is replaced; a live one is an error (EADDRINUSE). -1 with e. */
int ctlsock_listen(const char *path, struct ctlsock **out, struct err *e) WUR;
/* Its fds to poll (the listener, each peer) into pfd[0..max): how many. */
size_t ctlsock_fill(struct ctlsock *s, struct pollfd *pfd, size_t max);
#define CTLSOCK_FDS_MAX 4 /* fds a request carries at the most (SCM_RIGHTS) */

/* What came with a request: the peer's identity (SO_PEERCRED) and the fds sent with its line
 * (the handler takes one by setting it to -1; the others are closed after). A line with fds is
 * sent on its own, its first byte carrying them (ctlsock_call_fds): fds that came with a read
 * belong to the first line it completes. */
struct ctlsock_peer {
	uid_t uid;
	pid_t pid;
	int fds[CTLSOCK_FDS_MAX];
	size_t nfds;
};
/* The reply to one request (lines, each ending in "\n"; allocated). */
typedef char *(*ctlsock_handler)(void *arg, const struct ctl_req *req, struct ctlsock_peer *p);
/* After poll (pfd as ctlsock_fill filled it): accept, read, answer. A request that does not
 * parse, or of another version, is answered with "err ..." here. */
void ctlsock_handle(struct ctlsock *s, const struct pollfd *pfd, size_t n, ctlsock_handler h,
		    void *arg);
/* Close it and remove the socket. NULL is fine. */
void ctlsock_close(struct ctlsock *s);

/* The client: send line (without its LF) to the session at path and read the reply: the first
 * line, then the lines a "ok list N" announces, into reply (without LFs). At most timeout_ms
 * in all. -1 with e: nothing listens there (the session is not running), it is not ours, or
 * it did not answer. */
int ctlsock_call(const char *path, const char *line, int timeout_ms, struct strv *reply,
		 struct err *e) WUR;
/* … with fds[0..n) (n <= CTLSOCK_FDS_MAX) sent along with the line. */
int ctlsock_call_fds(const char *path, const char *line, const int *fds, size_t n,
		     int timeout_ms, struct strv *reply, struct err *e) WUR;
