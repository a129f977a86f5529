/* initpath: where the jail's init is looked for (initpath.h). */
#include "core/plan/initpath.h"

#include "util/cleanup.h"
#include "util/path.h"

void initpath_candidates(const char *self, struct strv *out)
{
	_cleanup_free_ char *dir = path_dirname(self);
	strv_push_take(out, path_join(dir, INITPATH_SIBLING));
	strv_push_take(out, path_normalize(dir, INITPATH_LIBEXEC));
}
