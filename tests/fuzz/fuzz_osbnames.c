/* Fuzz target: the names a sandbox sends back and its listing (core/backend/remote/osb_names.h)
 * come from a remote sandbox, which may forge any of them. Whatever arrives: no crash, leak or read
 * out of bounds; a name passed as OK is plain (no leading '/', no empty, "." or ".." component, no
 * NUL or control byte, bounded); where a refused name pointed is itself a plain path; the listing
 * keeps only checked names, each once and sorted, with modes inside 0755, and what it says of a
 * refused line holds no control byte. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/remote/osb_names.h"
#include "util/strv.h"

#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void plain(const char *s, size_t n)
{
	FUZZ_CHECK(n > 0 && n <= OSB_NAME_MAX && s[0] != '/' && s[n - 1] != '/');
	FUZZ_CHECK(!memmem(s, n, "//", 2));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(s[i] && (unsigned char)s[i] >= 0x20 && s[i] != 0x7f);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		FUZZ_CHECK(j - i <= OSB_COMPONENT_MAX);
		FUZZ_CHECK(!(j - i == 1 && s[i] == '.') && !(j - i == 2 && s[i] == '.' && s[i + 1] == '.'));
		i = j + 1;
	}
}

static void one_name(const char *s, size_t n)
{
	char *aim = NULL;
	enum osb_name_fault f = osb_name_check(s, n, &aim);
	if (f == OSB_NAME_OK) {
		plain(s, n);
		FUZZ_CHECK(aim && strlen(aim) == n && !memcmp(aim, s, n));
		FUZZ_CHECK(osb_protected(aim) == osb_protected(aim)); /* pure */
	}
	if (aim) {
		enum osb_name_fault g = osb_name_check(aim, strlen(aim), NULL);
		FUZZ_CHECK(g == OSB_NAME_OK || g == OSB_NAME_LONG || g == OSB_NAME_RESERVED);
	}
	size_t lens[8];
	if (f == OSB_NAME_OK) {
		size_t k = osb_exec_dirs(aim, lens, 8);
		for (size_t i = 0; i < k; i++)
			FUZZ_CHECK(lens[i] < n && (lens[i] == 0 || aim[lens[i]] == '/'));
	}
	free(aim);
	char *shown = osb_name_shown(s, n);
	for (const unsigned char *p = (const unsigned char *)shown; *p; p++)
		FUZZ_CHECK(*p >= 0x20 && *p != 0x7f);
	free(shown);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	one_name(s, size);
	/* the input as the listing's lines (a NUL ends a line's text, as it would arrive) */
	struct strv lines = STRV_INIT;
	for (size_t i = 0; i < size;) {
		const char *nl = memchr(s + i, '\n', size - i);
		size_t l = nl ? (size_t)(nl - (s + i)) : size - i;
		char *line = fuzz_cstr(s + i, l);
		strv_push_take(&lines, line);
		i += l + 1;
	}
	struct osb_listing L;
	osb_listing_parse(&lines, &L);
	for (size_t i = 0; i < L.n; i++) {
		plain(L.v[i].rel, strlen(L.v[i].rel));
		FUZZ_CHECK((L.v[i].mode & ~0755u) == 0);
		FUZZ_CHECK(i == 0 || strcmp(L.v[i - 1].rel, L.v[i].rel) < 0);
		FUZZ_CHECK(osb_listing_file(&L, L.v[i].rel) == &L.v[i]);
		FUZZ_CHECK(!osb_listing_link(&L, L.v[i].rel));
		FUZZ_CHECK(!L.v[i].protected_ || osb_protected(L.v[i].rel) ||
			   osb_exec_dirs(L.v[i].rel, (size_t[8]){0}, 8));
	}
	for (size_t i = 0; i < L.links.n; i++)
		plain(L.links.v[i], strlen(L.links.v[i]));
	for (size_t i = 0; i < L.aimed.n; i++)
		FUZZ_CHECK(osb_protected(L.aimed.v[i]));
	FUZZ_CHECK(L.refused.n <= OSB_REFUSED_SHOWN && L.aimed.n <= OSB_REFUSED_SHOWN);
	for (size_t i = 0; i < L.refused.n; i++)
		for (const unsigned char *p = (const unsigned char *)L.refused.v[i]; *p; p++)
			FUZZ_CHECK(*p >= 0x20 && *p != 0x7f);
	osb_listing_free(&L);
	strv_free(&lines);
	return 0;
}
