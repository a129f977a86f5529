/* backend: the table of backends and the choice of one (backend.h, doc/design.md §2a). */
#include "core/backend/backend.h"

#include <stdlib.h>
#include <string.h>

#include "core/config/config.h"
#include "core/confine/landlock.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

static const struct backend *const all[] = {&backend_bwrap, &backend_landlock,
					    &backend_opensandbox};

const struct backend *backend_by_id(enum backend_id id)
{
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (all[i]->id == id)
			return all[i];
	return &backend_bwrap;
}

const struct backend *backend_choose(const char *flag, const struct config *cfg)
{
	const char *v = flag ? flag : cfg ? cfg->backend.v : NULL;
	enum backend_id b = BACKEND_LOCAL;
	if (v && backend_parse(v, &b) < 0)
		b = BACKEND_LOCAL; /* not reached: the flag and the configuration were checked */
	return backend_by_id(b);
}

const struct backend *backend_for_agents(const struct backend *chosen)
{
	return chosen->caps->agents ? chosen : &backend_bwrap;
}

const struct backend *backend_of_session(const char *row_backend, enum backend_id policy_backend)
{
	for (size_t i = 0; row_backend && i < sizeof all / sizeof *all; i++)
		if (!strcmp(all[i]->name, row_backend))
			return all[i];
	return backend_by_id(policy_backend);
}

bool backend_here(const struct backend *b)
{
	/* in agentjail-remote the remote backend runs here itself: nothing else may (no jail is
	 * ever built by the dynamically linked program) */
	return backend_opensandbox.elsewhere || b == &backend_opensandbox;
}

const char *backend_fallback(void)
{
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		if (all[i]->caps->fallback)
			return all[i]->caps->fallback;
	return NULL;
}

bool backend_is_auto(const char *flag, const struct config *cfg)
{
	const char *v = flag ? flag : cfg ? cfg->backend.v : NULL;
	enum backend_id b;
	return v && backend_parse(v, &b) == 0 && b == BACKEND_AUTO;
}

/* Why the bwrap jail could not run its test jail here, in a few words. malloc'd. */
static char *bwrap_cannot(const struct avail_result *a, const struct err *e, bool tried)
{
	if (!tried)
		return xasprintf("bubblewrap cannot be used here (%s)", e->what);
	switch (a->outcome) {
	case AVAIL_NOT_STARTED:
		return xasprintf("bubblewrap cannot build its jail here (%s)", a->diag.cause);
	case AVAIL_TIMEOUT:
		return xstrdup("bubblewrap's test jail did not finish here");
	case AVAIL_PREPARE:
		return xasprintf("bubblewrap's jail cannot be prepared here (%s)", a->prep_err.what);
	default:
		return xasprintf("bubblewrap's test jail failed here (exit %d)", a->status);
	}
}

void backend_auto_choose(bool net_allow, struct backend_auto *out)
{
	*out = (struct backend_auto){0};
	struct avail_result a;
	struct err e = {0};
	bool tried = backend_bwrap.available(&a, &e) == 0;
	if (tried && a.ok) {
		out->b = &backend_bwrap;
		out->why = xasprintf("backend auto: the bwrap jail (its test jail ran here in %ld ms)",
				     a.elapsed_ms);
		avail_result_free(&a);
		return;
	}
	_cleanup_free_ char *cannot = bwrap_cannot(&a, &e, tried);
	out->fix = xstrdup(!tried ? (e.hint[0] ? e.hint : "run `agentjail doctor`")
			   : a.outcome == AVAIL_NOT_STARTED ? a.diag.fix
							    : "run `agentjail doctor`");
	avail_result_free(&a);
	int abi = landlock_abi();
	for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
		const struct backend_caps *c = all[i]->caps;
		if (!c->auto_note)
			continue;
		int need = net_allow ? c->min_landlock_abi_net : c->min_landlock_abi;
		if (abi >= need) {
			out->b = all[i];
			out->why = xasprintf("backend auto: %s; using the %s backend: %s", cannot,
					     all[i]->name, c->auto_note);
			return;
		}
		out->why = xasprintf("backend auto: %s, and the %s backend needs Landlock ABI %d%s (this "
				     "kernel: %d)",
				     cannot, all[i]->name, need,
				     net_allow ? " for --net allow" : "", abi);
		return;
	}
	out->why = xasprintf("backend auto: %s, and no other backend runs here", cannot);
}

void backend_auto_free(struct backend_auto *a)
{
	free(a->why);
	free(a->fix);
	*a = (struct backend_auto){0};
}
