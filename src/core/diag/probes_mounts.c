/* probes, the mount checks: mountinfo text in, verdict out (pure), and the probes that read
 * the jail's own mountinfo. */
#include "core/diag/probes_internal.h"

/* ======================================================================================= */
/* Mounts (pure: mountinfo text in, verdict out)                                           */

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* Parse the line at *p into m and advance *p past it. false at the end of the text. */
bool pr_mnt_next(const char **p, struct mnt_entry *m)
{
	while (**p) {
		const char *line = *p;
		const char *nl = strchr(line, '\n');
		*p = nl ? nl + 1 : line + strlen(line);
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		_cleanup_free_ char *l = xstrndup(line, len);
		const char *sep = strstr(l, " - ");
		if (!sep ||
		    sscanf(l, "%*s %*s %*s %4095s %4095s %255s", m->root, m->point, m->opts) != 3 ||
		    sscanf(sep + 3, "%63s", m->fstype) != 1)
			continue;
		unescape(m->root);
		unescape(m->point);
		return true;
	}
	return false;
}

static bool has_opt(const char *opts, const char *want)
{
	size_t n = strlen(want);
	for (const char *s = opts; *s;) {
		size_t k = strcspn(s, ",");
		if (k == n && !strncmp(s, want, n))
			return true;
		s += k + (s[k] == ',');
	}
	return false;
}

const char *const pr_dev_nodes[] = {"/dev/null",    "/dev/zero", "/dev/full",    "/dev/random",
				    "/dev/urandom", "/dev/tty",  "/dev/console", NULL};

bool pr_in_list(const char *s, const char *const *l)
{
	for (size_t i = 0; l[i]; i++)
		if (!strcmp(s, l[i]))
			return true;
	return false;
}

/* A device node bound onto itself: bwrap's --dev set, or a --dev of the policy. */
static bool is_device_bind(const struct probe_ctx *c, const struct mnt_entry *m)
{
	return pr_in_list(m->point, pr_dev_nodes) || strv_contains(&c->dev, m->point);
}

/* Why a writable mount may be writable, or NULL. */
static const char *rw_reason(const struct probe_ctx *c, const struct mnt_entry *m)
{
	static const char *const scratch[] = {"/tmp", "/var/tmp", "/run",        "/dev/shm",
					      "/dev", "/dev/pts", "/dev/mqueue", NULL};
	const char *w = pr_writable_by_policy(c, m->point);
	if (w)
		return w;
	if (pr_in_list(m->point, scratch))
		return "private";
	if (!strcmp(m->point, "/proc") && !strcmp(m->fstype, "proc"))
		return "procfs";
	if (c->home && !strcmp(m->point, c->home) && !strcmp(m->fstype, "tmpfs"))
		return "home tmpfs";
	if (toolcache_is_private_mount(c->home, m->root, m->point))
		return "private package cache";
	if (homekeep_is_home_mount(c->home, m->root, m->point))
		return "persisted home";
	return is_device_bind(c, m) ? "device" : NULL;
}

void pr_list_add(struct strbuf *b, int *n, const char *s)
{
	if ((*n)++ < LIST_MAX)
		sb_addf(b, "%s%s", b->len ? ", " : "", s);
}

static void verdict(struct probe_out *o, struct strbuf *bad, int nbad, int total,
		    const char *fail_fmt, const char *pass_fmt)
{
	if (nbad) {
		char more[32] = "";
		if (nbad > LIST_MAX)
			snprintf(more, sizeof more, " (+%d more)", nbad - LIST_MAX);
		pr_set(o, PROBE_FAIL, "%d %s: %s%s", nbad, fail_fmt, sb_str(bad), more);
	} else {
		pr_set(o, PROBE_PASS, "%d mounts, %s", total, pass_fmt);
	}
	sb_free(bad);
}

void probe_check_mounts_rw(const struct probe_ctx *c, const char *mi, struct probe_out *o)
{
	struct mnt_entry m;
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	for (const char *p = mi; pr_mnt_next(&p, &m); total++)
		if (has_opt(m.opts, "rw") && !rw_reason(c, &m))
			pr_list_add(&bad, &nbad, m.point);
	verdict(o, &bad, nbad, total, "writable mounts the policy does not allow",
		"writable only where the policy allows");
}

void probe_check_mounts_nosuid(const char *mi, struct probe_out *o)
{
	struct mnt_entry m;
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	for (const char *p = mi; pr_mnt_next(&p, &m); total++)
		if (!has_opt(m.opts, "nosuid"))
			pr_list_add(&bad, &nbad, m.point);
	verdict(o, &bad, nbad, total, "mounts without nosuid", "all nosuid");
}

void probe_check_mounts_nodev(const struct probe_ctx *c, const char *mi, struct probe_out *o)
{
	struct mnt_entry m;
	struct strbuf bad = STRBUF_INIT;
	int nbad = 0, total = 0;
	for (const char *p = mi; pr_mnt_next(&p, &m); total++) {
		bool exempt = is_device_bind(c, &m) ||
			      (!strcmp(m.point, "/dev/pts") && !strcmp(m.fstype, "devpts"));
		if (!exempt && !has_opt(m.opts, "nodev"))
			pr_list_add(&bad, &nbad, m.point);
	}
	verdict(o, &bad, nbad, total, "mounts without nodev",
		"nodev except the device nodes and /dev/pts");
}

static void with_mountinfo(struct probe_out *o, char **mi)
{
	*mi = pr_read_all("/proc/self/mountinfo");
	if (!*mi || !**mi)
		pr_set(o, PROBE_FAIL, "cannot read /proc/self/mountinfo: %s", pr_ename(errno));
}

void p_mounts_rw(const struct probe_ctx *c, struct probe_out *o)
{
	_cleanup_free_ char *mi = NULL;
	with_mountinfo(o, &mi);
	if (mi && *mi)
		probe_check_mounts_rw(c, mi, o);
}

void p_mounts_nosuid(const struct probe_ctx *c, struct probe_out *o)
{
	(void)c;
	_cleanup_free_ char *mi = NULL;
	with_mountinfo(o, &mi);
	if (mi && *mi)
		probe_check_mounts_nosuid(mi, o);
}

void p_mounts_nodev(const struct probe_ctx *c, struct probe_out *o)
{
	_cleanup_free_ char *mi = NULL;
	with_mountinfo(o, &mi);
	if (mi && *mi)
		probe_check_mounts_nodev(c, mi, o);
}

