/* netask: `--net ask` on the command side (doc/design.md §4, "Ask instead of fail"): where the
 * proxy's questions meet the person. The proxy (its thread) hands each question and how it was
 * settled to the hub, which lives in supervise's loop (the run's main thread): it keeps the
 * open questions for the terminal's prompt (core/jail/askprompt.h) and for the session's
 * control socket (cmd/jailctl.h: `agentjail net`, `agentjail tui`), records every
 * question and answer as an event of the session, and carries an answer out — for "always",
 * first by adding the entry to allow_domains in the user's configuration file (never a
 * project's) — before the proxy applies it. */
#pragma once
#include <poll.h>
#include <stddef.h>

#include "core/jail/askprompt.h"
#include "core/jail/ctlsock.h"
#include "core/net/proxy.h"

struct netask;
struct netrun;
struct sess_rec;
struct run_request;

/* For a run under --net ask: the hub. net: the run's (its proxy, once running, gets the
 * answers); rec may be NULL. */
struct netask *netask_new(struct netrun *net, const struct run_request *req,
			  struct sess_rec *rec);
void netask_free(struct netask *a); /* NULL is fine */
/* What the proxy calls (its thread; netrun passes it to proxy_start). */
const struct proxy_ask *netask_proxy(struct netask *a);
/* What supervise's prompt asks (its thread). */
const struct askprompt_src *netask_prompt(struct netask *a);
/* In supervise's loop (cmd/jailctl.c calls them): the fd to poll for the proxy's news, and
 * after poll. */
size_t netask_fill(struct netask *a, struct pollfd *pfd, size_t max);
void netask_handle(struct netask *a, const struct pollfd *pfd, size_t n);
/* A request on the session's control socket: the reply to its verbs (questions, answer), NULL
 * for another verb. */
char *netask_request(struct netask *a, const struct ctl_req *req, const struct ctlsock_peer *p);
