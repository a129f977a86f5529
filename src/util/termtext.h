/* termtext: text for a terminal. Pure (no syscalls), so the jail's small init links it too.
 *
 * fmt_clean is the one function every string a jail chose goes through before a terminal sees
 * it (doc/design.md §6): a file name in the workspace, a violation's path, a host the proxy
 * refused, an agent's session id, a line from the remote sandbox. Its control characters (C0,
 * DEL, C1: ESC, CSI, OSC, BEL, CR, LF, TAB), the marks that reorder text on screen (bidirectional
 * overrides, embeddings and isolates, LRM/RLM/ALM) and every byte that is not UTF-8 become '?',
 * so such a name can neither move the cursor, set the title, clear the screen nor start a line
 * of its own. cmd_warn and cmd_print_err pass every line they print through it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Columns the string takes: one per code point, two for East Asian wide and fullwidth ones,
 * none for combining marks, one per replaced byte (see fmt_clean). */
size_t fmt_width(const char *s);
/* s with control characters, bidirectional overrides and invalid UTF-8 replaced by '?'. A new
 * string (free it), never NULL; NULL is "". */
char *fmt_clean(const char *s);
/* Whether s holds a control character or a mark that reorders text (what fmt_clean replaces,
 * bytes that are not UTF-8 aside): a name that would not look on screen as it is. */
bool fmt_has_marks(const char *s);
/* s cleaned and cut to at most `width` columns, ending with "…" when it was cut. */
char *fmt_cut(const char *s, size_t width);
/* s cleaned and broken into lines of at most `width` columns, each after `indent` spaces
 * (counted in the width), joined by "\n" (no trailing one): at the last space that fits, or
 * inside a word longer than a line. Nothing is cut. width 0, or not wider than indent: one
 * line. */
char *fmt_wrap(const char *s, size_t width, size_t indent);
