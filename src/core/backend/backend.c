/* backend: the table of backends and the choice of one (backend.h, doc/design.md §2a). */
#include "core/backend/backend.h"

#include <string.h>

#include "core/config/config.h"

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
