/* --backend: where `run` runs (doc/design.md §4b). One place parses the flag and reads the
 * configuration's `backend`, in agentjail and in agentjail-remote alike; a new backend is a new
 * value here. */
#include <stdbool.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/osbrun.h"
#include "core/backend/remote/osb_plan.h"

int cmd_take_backend(int *argc, char **argv, const char **backend)
{
	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		int take = 0;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--backend")) {
			if (i + 1 >= *argc) {
				cmd_warn("--backend needs a value: local, landlock or opensandbox");
				return -1;
			}
			*backend = argv[i + 1];
			take = 2;
		} else if (!strncmp(a, "--backend=", 10)) {
			*backend = a + 10;
			take = 1;
		} else {
			int ar = policy_opt_arity(a);
			if (ar < 0)
				break; /* the command */
			i += ar;
			continue;
		}
		memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take + 1) * sizeof *argv);
		*argc -= take;
		i--;
	}
	enum backend b;
	if (*backend && backend_parse(*backend, &b) < 0) {
		cmd_warn("--backend %s: not a backend (local, landlock or opensandbox)", *backend);
		return -1;
	}
	return 0;
}

enum backend cmd_backend_of(const char *flag, const struct config *cfg)
{
	const char *v = flag ? flag : cfg ? cfg->backend.v : NULL;
	enum backend b = BACKEND_LOCAL;
	if (v && backend_parse(v, &b) < 0)
		b = BACKEND_LOCAL; /* not reached: the flag and the configuration were checked */
	return b;
}

bool cmd_backend_remote(const char *flag, const struct config *cfg)
{
	return cmd_backend_of(flag, cfg) == BACKEND_OPENSANDBOX;
}
