/* bindcheck: see bindcheck.h. */
#include "core/jail/bindcheck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void bindcheck_add(struct strbuf *b, const struct bindcheck_id *id, const char *path)
{
	sb_addf(b, "%llx %llx %x %s", id->dev, id->ino, id->type, path);
	sb_addc(b, '\0');
}

/* One hex number then a space; NULL when there is none. */
static const char *hex_field(const char *p, unsigned long long *out)
{
	char *end;
	if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
		return NULL;
	errno = 0;
	*out = strtoull(p, &end, 16);
	return errno || *end != ' ' ? NULL : end + 1;
}

static const char *type_name(unsigned t)
{
	switch (t) {
	case S_IFDIR:
		return "directory";
	case S_IFREG:
		return "file";
	case S_IFLNK:
		return "symlink";
	default:
		return "special file";
	}
}

int bindcheck_verify(const char *buf, size_t len, bindcheck_stat_fn st, struct err *e)
{
	const char *p = buf, *end = buf + len;
	while (p < end) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));
		struct bindcheck_id want;
		unsigned long long type = 0;
		const char *path = nul ? hex_field(p, &want.dev) : NULL;
		path = path ? hex_field(path, &want.ino) : NULL;
		path = path ? hex_field(path, &type) : NULL;
		if (!path || path[0] != '/' || type > 0xffffffffULL)
			return err_set(e, 0, NULL, "the table of the binds' identities is malformed "
						   "(agentjail and its init do not match: reinstall both)");
		want.type = (unsigned)type;
		struct bindcheck_id got = {0};
		int rc = st(path, &got);
		if (rc == -EACCES) {
			p = nul + 1; /* out of reach for init, and so for the command */
			continue;
		}
		if (rc < 0)
			return err_set(e, -rc, path, "%s in the jail's view is not the %s agentjail "
						     "bound there",
				       path, type_name(want.type));
		if (got.dev != want.dev || got.ino != want.ino || got.type != want.type) {
			err_set(e, 0, path,
				"%s in the jail's view is a %s (device %llx, inode %llu), not the %s "
				"agentjail bound there (device %llx, inode %llu)",
				path, type_name(got.type), got.dev, got.ino, type_name(want.type),
				want.dev, want.ino);
			err_hint(e, "something changed the path between agentjail opening it and the "
				    "command's start (a rename on the host, a mount over it); run again, "
				    "and find what moved it");
			return -1;
		}
		p = nul + 1;
	}
	return 0;
}
