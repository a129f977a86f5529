/* relname: names agentjail did not choose, judged (relname.h). */
#include "core/plan/relname.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/plan/gitprotect.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

static bool is_control(const unsigned char *s, size_t i, size_t n)
{
	/* C0 and DEL; C1 is U+0080..U+009F, in UTF-8 0xC2 0x80..0x9F */
	return s[i] < 0x20 || s[i] == 0x7f ||
	       (s[i] == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f);
}

enum relname_fault relname_check(const char *s, size_t n, char **aim)
{
	const unsigned char *u = (const unsigned char *)s;
	enum relname_fault f = RELNAME_OK;
	if (aim)
		*aim = NULL;
	if (n > RELNAME_MAX)
		return RELNAME_LONG;
	for (size_t i = 0; i < n && f == RELNAME_OK; i++)
		if (!u[i])
			f = RELNAME_NUL;
		else if (is_control(u, i, n))
			f = RELNAME_CONTROL;
	if (f != RELNAME_OK)
		return f;
	if (aim) {
		_cleanup_free_ char *z = xstrndup(s, n);
		_cleanup_free_ char *norm = path_normalize("/", z);
		if (norm[1])
			*aim = xstrdup(norm + 1);
	}
	if (n == 0)
		return RELNAME_EMPTY;
	if (s[0] == '/')
		return RELNAME_ABSOLUTE;
	for (size_t i = 0; i <= n;) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		size_t l = j - i;
		if (l == 0)
			return RELNAME_EMPTY_DIR;
		if (l == 1 && s[i] == '.')
			return RELNAME_DOT;
		if (l == 2 && s[i] == '.' && s[i + 1] == '.')
			return RELNAME_DOTDOT;
		if (l > RELNAME_COMPONENT_MAX)
			return RELNAME_LONG;
		i = j + 1;
	}
	return RELNAME_OK;
}

const char *relname_fault_str(enum relname_fault f)
{
	switch (f) {
	case RELNAME_OK:
		return "a plain relative path";
	case RELNAME_EMPTY:
		return "an empty name";
	case RELNAME_ABSOLUTE:
		return "an absolute name (a leading /)";
	case RELNAME_EMPTY_DIR:
		return "an empty component (// or a trailing /)";
	case RELNAME_DOT:
		return "a . component";
	case RELNAME_DOTDOT:
		return "a .. component";
	case RELNAME_NUL:
		return "a NUL byte";
	case RELNAME_CONTROL:
		return "a control character";
	case RELNAME_LONG:
		return "too long (over 4096 bytes, or a component over 255)";
	}
	return "?";
}

char *relname_shown(const char *s, size_t n)
{
	struct strbuf b = STRBUF_INIT;
	sb_addc(&b, '"');
	for (size_t i = 0; i < n && i < 200; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			sb_addf(&b, "\\%c", c);
		else if (c == '\n')
			sb_add(&b, "\\n");
		else if (c == '\t')
			sb_add(&b, "\\t");
		else if (c < 0x20 || c >= 0x7f)
			sb_addf(&b, "\\x%02x", c);
		else
			sb_addc(&b, (char)c);
	}
	sb_add(&b, n > 200 ? "\"…" : "\"");
	return sb_steal(&b);
}

static bool comp_is(const char *c, size_t l, const char *name)
{
	return strlen(name) == l && !strncasecmp(c, name, l);
}

size_t relname_exec_dirs(const char *rel, size_t *lens, size_t max)
{
	size_t k = 0;
	for (const char *p = rel; k < max;) {
		const char *q = strchrnul(p, '/');
		for (const char *const *n = git_exec_names; *n && k < max; n++)
			if (comp_is(p, (size_t)(q - p), *n)) {
				lens[k++] = p == rel ? 0 : (size_t)(p - rel) - 1;
				break;
			}
		if (!*q)
			break;
		p = q + 1;
	}
	return k;
}
