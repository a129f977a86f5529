/* initargs: the command line of the jail's init, `agentjail-init __init [OPTION]... -- CMD…`
 * (doc/design.md §2), defined once: the argv builder writes it with initargs_build and init
 * reads it with initargs_parse, so the two sides cannot disagree on a name. Pure. */
#pragma once
#include <stdbool.h>

#include "util/err.h"
#include "util/strv.h"

#define INIT_VERB "__init"              /* argv[1] of agentjail-init as the jail's init */
#define INIT_OPT_CONTROL "--control"     /* FD: the control channel */
#define INIT_OPT_WRITABLE "--writable"   /* PATH: Landlock allows writes below it */
#define INIT_OPT_DENY_READ "--deny-read" /* PATH: Landlock denies reading it */
#define INIT_OPT_SCOPE "--scope"         /* Landlock scopes abstract sockets and signals */
#define INIT_OPT_RLIMIT_DATA "--rlimit-data"   /* BYTES: RLIMIT_DATA */
#define INIT_OPT_RLIMIT_NPROC "--rlimit-nproc" /* N: RLIMIT_NPROC in the jail's namespace */
/* PATH: a read-only bind of a file git writes by lock and rename (~/.gitconfig): init notes a
 * PATH.lock made beside it (`git config --global` failing with EBUSY) and tells the host */
#define INIT_OPT_NOTE_LOCK "--note-lock"
/* PORT: a published port (--publish, doc/design.md §4 "Dev servers"): init connects to the
 * jail's loopback there when the host asks on the publish channel (ctl.h CTL_PUBLISH), and to
 * no other port */
#define INIT_OPT_PUBLISH "--publish"
#define INIT_OPT_CAPTURE "--capture"     /* --net allow: the command's connects are captured
					  * (core/confine/capfilter.h; listener sent as CTL_CAPTURE) */

struct init_args {
	int ctl;                         /* control channel, -1 without */
	struct strv writable;            /* Landlock: where writes are allowed */
	struct strv deny_read;           /* Landlock: masked paths that stay unreadable */
	bool scope;                      /* Landlock: scope abstract sockets and signals */
	unsigned long long rlimit_data;  /* without a cgroup scope: RLIMIT_DATA, 0 none */
	unsigned long long rlimit_nproc; /* RLIMIT_NPROC (in the jail's user namespace), 0 none */
	char *note_lock;                 /* INIT_OPT_NOTE_LOCK's PATH, or NULL */
	struct strv publish;             /* INIT_OPT_PUBLISH's ports, as decimal text */
	bool capture;                    /* install the capture filter on the command */
	char **cmd;                      /* parsed: the command, pointing into argv */
};

/* Append INIT_VERB, the options of `a` in a fixed order and "--" to out (the command is the
 * caller's to append). */
void initargs_build(const struct init_args *a, struct strv *out);
/* Parse argv (argv[0] the program; INIT_VERB next is skipped). 0, or -1 (an unknown option, a
 * missing value, or no command after "--"). initargs_free either way. */
int initargs_parse(int argc, char **argv, struct init_args *a) WUR;
void initargs_free(struct init_args *a);
