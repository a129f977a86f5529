/* strv: a growable NULL-terminated vector of owned strings. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct strv {
	char **v;   /* NULL-terminated when n > 0 or after strv_init */
	size_t n;
	size_t cap;
};

#define STRV_INIT {0}

void strv_push(struct strv *s, const char *str);        /* copies */
void strv_push_take(struct strv *s, char *str);         /* takes ownership */
void strv_pushf(struct strv *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool strv_contains(const struct strv *s, const char *str);
void strv_free(struct strv *s);
static inline void strv_freep(struct strv *s) { strv_free(s); }
/* A strv freed when the variable goes out of scope. */
#define _cleanup_strv_ __attribute__((cleanup(strv_freep)))
void strv_copy(struct strv *dst, const struct strv *src);
/* Append (copies of) a NULL-terminated array such as environ; NULL appends nothing. */
void strv_push_all(struct strv *dst, char *const *v);
/* NULL-terminated view; never NULL */
char **strv_data(struct strv *s);
