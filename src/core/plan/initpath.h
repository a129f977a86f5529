/* initpath: where the jail's init is looked for (doc/design.md §2, §7), defined once: the
 * launcher opens the first that exists (core/jail/initbin.h) and the argv builder makes every
 * one of them that lies in the jail's writable view read-only or watched, as it does agentjail
 * itself (a jail that rewrote or planted one would choose the next jail's PID 1). Pure. */
#pragma once
#include "util/strv.h"

#define INITPATH_SIBLING "agentjail-init"            /* beside agentjail (the build tree) */
#define INITPATH_LIBEXEC "../libexec/agentjail/init" /* from agentjail's directory (installed) */

/* The places the init of the agentjail binary `self` (absolute, canonical) is looked for, in
 * order, appended to out. */
void initpath_candidates(const char *self, struct strv *out);
