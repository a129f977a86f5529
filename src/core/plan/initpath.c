/* initpath: where agentjail's helper programs are looked for (initpath.h). */
#include "core/plan/initpath.h"

#include "util/cleanup.h"
#include "util/path.h"

const struct helperpath HELPER_INIT = {
	.sibling = INITPATH_SIBLING,
	.libexec = INITPATH_LIBEXEC,
	.what = "the jail's init",
	.role = "run it as the jail's PID 1",
	.missing = "it is built and installed with agentjail: `make` puts it beside the binary, "
		   "`make install` in PREFIX/libexec/agentjail/init; agentjail runs no jail without "
		   "it",
};

const struct helperpath HELPER_REMOTE = {
	.sibling = REMOTEPATH_SIBLING,
	.libexec = REMOTEPATH_LIBEXEC,
	.what = "the remote backend",
	.role = "run it with the service's API key",
	.missing = "it is built and installed with agentjail: `make` puts it beside the binary, "
		   "`make install` in PREFIX/libexec/agentjail/remote; only --backend opensandbox "
		   "needs it",
};

const struct helperpath HELPER_TLS = {
	.sibling = TLSPATH_SIBLING,
	.libexec = TLSPATH_LIBEXEC,
	.what = "the TLS inspector",
	.role = "run it with the run's secrets",
	.missing = "it is built and installed with agentjail: `make` puts it beside the binary, "
		   "`make install` in PREFIX/libexec/agentjail/tls; a run that adds a secret at the "
		   "proxy, checks request rules or serves --ssh-agent needs it (nothing else does)",
};

void helperpath_candidates(const struct helperpath *h, const char *self, struct strv *out)
{
	_cleanup_free_ char *dir = path_dirname(self);
	strv_push_take(out, path_join(dir, h->sibling));
	strv_push_take(out, path_normalize(dir, h->libexec));
}

void initpath_candidates(const char *self, struct strv *out)
{
	helperpath_candidates(&HELPER_INIT, self, out);
}
