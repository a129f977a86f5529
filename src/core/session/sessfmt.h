/* sessfmt: what `agentjail sessions` and `show` print, as plain strings. Pure: no syscalls, the
 * current time and the local UTC offset are parameters (the caller takes tm_gmtoff from
 * localtime_r once). Every function returns a new string (free it), never NULL.
 *
 * Strings from the store come from the user and from the agent (argv, paths, the agent's
 * session id): whatever reaches the terminal through fmt_clean or the table has its control
 * characters (C0, DEL, C1), bidirectional overrides and invalid UTF-8 bytes replaced by '?'. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#include "core/session/store.h"
#include "util/termtext.h"
#include "util/strv.h"

/* "just now" (under 5 s, or less than a minute in the future), "42s ago", "5m ago", "3h ago",
 * "2d ago"; from 30 days on (or further in the future) the local date, "2024-03-05". */
char *sessfmt_ago(long long t_ms, long long now_ms, long utc_offset_s);
/* The local time "2024-03-05 14:03:22". */
char *sessfmt_time(long long t_ms, long utc_offset_s);
/* "0.4s" (under 10 s, tenths, truncated), "42s", "5m07s", "3h04m", "2d03h"; "-" when negative. */
char *sessfmt_duration(long long ms);
/* The policy in a few characters, from policy_to_json: fs·net, fs being ro, rw (or the mode's
 * name if unknown), net being off, on, allow, or allow(N) when the policy lists N allowed domains
 * ("allow_domains"); "full" alone for danger-full-access (no jail, no network rule); "·ptrace"
 * appended when debuggers are allowed, "·home" when the jail had the workspace's persisted home
 * (--home persist). "?" when the text is not a policy. */
char *sessfmt_policy(const char *policy_json);
/* "running", "exited 3", "signalled 9 (KILL)", "killed" or "killed (TERM)" (the signal agentjail
 * received, when known), "lost". */
char *sessfmt_status(enum sess_status status, int exit_status);
/* The command line, each argument shell-quoted when it needs to be, cleaned (fmt_clean). */
char *sessfmt_argv(const struct strv *argv);
/* The length of the shortest prefix that tells each of the ids from all the others (at least
 * min, at most the longest id): the ID column shows that much, and store_get accepts it. */
size_t sessfmt_id_prefix_len(char *const *ids, size_t n, size_t min);

struct sessfmt_opts {
	long long now_ms;
	long utc_offset_s;
	size_t width;       /* the terminal's columns; 0: no limit (the command is never cut) */
	bool workspace;     /* add a WORKSPACE column (when listing several workspaces) */
	const char *home;   /* shown as "~" in workspaces; may be NULL */
};

/* The table of `agentjail sessions`, as given (newest first from store_list), with a header:
 * ID (shortest unique prefix, at least 8), STARTED (ago), TOOK (of the latest attempt; so far
 * while running, "-" when lost), STATUS, POLICY, [NET], PROFILE, [WORKSPACE], COMMAND; with a
 * width, every row fits it: the widest column (the command, usually) is cut first, each down
 * to 4 columns at most, and the ID never. NET (netfmt_cell) only when a session listed has network
 * decisions. */
char *sessfmt_sessions(const struct session *v, size_t n, const struct sessfmt_opts *o);

/* ---- text for a terminal: fmt_width, fmt_clean, fmt_cut (util/termtext.h) ---- */

struct fmt_col {
	const char *title;
	bool right; /* right-aligned (numbers) */
	size_t max; /* cells wider are cut with "…"; 0: no limit */
};

/* A table: a header row of titles, then cells added left to right, row after row. */
struct fmt_table {
	const struct fmt_col *cols;
	size_t ncols;
	struct strv cells; /* row-major, the titles not included */
};

void fmt_table_init(struct fmt_table *t, const struct fmt_col *cols, size_t ncols);
void fmt_table_add(struct fmt_table *t, const char *cell);  /* copies; NULL is "" */
void fmt_table_add_take(struct fmt_table *t, char *cell);   /* takes ownership */
/* Each column as wide as its widest cell (after cutting), two spaces between columns, no
 * trailing spaces, "\n" after each line. A last row with missing cells gets empty ones. */
char *fmt_table_render(const struct fmt_table *t);
void fmt_table_free(struct fmt_table *t);
