/* agentcopy: the private copy of an agent's config file that the jail writes instead of the
 * host file (doc/design.md §3b), and the merge of its safe keys back afterwards (the rule is
 * jsonmerge's). The file I/O half; the merge itself is pure (core/plan/jsonmerge.h). */
#pragma once
#include <stddef.h>

#include "core/plan/jsonmerge.h"
#include "util/err.h"
#include "util/strv.h"

struct agentcopy {
	char *host;                   /* the host file as the profile names it (~/.claude.json) */
	char *real;                   /* where it led before the run (a dotfile manager's link is
				       * followed); the merge goes there or nowhere */
	char *copy;                   /* the private copy, in <state_dir>/agent-copy/, mode 0600 */
	char *base;                   /* its content as given to the jail */
	size_t nbase;
	const struct jm_rules *rules;
};

/* Copy `host` (a regular file, followed through symlinks as the agent would) to a new 0600 file
 * under <state_dir>/agent-copy/ (made 0700 when missing). -1 with e filled, nothing left behind. */
int agentcopy_make(const char *host, const char *state_dir, const struct jm_rules *rules,
		   struct agentcopy *out, struct err *e) WUR;

/* After the run: re-read the host file, merge in the allowed changes of the copy (a temporary
 * file beside the host file, fsync, rename; the host file's mode and owner kept), remove the
 * copy. 1 merged, 0 nothing to merge, -1 with e filled (nothing merged; the copy is removed
 * all the same). `dropped` (may be NULL) gets the changed keys that did not come back. */
int agentcopy_finish(struct agentcopy *c, struct strv *dropped, struct err *e) WUR;

/* Remove the copy (when the run did not happen) and free. Safe to call twice. */
void agentcopy_free(struct agentcopy *c);
