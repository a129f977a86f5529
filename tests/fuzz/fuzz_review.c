/* Fuzz target: what a --fs review change set feeds the pure rules (core/plan/review.h): a
 * file's old and new bytes, which the jail chose, to the unified diff; a name to the
 * protection rule and the symlink rules (inside, where it lands); bytes to the baselines' reader. Whatever arrives: no
 * crash, leak or read out of bounds; the diff's counts fit the lines there are, and its text
 * names the file only in its headers; a protected root is a prefix of the name; the baselines
 * read back as written. The input is split at its first 0xff byte: old bytes, then new. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/plan/review.h"
#include "util/strbuf.h"

#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned long lines(const char *b, size_t n)
{
	unsigned long k = 0;
	for (size_t i = 0; i < n; i++)
		k += b[i] == '\n';
	return k + (n && b[n - 1] != '\n');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *cut = memchr(data, 0xff, size);
	size_t olen = cut ? (size_t)(cut - data) : size / 2;
	char *old = fuzz_dup(data, olen);
	char *neu = fuzz_dup(data + olen + (cut ? 1 : 0), size - olen - (cut ? 1 : 0));
	size_t nlen = size - olen - (cut ? 1 : 0);
	struct strbuf out = STRBUF_INIT;
	struct rv_diffstat st;
	rv_unified(&out, "f", old, olen, neu, nlen, &st);
	if (!st.binary) {
		FUZZ_CHECK(st.del <= lines(old, olen) && st.ins <= lines(neu, nlen));
		FUZZ_CHECK((st.ins + st.del == 0) == (out.len == 0));
		FUZZ_CHECK(!out.len || !strncmp(out.s, "--- a/f\n+++ b/f\n@@ -", 20));
	}
	sb_free(&out);
	rv_unified(NULL, "f", NULL, 0, neu, nlen, &st);
	FUZZ_CHECK(st.binary || (st.del == 0 && st.ins == lines(neu, nlen)));

	/* a name: the protection rule and the symlink rule are total */
	char *name = fuzz_cstr(data, size);
	char *root = NULL;
	enum rv_guard g = review_guard(name, size & 1, NULL, NULL, NULL, &root);
	FUZZ_CHECK((g == RV_FREE) == (root == NULL));
	FUZZ_CHECK(!root || !strncasecmp(root, name, strlen(root)));
	free(root);
	(void)review_link_inside(name, name);
	/* where a link lands: inside (relative, no "..", never absolute) or NULL */
	char *at = review_link_lands("a/b/l", name);
	FUZZ_CHECK(!at || (at[0] != '/' && strcmp(at, "..") && strncmp(at, "../", 3) &&
			   !strstr(at, "/../") && (strlen(at) < 3 || strcmp(at + strlen(at) - 3, "/.."))));
	FUZZ_CHECK((at != NULL) == review_link_inside("a/b/l", name));
	free(at);
	free(name);

	/* bytes as the baselines file */
	struct rv_manifest m;
	struct err e = {0};
	if (rv_manifest_parse((const char *)data, size, "fuzz", &m, &e) == 0) {
		size_t len;
		char *again = rv_manifest_format(&m, &len);
		struct rv_manifest back;
		FUZZ_CHECK(rv_manifest_parse(again, len, "fuzz", &back, &e) == 0 && back.n == m.n);
		rv_manifest_free(&back);
		free(again);
		rv_manifest_free(&m);
	}
	free(old);
	free(neu);
	return 0;
}
