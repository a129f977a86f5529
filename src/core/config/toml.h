/* toml: a strict subset of TOML 1.0 for agentjail's configuration files (doc/design.md §8).
 * Pure. Accepted: comments, [tables] and [dotted.tables], bare/quoted and dotted keys, basic
 * strings (with \b \t \n \f \r \" \\ \uXXXX \UXXXXXXXX escapes) and literal strings (single
 * line), decimal integers (optional sign, '_' between digits), booleans, arrays of strings
 * (possibly multi-line, trailing comma allowed, comments inside), and inline tables of string
 * values ({ "db.local" = "127.0.0.1" }). Everything else (floats, dates, multi-line strings,
 * arrays of tables, arrays of other types, mixed arrays, redefined keys or tables) is refused
 * with the file:line:col of the offending character and what was expected — never ignored.
 * Every file it accepts is valid TOML. */
#pragma once
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/err.h"

enum toml_type { TOML_TABLE, TOML_STRING, TOML_INT, TOML_BOOL, TOML_ARRAY };

struct toml_value {
	enum toml_type type;
	int line, col;                /* where the value starts (1-based) */
	char *s;                      /* TOML_STRING: the decoded string (UTF-8, no NUL inside) */
	int64_t i;                    /* TOML_INT */
	bool b;                       /* TOML_BOOL */
	/* TOML_ARRAY: items (all TOML_STRING); TOML_TABLE: keys[k] → items[k], in file order */
	struct toml_value *items;
	char **keys;
	int *key_line, *key_col;      /* TOML_TABLE: where each key was written */
	size_t n;
	bool inline_table;            /* written as { … } */
};

/* Parse text (len bytes; a NUL byte inside is an error) into a root table. On error returns
 * -1 with e->path "FILE:LINE:COL" (file as given; LINE and COL from 1, COL counting bytes) and
 * e->what saying what was found and what was expected ("expected '=' after the key `fs`"). */
int toml_parse(const char *text, size_t len, const char *file, struct toml_value *out,
	       struct err *e) WUR;
void toml_free(struct toml_value *v);

/* The value of key in a table (one level, no dots), or NULL. */
const struct toml_value *toml_get(const struct toml_value *table, const char *key);
const char *toml_type_name(enum toml_type t); /* "table", "string", "integer", … */

/* Fill e for a value of FILE at LINE:COL: e->path "FILE:LINE:COL", e->what the message (the
 * form every configuration error takes). Returns -1. */
int toml_err_at(struct err *e, const char *file, int line, int col, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
int toml_verr_at(struct err *e, const char *file, int line, int col, const char *fmt,
		 va_list ap) __attribute__((format(printf, 5, 0)));
