/* probes: the integrity battery of `agentjail verify` (issue 4).
 *
 * Two halves in one module:
 *  - the host side plants bait before the jail starts (a canary file in $HOME, listening Unix
 *    sockets under /run and /tmp, an abstract socket, a loopback TCP listener, a sentinel
 *    process, secret-looking variables, an inherited directory fd) and removes it afterwards;
 *  - the jail side (`agentjail __probe`, this same binary mounted as the jail's init) runs the
 *    probe table against that bait. Each probe runs in a child of its own (a crash or a side
 *    effect stays there) and answers PASS / WARN / FAIL / SKIP with a one-line detail.
 *
 * What the probes must know (the policy, where the bait is) travels as `__probe` arguments,
 * built and parsed here so both sides agree (probe_args_build / probe_args_parse).
 *
 * A probe is written so that it can fail: run outside our jail (as root, without seccomp, in the
 * host's namespaces) it reports FAIL; tests/sh/31-verify-weak.t shows that against a weak jail.
 * Probes never send traffic off the machine (egress is tested with a UDP connect(), which only
 * looks up a route) and never change the host: every file they create is removed, a value
 * written to a kernel knob is the value read from it, and a PID 1 that is not a jail's init is
 * not touched. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/plan/policy.h"
#include "util/err.h"
#include "util/strv.h"

enum probe_result { PROBE_PASS, PROBE_WARN, PROBE_FAIL, PROBE_SKIP };

#define PROBE_DETAIL_MAX 240
#define PROBE_TOKEN_LEN 16 /* hex characters */

struct probe_out {
	enum probe_result r;
	char detail[PROBE_DETAIL_MAX];
};

/* What a probe knows: the policy, where the bait is, and (in the jail) its own scratch state. */
struct probe_ctx {
	enum fs_mode fs;
	enum net_mode net;
	bool allow_ptrace;
	char *workspace;
	char *home;
	char *token;             /* PROBE_TOKEN_LEN hex characters naming this run's bait */
	struct strv rw, ro;      /* the policy's extra writable / read-only paths */
	struct strv dev;         /* the policy's extra devices */
	struct strv env_allowed; /* variable names the policy passes (--env) */
	char *canary;            /* the canary file in $HOME, or NULL */
	char *ssh_dir;           /* the host's ~/.ssh, or NULL */
	char *unix_run;          /* listening socket under /run (or $XDG_RUNTIME_DIR), or NULL */
	char *unix_tmp;          /* listening socket under /tmp, or NULL */
	char *abstract;          /* abstract socket name (without the leading NUL), or NULL */
	int tcp_port;            /* listener on the host's 127.0.0.1, or 0 */
	int tls_port;            /* --net allow: the TLS bait's listener on the host's 127.0.0.1,
				  * allowed as TLS for probe_tls_bait_name, or 0 */
	pid_t sentinel;          /* a host process, or 0 */
	int bait_fd;             /* the fd number left open without CLOEXEC on the host, or -1 */
	struct strv env_bait;    /* secret-looking variables set on the host */
	struct strv skip;        /* "ID=REASON": probes whose bait could not be planted */
	struct strv only;        /* run only the probes whose id starts with one of these */

	/* filled in the jail by probe_ctx_prepare */
	char *fds_at_start; /* "fd->target" list of fds >= 3 open when __probe started */
	char *scratch;      /* a private temporary directory, or NULL */
};

typedef void (*probe_fn)(const struct probe_ctx *c, struct probe_out *o);

struct probe_def {
	const char *id; /* "category-prefix.name" */
	const char *category;
	probe_fn fn;
};

extern const struct probe_def probe_table[];
extern const size_t probe_count;

/* The categories, in table order, NULL-terminated. */
extern const char *const probe_categories[];

const char *probe_result_name(enum probe_result r);
int probe_result_parse(const char *s, enum probe_result *out); /* 0 or -1 */

void probe_ctx_init(struct probe_ctx *c);
void probe_ctx_free(struct probe_ctx *c);

/* `__probe` arguments for a context (no "__probe" in front), and back. Parsing also accepts
 * the modes --euid and --host-check (reported in *mode; 0 for the battery). */
enum probe_mode { PROBE_MODE_BATTERY, PROBE_MODE_EUID, PROBE_MODE_HOST_CHECK };
void probe_args_build(const struct probe_ctx *c, struct strv *out);
int probe_args_parse(int argc, char **argv, struct probe_ctx *c, enum probe_mode *mode,
		     struct err *e) WUR;

/* In the jail, before the battery: note the fds open at start, make the scratch directory. */
void probe_ctx_prepare(struct probe_ctx *c);
/* After the battery: remove the scratch directory. */
void probe_ctx_finish(struct probe_ctx *c);

/* Whether a probe is selected by c->only. */
bool probe_selected(const struct probe_ctx *c, const struct probe_def *d);
/* Run one probe in a child of its own (at most timeout_ms); a crash or a hang is a FAIL. A
 * probe named in c->skip is a SKIP with its reason, without running. */
void probe_run(const struct probe_ctx *c, const struct probe_def *d, int timeout_ms,
	       struct probe_out *o);

/* The id of the probe the host completes after the jail is gone. */
#define PROBE_SURVIVORS_ID "pid.no_survivors"
/* Host side, after the jail ended: no process the battery left behind (marked with the
 * token) may still run. Survivors are killed and reported. */
void probe_host_survivors(const char *token, struct probe_out *o);

/* --net allow: the name the TLS bait is reached by (mapped to the host's 127.0.0.1, allowed at
 * its port as TLS: NAME:PORT/tls), and what the bait answers a connection that reached it. */
void probe_tls_bait_name(const char *token, char *out, size_t cap);
#define PROBE_TLS_BAIT_REPLY "agentjail-verify-tls-bait\n"

/* Process names (comm, at most 15 characters) derived from the token. */
void probe_marker_sentinel(const char *token, char out[16]);
void probe_marker_orphan(const char *token, char out[16]);

/* Pure: judge /proc/self/mountinfo text against the policy (tests feed fixtures). */
void probe_check_mounts_rw(const struct probe_ctx *c, const char *mountinfo, struct probe_out *o);
void probe_check_mounts_nosuid(const char *mountinfo, struct probe_out *o);
void probe_check_mounts_nodev(const struct probe_ctx *c, const char *mountinfo,
			      struct probe_out *o);

/* ---- host-side bait ---- */

struct bait {
	char token[PROBE_TOKEN_LEN + 1];
	char canary[4096];
	char unix_run[108];
	char unix_tmp[108];
	char abstract[64];
	int tcp_port;
	int tls_port;   /* --net allow only (the TLS bait), else 0 */
	pid_t sentinel; /* also serves the listeners */
	int fd;         /* the inherited directory fd, -1 */
	bool env_set;
	char skip_run[160]; /* why there is no socket under /run, or "" */
	char skip_tmp[160];
	char skip_canary[160];
};

/* Plant everything (set the variables in our own environment, make the listeners and the
 * sentinel, write the canary), named after `token` (PROBE_TOKEN_LEN hex digits; NULL: a random
 * one). Whatever could not be planted is recorded as a skip with its reason; -1 only when
 * nothing sensible can go on (no randomness, a bad token, fork failed). The inherited fd is
 * opened last: call this after launch_harden_self. */
int bait_plant(struct bait *b, const struct policy *pol, const char *home, const char *token,
	       struct err *e) WUR;
/* The probe context describing the bait and the policy (workspace canonical). */
void bait_fill_ctx(const struct bait *b, const struct policy *pol, const char *home,
		   struct probe_ctx *c);
/* Remove every piece. Async-signal-safe (unlink, kill, waitpid, close), idempotent. */
void bait_remove(struct bait *b);

/* "ID=REASON" for the probes that cannot hold without namespaces (probes_nons.c): SKIP, with
 * the reason, when the battery runs with `--backend landlock`. NULL-terminated. */
extern const char *const probe_skips_landlock[];
/* The same, added when the battery runs as a user other than root. */
extern const char *const probe_skips_landlock_user[];

/* The names of the variables bait_plant sets (NULL-terminated). */
extern const char *const probe_env_bait_names[];
