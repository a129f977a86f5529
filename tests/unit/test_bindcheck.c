/* Mount identity (core/jail/bindcheck.h): the table agentjail sends the jail's init, the
 * comparison init makes over its view, and which binds the final view shows
 * (bw_plan_bind_final). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "core/jail/bindcheck.h"
#include "core/plan/bwrap_argv.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* the jail's view, as init's lstat would see it */
static const struct {
	const char *path;
	int err;
	struct bindcheck_id id;
} view[] = {
	{"/w", 0, {0x801, 100, S_IFDIR}},
	{"/w/docs", 0, {0x801, 200, S_IFDIR}},
	{"/home/u/.gitconfig", 0, {0x802, 7, S_IFREG}},
	{"/srv/secret", -EACCES, {0}},
	{"/gone", -ENOENT, {0}},
};

static int fake_stat(const char *path, struct bindcheck_id *out)
{
	for (size_t i = 0; i < sizeof view / sizeof *view; i++)
		if (!strcmp(view[i].path, path)) {
			*out = view[i].id;
			return view[i].err;
		}
	return -ENOENT;
}

static int verify(const struct strbuf *b, struct err *e)
{
	return bindcheck_verify(b->s, b->len, fake_stat, e);
}

static void add(struct strbuf *b, unsigned long long dev, unsigned long long ino, unsigned type,
		const char *path)
{
	struct bindcheck_id id = {dev, ino, type};
	bindcheck_add(b, &id, path);
}

static void matches(void **state)
{
	(void)state;
	struct strbuf b = STRBUF_INIT;
	struct err e = {0};
	assert_int_equal(verify(&b, &e), 0); /* nothing bound: nothing to check */
	add(&b, 0x801, 100, S_IFDIR, "/w");
	add(&b, 0x801, 200, S_IFDIR, "/w/docs");
	add(&b, 0x802, 7, S_IFREG, "/home/u/.gitconfig");
	/* out of init's reach is out of the command's too */
	add(&b, 0x803, 1, S_IFDIR, "/srv/secret");
	assert_int_equal(verify(&b, &e), 0);
	sb_free(&b);
}

static void differs(void **state)
{
	(void)state;
	static const struct {
		unsigned long long dev, ino;
		unsigned type;
		const char *path, *want;
	} t[] = {
		{0x801, 201, S_IFDIR, "/w/docs", "/w/docs in the jail's view is a directory (device "
						  "801, inode 200), not the directory agentjail "
						  "bound there (device 801, inode 201)"},
		{0x809, 200, S_IFDIR, "/w/docs", "(device 809, inode 200)"},
		{0x802, 7, S_IFDIR, "/home/u/.gitconfig", "is a file (device 802, inode 7), not the "
							  "directory"},
		{0x801, 5, S_IFREG, "/gone", "/gone in the jail's view is not the file agentjail "
					     "bound there"},
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct strbuf b = STRBUF_INIT;
		add(&b, 0x801, 100, S_IFDIR, "/w");
		add(&b, t[i].dev, t[i].ino, t[i].type, t[i].path);
		struct err e = {0};
		assert_int_equal(verify(&b, &e), -1);
		assert_string_equal(e.path, t[i].path);
		if (!strstr(e.what, t[i].want))
			fail_msg("\"%s\" not in \"%s\"", t[i].want, e.what);
		sb_free(&b);
	}
}

static void malformed(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		size_t len;
	} t[] = {
		{"801 64 4000 /w", 14},		  /* no NUL at the end */
		{"801 64 4000 w\0", 14},	  /* not absolute */
		{"801 64 /w\0", 10},		  /* a field missing */
		{"80x 64 4000 /w\0", 15},	  /* not hex */
		{"-1 64 4000 /w\0", 14},	  /* negative */
		{"801 64 100000000 /w\0", 20},	  /* no file type */
		{"801 ffffffffffffffffff 4000 /w\0", 31}, /* out of range */
	};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
		struct err e = {0};
		if (bindcheck_verify(t[i].text, t[i].len, fake_stat, &e) != -1)
			fail_msg("accepted: %.*s", (int)t[i].len, t[i].text);
		assert_non_null(strstr(e.what, "malformed"));
	}
}

static void op(struct bw_plan *p, const char *src, int n, ...)
{
	p->ops = xrealloc(p->ops, (p->nops + 1) * sizeof *p->ops);
	struct bw_op *o = &p->ops[p->nops++];
	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->src = src ? xstrdup(src) : NULL;
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		strv_push(&o->args, va_arg(ap, const char *));
	va_end(ap);
}

/* What the final view shows: a bind with no later mount on it or above it. */
static void final_binds(void **state)
{
	(void)state;
	struct bw_plan p = {0};
	op(&p, "/w", 3, "--bind-fd", "8", "/w");			/* 0 */
	op(&p, "/w/.git", 3, "--bind-fd", "9", "/w/.git");		/* 1 */
	op(&p, "/w/.git/hooks", 3, "--ro-bind-fd", "10", "/w/.git/hooks"); /* 2 */
	op(&p, NULL, 4, "--perms", "0000", "--tmpfs", "/w/.git/hooks/sub"); /* 3: below: fine */
	op(&p, "/srv/a/b", 3, "--bind-fd", "11", "/srv/a/b");	/* 4: /srv/a later */
	op(&p, "/srv/a", 3, "--ro-bind-fd", "12", "/srv/a");	/* 5 */
	op(&p, "/x/y", 3, "--ro-bind-fd", "13", "/x/y");		/* 6: a mask above later */
	op(&p, NULL, 4, "--perms", "0000", "--tmpfs", "/x");	/* 7 */
	op(&p, NULL, 2, "--remount-ro", "/x");			/* 8 */
	op(&p, NULL, 2, "--remount-ro", "/");			/* 9: no mount */
	static const bool want[] = {true, true, true, false, false, true, false, false, false,
				    false};
	for (size_t i = 0; i < p.nops; i++)
		if (bw_plan_bind_final(&p, i) != want[i])
			fail_msg("op %zu: %d", i, !want[i]);
	bw_plan_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(matches),
		cmocka_unit_test(differs),
		cmocka_unit_test(malformed),
		cmocka_unit_test(final_binds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
