/* bwrapmsg: bwrap's setup errors → cause and fix (bwrapmsg.h). */
#include "core/backend/bwrap/bwrapmsg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

#define PREFIX "bwrap: "

/* How a matched line is explained. In `cause`, %1 is the path the line names (after the
 * prefix, up to its last ": ", without bwrap's "/newroot"), %2 bwrap's reason (after the last
 * ": "), %0 the whole message without the prefix. */
struct rule {
	const char *prefix; /* the start of bwrap's message, after "bwrap: " */
	enum bwrapmsg_kind kind;
	const char *cause;
	const char *fix;
};

static const char fix_container[] =
	"in this container use the Landlock backend (`--backend landlock`, or backend = \"auto\" "
	"in ~/.config/agentjail/config.toml: the bwrap jail where it can be built, else Landlock); "
	"or run agentjail on the host, or give its container the right to mount in a user "
	"namespace (docker/podman: --security-opt seccomp=unconfined --security-opt "
	"apparmor=unconfined --security-opt systempaths=unconfined); `agentjail doctor` checks";
static const char fix_userns[] = "`agentjail doctor` names the cause on this host and the "
				 "exact command that allows user namespaces";
static const char fix_old_bwrap[] = "agentjail needs bubblewrap 0.8.0 or newer (--disable-userns, "
				    "--ro-bind-fd, --json-status-fd): install it from your "
				    "distribution's backports, or point AGENTJAIL_BWRAP at a newer one";

static const struct rule rules[] = {
	/* user namespaces (bubblewrap.c, the unshare/clone of the namespaces) */
	{"No permissions to creat", BWM_USERNS,
	 "this host does not let this user create a user namespace", fix_userns},
	{"Creating new namespace failed: nesting depth", BWM_USERNS,
	 "the host's limit of user namespaces is reached (/proc/sys/user/max_user_namespaces)",
	 "raise it: sysctl -w user.max_user_namespaces=15000, or end other sandboxes"},
	{"Creating new namespace failed", BWM_USERNS, "bwrap could not create the jail's "
						      "namespaces: %2", fix_userns},
	{"setting up uid map", BWM_USERNS, "bwrap could not map the jail's user id: %2", fix_userns},
	{"setting up gid map", BWM_USERNS, "bwrap could not map the jail's group id: %2", fix_userns},
	{"error writing to setgroups", BWM_USERNS, "bwrap could not set up the jail's groups: %2",
	 fix_userns},
	{"unshare user ns", BWM_USERNS, "bwrap could not create a user namespace: %2", fix_userns},
	{"Unexpected capabilities but not setuid", BWM_USERNS,
	 "bwrap has file capabilities but is not setuid (an old packaging)",
	 "reinstall bubblewrap from your distribution (apt-get install --reinstall bubblewrap)"},
	/* mounts (setup_newroot, the privileged ops) */
	{"Can't mount proc on", BWM_MOUNT,
	 "the kernel refused a fresh /proc for the jail (%2): this host's /proc is partly masked, "
	 "as in a container",
	 fix_container},
	{"Failed to make / slave", BWM_MOUNT, "the kernel refused the jail's mount namespace (%2)",
	 fix_container},
	{"Failed to mount tmpfs", BWM_MOUNT, "the kernel refused the jail's root tmpfs (%2)",
	 fix_container},
	{"Can't mount tmpfs on", BWM_MOUNT, "the kernel refused a tmpfs at %1 in the jail (%2)",
	 fix_container},
	{"Can't mount devpts on", BWM_MOUNT, "the kernel refused the jail's /dev/pts (%2)",
	 fix_container},
	{"Can't mount mqueue on", BWM_MOUNT, "the kernel refused a mqueue mount at %1 (%2)",
	 fix_container},
	{"Can't bind mount", BWM_MOUNT, "the kernel refused a bind mount into the jail: %0",
	 fix_container},
	{"Can't remount readonly on", BWM_MOUNT, "the kernel refused to make %1 read-only in the "
						  "jail (%2)", fix_container},
	{"Creating newroot failed", BWM_MOUNT, "bwrap could not build the jail's root (%2)",
	 fix_container},
	{"setting up newroot bind", BWM_MOUNT, "bwrap could not build the jail's root (%2)",
	 fix_container},
	{"pivot_root", BWM_MOUNT, "the kernel refused to switch to the jail's root (%2)",
	 fix_container},
	/* what the plan binds */
	{"Can't find source path", BWM_SOURCE,
	 "%1, which the jail binds, cannot be reached (%2): it changed since the jail was planned",
	 "check that %1 exists and is yours to read, then run again"},
	{"Can't get type of source", BWM_SOURCE, "%1, which the jail binds, cannot be read (%2)",
	 "check that %1 exists and is yours to read, then run again"},
	{"Can't mkdir parents for", BWM_DEST,
	 "bwrap could not create the mount point %1 inside the jail (%2)",
	 "a path given with --rw, --ro, --hide or --dev must lie where the jail can hold it: "
	 "create it on the host first, or drop that option"},
	{"Can't mkdir", BWM_DEST, "bwrap could not create the mount point %1 inside the jail (%2)",
	 "a path given with --rw, --ro, --hide or --dev must lie where the jail can hold it: "
	 "create it on the host first, or drop that option"},
	{"Can't create file at", BWM_DEST,
	 "bwrap could not create the mount point %1 inside the jail (%2)",
	 "a path given with --rw, --ro, --hide or --dev must lie where the jail can hold it: "
	 "create it on the host first, or drop that option"},
	{"Can't make symlink at", BWM_DEST, "bwrap could not create the link %1 inside the jail "
					     "(%2)", "report it: the plan links a path twice"},
	{"Can't chdir to", BWM_DEST, "the jail has no directory %1 to start in (%2)",
	 "run from inside the workspace, or give --workspace the directory you are in"},
	/* the jail's init */
	{"execvp", BWM_EXEC, "bwrap could not execute agentjail's init %1 in the jail (%2)",
	 "reinstall agentjail (its init is agentjail's own binary, bound from an fd)"},
	/* seccomp */
	{"Unable to set up system call filtering", BWM_SECCOMP,
	 "the kernel refused the jail's seccomp filter: %0",
	 "agentjail needs a kernel with seccomp filters (CONFIG_SECCOMP_FILTER); `agentjail "
	 "doctor` checks"},
	{"prctl(PR_SET_SECCOMP)", BWM_SECCOMP, "the kernel refused the jail's seccomp filter (%2)",
	 "agentjail needs a kernel with seccomp filters (CONFIG_SECCOMP_FILTER); `agentjail "
	 "doctor` checks"},
	/* an older bwrap */
	{"Unknown option", BWM_OPTION, "this bwrap is too old for the jail: %0", fix_old_bwrap},
	{"--disable-userns requires", BWM_OPTION, "this bwrap is too old for the jail: %0",
	 fix_old_bwrap},
	{"Invalid fd", BWM_OPTION, "this bwrap is too old for the jail: %0", fix_old_bwrap},
};

/* bwrap's warnings ("bwrap: Warning: …") do not stop it. */
static bool is_failure(const char *msg, size_t len)
{
	return !(len >= 8 && !strncmp(msg, "Warning:", 8));
}

const char *bwrapmsg_find(const char *text, size_t *len)
{
	const size_t plen = strlen(PREFIX);
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n > plen && !strncmp(p, PREFIX, plen) && is_failure(p + plen, n - plen)) {
			*len = n;
			return p;
		}
		p = nl ? nl + 1 : NULL;
	}
	*len = 0;
	return NULL;
}

/* Append at most n bytes of s to out (size cap, NUL-terminated). */
static void put(char *out, size_t cap, size_t *at, const char *s, size_t n)
{
	while (n-- && *s && *at + 1 < cap)
		out[(*at)++] = *s++;
	out[*at] = '\0';
}

/* Expand %0 %1 %2 of `fmt` into out. */
static void expand(const char *fmt, const char *msg, size_t mlen, const char *path,
		   size_t plen, const char *why, size_t wlen, char *out, size_t cap)
{
	size_t at = 0;
	out[0] = '\0';
	for (const char *f = fmt; *f; f++) {
		if (f[0] == '%' && f[1] >= '0' && f[1] <= '2') {
			if (f[1] == '0')
				put(out, cap, &at, msg, mlen);
			else if (f[1] == '1')
				put(out, cap, &at, path, plen);
			else
				put(out, cap, &at, why, wlen);
			f++;
		} else {
			put(out, cap, &at, f, 1);
		}
	}
}

void bwrapmsg_translate(const char *line, size_t len, struct bwrapmsg *out)
{
	memset(out, 0, sizeof *out);
	const size_t plen = strlen(PREFIX);
	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len < plen || strncmp(line, PREFIX, plen))
		return; /* not bwrap's */
	const char *msg = line + plen;
	size_t mlen = len - plen;
	const struct rule *r = NULL;
	for (size_t i = 0; i < sizeof rules / sizeof *rules && !r; i++) {
		size_t n = strlen(rules[i].prefix);
		if (mlen >= n && !strncmp(msg, rules[i].prefix, n))
			r = &rules[i];
	}
	/* the reason is after the last ": " (die_with_error's strerror); the path between the
	 * prefix and it */
	const char *sep = NULL; /* the last ": " */
	for (const char *p = msg; p + 1 < msg + mlen; p++)
		if (p[0] == ':' && p[1] == ' ')
			sep = p;
	const char *why = sep ? sep + 2 : msg + mlen;
	size_t wlen = (size_t)(msg + mlen - why);
	const char *path = msg, *pend = sep ? sep : msg + mlen;
	if (r) {
		path = msg + strlen(r->prefix);
		while (path < pend && *path == ' ')
			path++;
	}
	/* bwrap builds the jail under /newroot: name the path as the jail sees it */
	if (pend - path >= 8 && !strncmp(path, "/newroot", 8) && (path[8] == '/' || path + 8 == pend))
		path += path + 8 == pend ? 7 : 8;
	size_t pl = pend > path ? (size_t)(pend - path) : 0;
	if (!wlen) {
		why = "no reason given";
		wlen = strlen(why);
	}
	if (!r) {
		out->kind = BWM_OTHER;
		expand("bwrap failed while building the jail: %0", msg, mlen, path, pl, why, wlen,
		       out->cause, sizeof out->cause);
		snprintf(out->fix, sizeof out->fix,
			 "`agentjail doctor` shows what works on this host; the line above is "
			 "bwrap's own");
		return;
	}
	out->kind = r->kind;
	expand(r->cause, msg, mlen, path, pl, why, wlen, out->cause, sizeof out->cause);
	expand(r->fix, msg, mlen, path, pl, why, wlen, out->fix, sizeof out->fix);
}

/* a is b, or a directory above b */
static bool at_or_above(const char *a, size_t an, const char *b)
{
	return !strncmp(a, b, an) && (b[an] == '\0' || b[an] == '/');
}

char *bwrapmsg_host_race(const char *text, const char *const *masked, size_t n)
{
	size_t len;
	const char *line = text ? bwrapmsg_find(text, &len) : NULL;
	if (!line)
		return NULL;
	line += strlen(PREFIX);
	len -= strlen(PREFIX);
	static const char *const forms[] = {"Can't bind mount /oldroot/dev/null on ", "Can't mkdir ",
					    "Can't create file at ", NULL};
	const char *p = NULL;
	for (size_t i = 0; forms[i] && !p; i++)
		if (len > strlen(forms[i]) && !strncmp(line, forms[i], strlen(forms[i])))
			p = line + strlen(forms[i]);
	if (!p)
		return NULL;
	if (!strncmp(p, "/newroot/", 9))
		p += 8;
	const char *end = line + len;
	const char *colon = memchr(p, ':', (size_t)(end - p));
	if (!colon || colon == p || p[0] != '/')
		return NULL;
	size_t pn = (size_t)(colon - p);
	for (size_t i = 0; i < n; i++)
		if (at_or_above(p, pn, masked[i]))
			return xstrndup(p, pn);
	return NULL;
}
