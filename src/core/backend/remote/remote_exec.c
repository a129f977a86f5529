/* The remote backend from agentjail (doc/design.md §2a, §4b, §7). agentjail is a static PIE and
 * libcurl cannot be linked statically here, so the opensandbox backend is its own dynamically
 * linked program, agentjail-remote (src/remote_main.c, osbrun.c, osb_client.c, osb_sync.c),
 * found like the jail's init (beside agentjail, else PREFIX/libexec/agentjail/remote) with the
 * same ownership and permission checks. agentjail execs it with its own argv and environment
 * (the API key stays in the variable [opensandbox] api_key_env names, never in argv); it runs
 * the same command (`run …`, `resume …`) and takes the same backend. This file is linked into
 * agentjail; agentjail-remote links osbrun.c, which defines backend_opensandbox itself. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "core/backend/backend.h"
#include "core/jail/initbin.h"
#include "util/cleanup.h"
#include "util/strv.h"

extern char **environ;

static struct strv main_argv = STRV_INIT;

void backend_keep_argv(int argc, char **argv)
{
	strv_free(&main_argv);
	for (int i = 0; i < argc; i++)
		strv_push(&main_argv, argv[i]);
}

/* Replace this process by agentjail-remote with main's argv: returns only on an error (said):
 * EXIT_JAIL. */
static int remote_exec(const struct backend *b, struct run_request *req,
		       const struct backend_io *io)
{
	(void)b;
	(void)req;
	struct err e = {0};
	_cleanup_free_ char *path = NULL;
	int fd = helperbin_open(&HELPER_REMOTE, &path, &e);
	if (fd >= 0 && !main_argv.n) {
		err_set(&e, 0, path, "the remote backend needs agentjail's command line");
		err_hint(&e, "run it as `agentjail run --backend opensandbox …`");
	} else if (fd >= 0) {
		(void)fflush(NULL);
		fexecve(fd, strv_data(&main_argv), environ);
		err_set(&e, errno, path, "cannot run the remote backend");
		err_hint(&e, "reinstall agentjail (make install)");
	}
	if (fd >= 0)
		(void)close(fd);
	io->error(io->arg, &e);
	return EXIT_JAIL;
}

const struct backend backend_opensandbox = {
	.id = BACKEND_OPENSANDBOX,
	.name = "opensandbox",
	.caps = &backend_caps_opensandbox,
	.elsewhere = true,
	.run = remote_exec,
};
