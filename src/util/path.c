#include "util/path.h"

#include <string.h>

#include "util/strbuf.h"
#include "util/xalloc.h"

bool path_is_normal(const char *p)
{
	if (p[0] != '/')
		return false;
	if (!p[1])
		return true;
	for (const char *c = p + 1;;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		if (!c[n])
			return true;
		c += n + 1;
	}
}

char *path_normalize(const char *cwd, const char *p)
{
	/* most paths a plan handles are normal already: one copy, no walk */
	if (path_is_normal(p))
		return xstrdup(p);
	struct strbuf in = STRBUF_INIT;
	if (p[0] != '/') {
		sb_add(&in, cwd ? cwd : "/");
		sb_addc(&in, '/');
	}
	sb_add(&in, p);

	/* a stack of component offsets into out */
	size_t len = in.len;
	char *out = xmalloc(len + 2);
	size_t olen = 0;
	const char *s = sb_str(&in);
	size_t i = 0;
	while (i < len) {
		while (i < len && s[i] == '/')
			i++;
		size_t start = i;
		while (i < len && s[i] != '/')
			i++;
		size_t clen = i - start;
		if (clen == 0 || (clen == 1 && s[start] == '.'))
			continue;
		if (clen == 2 && s[start] == '.' && s[start + 1] == '.') {
			while (olen > 0 && out[olen - 1] != '/')
				olen--;
			if (olen > 0)
				olen--; /* drop the slash */
			continue;
		}
		out[olen++] = '/';
		memcpy(out + olen, s + start, clen);
		olen += clen;
	}
	if (olen == 0)
		out[olen++] = '/';
	out[olen] = '\0';
	sb_free(&in);
	return out;
}

char *path_expand_home(const char *home, const char *p)
{
	if (home && p[0] == '~' && (p[1] == '\0' || p[1] == '/'))
		return xasprintf("%s%s", home, p + 1);
	return xstrdup(p);
}

const char *path_below(const char *p, const char *root)
{
	if (strcmp(root, "/") == 0)
		return p[0] == '/' ? p + 1 : NULL;
	size_t n = strlen(root);
	if (strncmp(p, root, n) != 0)
		return NULL;
	if (p[n] == '\0')
		return p + n;
	if (p[n] == '/')
		return p + n + 1;
	return NULL;
}

bool path_is_under(const char *p, const char *root) { return path_below(p, root) != NULL; }

bool path_is_strict_ancestor(const char *p, const char *q)
{
	const char *rel = path_below(q, p);
	return rel && rel[0] != '\0';
}

char *path_join(const char *a, const char *b)
{
	while (*b == '/')
		b++;
	if (strcmp(a, "/") == 0)
		return xstrcat3("/", b, "");
	if (!*b)
		return xstrdup(a);
	return xstrcat3(a, "/", b);
}

char *path_dirname(const char *p)
{
	const char *slash = strrchr(p, '/');
	if (!slash || slash == p)
		return xstrdup("/");
	return xstrndup(p, (size_t)(slash - p));
}

const char *path_basename(const char *p)
{
	const char *slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}
