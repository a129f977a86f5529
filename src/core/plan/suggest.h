/* suggest: the closest known word to a mistyped one ("did you mean `allow_domains`?"). Pure. */
#pragma once
#include <stddef.h>

/* The candidate (NULL-terminated list) nearest to word by edit distance (insertions, deletions,
 * substitutions and swaps of two adjacent letters, case-insensitive), or NULL when none is
 * close enough to be a likely typo: at most 1 edit for words of up to 4 letters, 2 up to 8,
 * 3 beyond. Ties go to the earlier candidate. A word that is no candidate but begins one (3
 * letters or more past leading dashes: "--allow") gets the first it begins ("--allow-domain")
 * before any nearest by edits. */
const char *closest_word(const char *word, const char *const *candidates);

/* The edit distance itself (optimal string alignment), capped: any distance above max returns
 * max + 1 early. */
size_t edit_distance(const char *a, const char *b, size_t max);
