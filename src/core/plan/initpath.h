/* initpath: where agentjail's helper programs are looked for (doc/design.md §2, §4b, §7), defined
 * once: the jail's init (agentjail-init) and the remote backend (agentjail-remote). The
 * launcher opens the first that exists (core/jail/initbin.h) and the argv builder makes every
 * one of them that lies in the jail's writable view read-only or watched, as it does agentjail
 * itself (a jail that rewrote or planted the init would choose the next jail's PID 1; the
 * remote backend runs on the host with the service's API key; agentjail-tls, the TLS inspector
 * and ssh-agent filter of doc/design.md §4d, with the run's secrets). Pure. */
#pragma once
#include "util/strv.h"

#define INITPATH_SIBLING "agentjail-init"            /* beside agentjail (the build tree) */
#define INITPATH_LIBEXEC "../libexec/agentjail/init" /* from agentjail's directory (installed) */
#define REMOTEPATH_SIBLING "agentjail-remote"
#define REMOTEPATH_LIBEXEC "../libexec/agentjail/remote"
#define TLSPATH_SIBLING "agentjail-tls"
#define TLSPATH_LIBEXEC "../libexec/agentjail/tls"

/* One helper program: its two places, relative to agentjail's directory, and its words for
 * errors. */
struct helperpath {
	const char *sibling; /* beside agentjail: the build tree */
	const char *libexec; /* PREFIX/libexec/agentjail/… for PREFIX/bin/agentjail */
	const char *what;    /* "the jail's init" */
	const char *role;    /* what it is refused for: "run it as the jail's PID 1" */
	const char *missing; /* the hint when it is nowhere */
};
extern const struct helperpath HELPER_INIT, HELPER_REMOTE, HELPER_TLS;

/* The places helper h of the agentjail binary `self` (absolute, canonical) is looked for, in
 * order, appended to out. */
void helperpath_candidates(const struct helperpath *h, const char *self, struct strv *out);
/* helperpath_candidates of the jail's init. */
void initpath_candidates(const char *self, struct strv *out);
