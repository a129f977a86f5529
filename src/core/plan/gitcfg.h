/* gitcfg: git's config syntax, and a judge of a new repository's config (doc/design.md §3b).
 * Pure.
 *
 * A repository created during a run (`git init`, `git clone` in the jail) has a .git/config the
 * host's next git reads, whose keys can make it run a command (core.fsmonitor, core.hooksPath,
 * core.pager, aliases, filter and diff drivers, credential helpers…) or read more config
 * (include.path, includeIf). gitcfg_judge says whether such a file sets only keys known to be
 * harmless (an identity, core settings that run nothing, branches and remotes with plain
 * URLs): then it is kept; anything else, a key it does not know or a file it cannot parse
 * strictly, moves it aside, and the judgement names the key. An allowlist, not a denylist: a
 * key git learns next year is not harmless until someone says so. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Called for each variable of a git config text, in order. section and key are lowercased;
 * section is "" for a variable before any header (git accepts it); subsection is NULL for
 * "[section]", as written for [section "sub"], lowercased for the old [section.sub] form; value
 * is NULL for a key without "=" (git's implicit "true"). A nonzero return stops the walk and is
 * returned by git_config_each. */
typedef int (*git_config_fn)(const char *section, const char *subsection, const char *key,
			     const char *value, void *ctx);

/* Walk a git config text with git's syntax (config.c, git-config(1)): comments (# ;),
 * [section], [section "sub"], values with quotes, escapes (\" \\ \n \t \b), line
 * continuations and trailing comments, CRLF line ends. Returns 0, the callback's nonzero value,
 * or -1 at the first syntax error (where git itself would refuse the file); the variables
 * before it have been delivered. */
int git_config_each(const char *text, git_config_fn fn, void *ctx);

/* The largest config gitcfg_judge reads; git writes a few hundred bytes. */
#define GITCFG_MAX 65536

enum gitcfg_verdict {
	GITCFG_HARMLESS,   /* every key is on the allowlist with a value of its kind: keep it */
	GITCFG_RUNS,       /* a key that makes git run a command (or connect elsewhere) */
	GITCFG_INCLUDES,   /* include.path, includeIf.*.path: more config from elsewhere */
	GITCFG_UNKNOWN,    /* a key (or value) not known to be harmless */
	GITCFG_UNPARSABLE, /* not strictly git config: a control byte, NUL, CR, a BOM, too long,
			    * a syntax error */
};

struct gitcfg_judgement {
	enum gitcfg_verdict verdict;
	char key[96];     /* the first key that is not harmless, "section.sub.key" (the
			   * subsection cleaned: anything but letters, digits, . _ - / is '?'),
			   * or "" */
	size_t others;    /* how many more keys are not harmless */
	const char *what; /* UNPARSABLE: what is wrong; else NULL */
	const char *why;  /* RUNS, UNKNOWN: what the key does ("which runs a command"), or NULL */
};

/* Judge the `len` bytes of a new repository's config (text[len] must be '\0'). */
void gitcfg_judge(const char *text, size_t len, struct gitcfg_judgement *out);

/* The judgement as a clause for a violation line: "it sets core.fsmonitor, which runs a
 * command", "it sets gc.auto (and 2 more keys), which agentjail does not know to be harmless",
 * "it includes another file (include.path)", "it is not plain git config (a control
 * character)". NULL for a harmless one. Caller frees. */
char *gitcfg_explain(const struct gitcfg_judgement *j);
