/* path: lexical path handling (no syscalls). */
#pragma once
#include <stdbool.h>

/* Make `p` absolute (relative to `cwd`) and lexically normal: no "//", ".", "..", no trailing
 * slash (except "/"). ".." above "/" stays at "/". Returns a new string. */
char *path_normalize(const char *cwd, const char *p);
/* true when `p` is absolute and lexically normal: path_normalize("/", p) would return it as it
 * is ("/", or components after single slashes, none empty, "." or "..", no slash at the end). */
bool path_is_normal(const char *p);
/* Expand a leading "~" or "~/" with home; other strings are copied. */
char *path_expand_home(const char *home, const char *p);
/* true when `p` equals `root` or lies below it (both normalized). */
bool path_is_under(const char *p, const char *root);
/* true when `p` is a strict ancestor of `q` (both normalized); "/" is an ancestor of all but "/". */
bool path_is_strict_ancestor(const char *p, const char *q);
/* New string a + "/" + b (b relative); handles a == "/". */
char *path_join(const char *a, const char *b);
/* New string: the parent of a normalized absolute path ("/" for "/x" and "/"). */
char *path_dirname(const char *p);
/* Pointer into p: the last component. */
const char *path_basename(const char *p);
/* Relative part of p below root, or NULL if p is not under root; "" when equal. */
const char *path_below(const char *p, const char *root);
