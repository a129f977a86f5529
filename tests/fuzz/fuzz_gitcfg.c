/* Fuzz target: gitcfg_judge, which decides whether a config written in the jail is kept for the
 * host's next git (issue 26, item 4). Never crash or read out of bounds; the key it names is
 * clean; and what it calls harmless stays so only as long as nothing dangerous follows:
 * appending a line that sets core.fsmonitor (or include.path) to a harmless text is never
 * judged harmless, whatever state the text leaves the syntax in (an open quote, a trailing
 * backslash, a header without its end). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/gitcfg.h"

#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void judged(const char *text, size_t len, struct gitcfg_judgement *j)
{
	gitcfg_judge(text, len, j);
	for (const unsigned char *p = (const unsigned char *)j->key; *p; p++)
		FUZZ_CHECK(*p >= 0x20 && *p != 0x7f && *p != '"');
	char *why = gitcfg_explain(j);
	FUZZ_CHECK((why == NULL) == (j->verdict == GITCFG_HARMLESS));
	free(why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	FUZZ_CHECK(text);
	memcpy(text, data, size);
	text[size] = '\0';
	struct gitcfg_judgement j;
	judged(text, size, &j);
	if (j.verdict == GITCFG_HARMLESS) {
		static const char *const tails[] = {"\n[core]\n\tfsmonitor = x\n",
						    "\n[include]\n\tpath = /tmp/x\n",
						    "\n[alias]\n\tx = !sh\n"};
		for (size_t t = 0; t < sizeof tails / sizeof *tails; t++) {
			size_t n = size + strlen(tails[t]);
			char *more = malloc(n + 1);
			FUZZ_CHECK(more);
			memcpy(more, text, size);
			memcpy(more + size, tails[t], strlen(tails[t]) + 1);
			struct gitcfg_judgement k;
			judged(more, n, &k);
			FUZZ_CHECK(k.verdict != GITCFG_HARMLESS);
			free(more);
		}
	}
	free(text);
	return 0;
}
