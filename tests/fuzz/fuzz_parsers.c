/* Fuzz target: the parsers that read text we do not control — git config and .git files from
 * the workspace, paths from the command line, policies and strings read back from the session
 * store — must never crash, leak or read out of bounds, and must keep their invariants (a
 * normalized path is absolute, has no "//", "/./", "/../"; text cleaned for the terminal has no
 * control character left, keeps its width, and a cut fits). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/host/gitinfo.h"
#include "core/backend/bwrap/cmdwords.h"
#include "core/session/sessfmt.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"

#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstr(data, size);

	free(git_config_get(s, "core", "hooksPath"));
	free(git_config_get(s, "include", "path"));
	free(git_parse_gitfile(s));

	/* the commands of a `sh -c` script: bounded, each a plain name */
	struct strv words = STRV_INIT;
	cmdwords_script(s, &words);
	if (words.n > CMDWORDS_MAX)
		abort();
	for (size_t i = 0; i < words.n; i++)
		if (!words.v[i][0] || words.v[i][0] == '-' || strpbrk(words.v[i], " \t\n;|&$'\"`"))
			abort();
	strv_free(&words);

	char *n = path_normalize("/w", s);
	if (n[0] != '/' || strstr(n, "//") || strstr(n, "/./") || strstr(n, "/../") ||
	    (strlen(n) > 1 && n[strlen(n) - 1] == '/'))
		abort();
	char *again = path_normalize("/", n);
	if (strcmp(again, n) != 0) /* idempotent */
		abort();
	free(again);
	free(n);

	struct strbuf b = STRBUF_INIT;
	sb_add_shquoted(&b, s);
	sb_free(&b);

	free(sessfmt_policy(s));
	char *c = fmt_clean(s);
	for (const unsigned char *p = (const unsigned char *)c; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
	char *c2 = fmt_clean(c);
	if (strcmp(c, c2) != 0 || fmt_width(c) != fmt_width(s)) /* idempotent, same width */
		abort();
	free(c2);
	free(c);
	size_t k = size % 13;
	char *cut = fmt_cut(s, k);
	if (fmt_width(cut) > k)
		abort();
	free(cut);
	free(s);
	return 0;
}
