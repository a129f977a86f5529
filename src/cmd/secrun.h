/* secrun: a run's secrets and agents on the command side (doc/design.md §4d): before the plan,
 * what the jail's view needs (the trust bundle with agentjail's CA, the filtered ssh agent's
 * socket, gpg's extra socket); before the launch, the secrets' values read on the host; then
 * the configuration netrun hands to agentjail-tls with the proxy. */
#pragma once
#include <stdbool.h>

#include "core/plan/hostfacts.h"
#include "core/plan/httprules.h"
#include "core/net/inspectmsg.h"
#include "core/plan/policy.h"
#include "util/err.h"

struct secrun {
	struct hf_secrets sec;   /* for the plan (jail_prep) */
	struct inspect in;       /* what the proxy inspects (rules, secrets: no value) */
	bool in_built;
	struct im_config cfg;    /* agentjail-tls's configuration; the values once read */
	bool helper;             /* the run needs agentjail-tls */
	int ssh_listen;          /* --ssh-agent: the listening socket, else -1 */
	char *ssh_sock;          /* its path (removed after the run) */
};

/* Before the plan. A dry run makes nothing (no CA, no socket: the plan shows where they would
 * be). 0, or an exit code (the error printed). */
int secrun_prepare(struct secrun *sr, const struct run_request *req);
/* After the plan, before the launch: each active secret's value (a command may ask the user).
 * 0, or an exit code (the error printed). */
int secrun_values(struct secrun *sr, const struct run_request *req);
void secrun_free(struct secrun *sr); /* the values wiped, the socket removed */
