/* jailctl: a running bwrap jail's control socket on the command side (doc/design.md §5, "The
 * control socket"; core/jail/ctlsock.h): served in supervise's loop for every run in the bwrap
 * jail, so `agentjail ps`, `exec`, `stop` (and, under --net ask, `agentjail net` and the TUI,
 * through cmd/netask.h) reach it. Verbs of AJ1 (core/plan/ctlproto.h): ping, ps, exec, stop,
 * and netask's questions and answer. */
#pragma once
#include <poll.h>
#include <stddef.h>

struct jailctl;
struct netask;
struct run_request;
struct sess_rec;
struct supervise_jail;

/* Listening at <state>/run/<session>.sock. A socket that cannot be made costs a warning (the
 * run goes on; ps, exec and stop cannot reach it): never NULL. ask: --net ask's hub or NULL
 * (its fds are polled and its verbs answered here); rec may be NULL. */
struct jailctl *jailctl_new(const struct run_request *req, struct sess_rec *rec,
			    struct netask *ask);
void jailctl_free(struct jailctl *c); /* NULL is fine; the socket goes */
/* The running jail it acts on (launch fills it). */
struct supervise_jail *jailctl_jail(struct jailctl *c);
/* supervise's ext_fill and ext_handle (arg: the hub). */
size_t jailctl_fill(void *arg, struct pollfd *pfd, size_t max);
void jailctl_handle(void *arg, const struct pollfd *pfd, size_t n);
