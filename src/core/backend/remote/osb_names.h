/* osb_names: what a sandbox says about its files, judged before anything comes back (doc/design.md
 * §4b). Pure.
 *
 * Everything the sandbox sends is the sandbox's to forge: a hostile command, or a root process
 * there that replaces `find` or `sha256sum`, writes the listing. So one check decides every name
 * that comes back (osb_name_check): a plain relative path — no leading '/', no empty, "." or ".."
 * component, no NUL or control character, not too long, not agentjail's own staging names — or
 * the name is refused whole (never rewritten into something acceptable). The protection rule
 * (osb_protected) and the listing's reading (osb_listing_parse) work only on checked names. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/plan/relname.h"
#include "util/strv.h"

#define OSB_NAME_MAX RELNAME_MAX          /* bytes in a name (PATH_MAX) */
#define OSB_COMPONENT_MAX RELNAME_COMPONENT_MAX /* bytes in one component (NAME_MAX) */
/* agentjail's own names in the workspace (osb_sync): the archive going up and the directory
 * where the changes are staged (".agentjail-sync.PID"); a sandbox cannot send them back. */
#define OSB_UP_NAME ".agentjail-up.tar"
#define OSB_STAGING_PREFIX ".agentjail-sync."

/* plan/relname.h's faults, and one of the sandbox's own */
enum osb_name_fault {
	OSB_NAME_OK = RELNAME_OK,
	OSB_NAME_EMPTY = RELNAME_EMPTY,         /* "" */
	OSB_NAME_ABSOLUTE = RELNAME_ABSOLUTE,   /* "/x" (".//x" in sha256sum's listing) */
	OSB_NAME_EMPTY_DIR = RELNAME_EMPTY_DIR, /* an empty component: "a//b", "a/" */
	OSB_NAME_DOT = RELNAME_DOT,             /* a "." component: "./a", "a/./b" */
	OSB_NAME_DOTDOT = RELNAME_DOTDOT,       /* a ".." component */
	OSB_NAME_NUL = RELNAME_NUL,             /* a NUL byte inside */
	OSB_NAME_CONTROL = RELNAME_CONTROL,     /* a control character: C0, DEL, C1 */
	OSB_NAME_LONG = RELNAME_LONG,           /* longer than OSB_NAME_MAX, or a component longer
						 * than OSB_COMPONENT_MAX */
	OSB_NAME_RESERVED,                      /* OSB_UP_NAME or OSB_STAGING_PREFIX… at the top */
};

/* The n bytes at s as a name that may come back: relname_check's answer, and refused too when
 * it names agentjail's own staging at the top (*aim as relname_check gives it). */
enum osb_name_fault osb_name_check(const char *s, size_t n, char **aim);
/* Why, in words ("an empty component"). */
const char *osb_name_fault_str(enum osb_name_fault f);
/* s (n bytes) for a message: relname_shown. */
char *osb_name_shown(const char *s, size_t n);

/* A checked name that never comes back from a sandbox: a ".git" component anywhere (the
 * workspace's git dir, a nested repository, a gitdir pointer), the protected names of a local
 * jail at the top (bw_protected_names: hooks, rc files, .envrc, agent settings, IDE tasks) and
 * the agents' settings files (.claude/settings.json, .claude/settings.local.json); compared
 * without regard to ASCII case (".GIT" is ".git" on a case-insensitive file system). */
bool osb_protected(const char *rel);

/* relname_exec_dirs: the directories D that would be git dirs to run rel from. */
size_t osb_exec_dirs(const char *rel, size_t *lens, size_t max);

/* The sandbox's listing, one line each (osb_sync runs `find` and `sha256sum` there):
 *   "L REL"        a symlink
 *   "M MODE REL"   a regular file's permission bits (octal)
 *   "HEX  ./REL"   a regular file's SHA-256 (sha256sum; a line starting with '\' is an escaped
 *                  name: a newline or backslash in it)
 * read into the files that may come back, each once and checked. */
struct osb_entry {
	char *rel;             /* checked: osb_name_check is OSB_NAME_OK */
	unsigned char sha[32];
	unsigned mode;         /* its "M" line's bits & 0755 (setuid, setgid, sticky and group or
				* other write never come back); 0644 without one */
	bool protected_;       /* osb_protected, or in a directory D of osb_exec_dirs that has a
				* D/HEAD in the listing */
};

#define OSB_REFUSED_SHOWN 50 /* refused lines described one by one; the rest are counted */

struct osb_listing {
	struct osb_entry *v;  /* regular files, sorted by rel, each once */
	size_t n;
	struct strv links;    /* symlinks (checked names), sorted */
	struct strv dups;     /* checked names refused for being listed twice, sorted */
	struct strv aimed;    /* protected paths that a refused name pointed at (violations), each
			       * once */
	struct strv refused;  /* "SHOWN: why", at most OSB_REFUSED_SHOWN */
	size_t refused_more;  /* refused lines beyond those */
};

/* Read the lines. A name listed twice (two hashes, or a file and a symlink) is refused: a
 * real listing names each file once. Lines that are none of the above are refused as
 * unreadable. */
void osb_listing_parse(const struct strv *lines, struct osb_listing *out);
void osb_listing_free(struct osb_listing *l);
/* The entry of rel, or NULL. */
const struct osb_entry *osb_listing_file(const struct osb_listing *l, const char *rel);
/* Whether rel is a symlink of the listing. */
bool osb_listing_link(const struct osb_listing *l, const char *rel);
/* Whether rel was listed twice (and so refused). */
bool osb_listing_dup(const struct osb_listing *l, const char *rel);
