/* netask: `--net ask` on the command side (doc/design.md §4, "Ask instead of fail"): where the
 * proxy's questions meet the person. The proxy (its thread) hands each question and how it was
 * settled to the hub, which lives in supervise's loop (the run's main thread): it keeps the
 * open questions for the terminal's prompt (core/jail/askprompt.h) and for the session's
 * control socket (core/jail/ctlsock.h: `agentjail net`, `agentjail tui`), records every
 * question and answer as an event of the session, and carries an answer out — for "always",
 * first by adding the entry to allow_domains in the user's configuration file (never a
 * project's) — before the proxy applies it. */
#pragma once
#include <poll.h>
#include <stddef.h>

#include "core/jail/askprompt.h"
#include "core/net/proxy.h"

struct netask;
struct netrun;
struct sess_rec;
struct run_request;

/* For a run under --net ask: the hub, its control socket listening (a socket that cannot be
 * made costs a warning: the questions are then answered at the terminal only). net: the run's
 * (its proxy, once running, gets the answers); rec may be NULL. */
struct netask *netask_new(struct netrun *net, const struct run_request *req,
			  struct sess_rec *rec);
void netask_free(struct netask *a); /* NULL is fine; the control socket goes */
/* What the proxy calls (its thread; netrun passes it to proxy_start). */
const struct proxy_ask *netask_proxy(struct netask *a);
/* What supervise's prompt asks (its thread). */
const struct askprompt_src *netask_prompt(struct netask *a);
/* supervise's ext_fill and ext_handle (arg: the hub). */
size_t netask_fill(void *arg, struct pollfd *pfd, size_t max);
void netask_handle(void *arg, const struct pollfd *pfd, size_t n);
