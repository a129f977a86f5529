/* cmdwords: the programs a command line names besides its first word, for the "not in the
 * jail's view" line (doc/design.md §6, denial.h): the command `env` runs, and the first word of
 * each simple command of a `sh -c` / `bash -c` script. A shell that cannot find a command exits
 * 127 after printing its own words, which agentjail never reads; these names are what the host
 * can look up instead.
 *
 * Pure and conservative: a word with quotes, expansions, globs or escapes in it is not guessed
 * at (skipped); quoting is followed only so that a separator inside quotes starts nothing. */
#pragma once
#include <stddef.h>

#include "util/strv.h"

/* The most names collected, and the most script bytes read. */
#define CMDWORDS_MAX 16
#define CMDWORDS_SCRIPT_MAX 65536

/* Append to out the programs argv (argc words) would run beyond argv[0]: for `env [OPT|N=V]…
 * CMD …`, CMD (and what CMD names in turn); for a shell (sh, bash, dash, zsh, ksh, mksh, ash)
 * given -c, the first word of each command of its script, in order, each once. Nothing for
 * anything else. */
void cmdwords_collect(char *const *argv, size_t argc, struct strv *out);

/* The same for a script alone (what `sh -c SCRIPT` runs). */
void cmdwords_script(const char *script, struct strv *out);
