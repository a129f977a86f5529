/* bwrapmsg: bwrap's own error lines ("bwrap: …", written while it builds the jail and before
 * the command starts) translated into a cause and a fix (doc/design.md §6). Pure: it reads the
 * text bwrap wrote on the pipe agentjail gave it for stderr, never the command's output (the
 * command's stderr is the user's own again before it starts, core/backend/bwrap/launch.c). The
 * strings matched are bubblewrap's (0.8.0 to 0.11), prefixes only, so a wording that changes after
 * the colon still matches. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

enum bwrapmsg_kind {
	BWM_NONE = 0,  /* not a bwrap line we know: the caller falls back to its generic cause */
	BWM_USERNS,    /* no user namespace: the host's cause and fix come from userns_diag */
	BWM_MOUNT,     /* a mount the jail needs was refused (containers, masked /proc) */
	BWM_SOURCE,    /* a path the jail binds vanished since the jail was planned */
	BWM_DEST,      /* a mount point inside the jail could not be created */
	BWM_EXEC,      /* bwrap could not execute the jail's init */
	BWM_SECCOMP,   /* the kernel refused the seccomp filter */
	BWM_OPTION,    /* this bwrap does not know an option agentjail gives it (too old) */
	BWM_OTHER,     /* another bwrap failure: generic cause, bwrap's words */
};

struct bwrapmsg {
	enum bwrapmsg_kind kind;
	char cause[512]; /* one clause, no trailing period */
	char fix[512];   /* one clause: what to do */
};

/* The first line of `text` (bwrap's stderr, possibly several lines) that starts with "bwrap: "
 * and is a failure (its warnings are skipped), or NULL; *len its length without the newline. */
const char *bwrapmsg_find(const char *text, size_t *len);

/* Whether bwrap's failure (its stderr, text) is the host changing a path the plan masks while
 * bwrap mounted over it: its line says it could not bind /dev/null over, or make, a path of
 * `masked` (the plan's deny_read: the root-only files and the secrets it masks) or a directory
 * above one. The plan had seen that file; a useradd that rewrote /etc/gshadow by rename in that
 * window, or a package removing its root-only file, makes it go or change (bwrap's words: "No
 * such file or directory", "Unable to remount destination", "Read-only file system" when it
 * tries to make it in the read-only /etc: "Can't mkdir", "Can't create file at"). The path (without bwrap's /newroot), or NULL; the
 * caller frees it. */
char *bwrapmsg_host_race(const char *text, const char *const *masked, size_t n);

/* Translate one bwrap line (with or without its "bwrap: " prefix and newline). kind BWM_NONE
 * when `line` is not bwrap's. */
void bwrapmsg_translate(const char *line, size_t len, struct bwrapmsg *out);
