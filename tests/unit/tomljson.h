/* A toml tree as compact JSON (keys in file order), for the unit test and tests/helpers/tomldump. */
#pragma once
#include <inttypes.h>
#include <stdio.h>

#include "core/config/toml.h"

static void tomljson_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void tomljson(FILE *f, const struct toml_value *v)
{
	switch (v->type) {
	case TOML_STRING: tomljson_str(f, v->s); return;
	case TOML_INT: fprintf(f, "%" PRId64, v->i); return;
	case TOML_BOOL: fputs(v->b ? "true" : "false", f); return;
	case TOML_ARRAY:
	case TOML_TABLE: break;
	}
	fputc(v->type == TOML_ARRAY ? '[' : '{', f);
	for (size_t i = 0; i < v->n; i++) {
		if (i)
			fputc(',', f);
		if (v->type == TOML_TABLE) {
			tomljson_str(f, v->keys[i]);
			fputc(':', f);
		}
		tomljson(f, &v->items[i]);
	}
	fputc(v->type == TOML_ARRAY ? ']' : '}', f);
}
