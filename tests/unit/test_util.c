/* Tests for util/err (err_wrap, ERR_FMT_MAX), util/uuid, util/clock and util/fs's mkdir -p. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/err.h"
#include "util/fs.h"
#include "util/hex.h"
#include "core/plan/jstr.h"
#include "util/uuid.h"
#include "testutil.h"

static void wrap(void **state)
{
	(void)state;
	struct err e = {0};
	(void)err_set(&e, ENOENT, "/x/y", "cannot open %s", "the store");
	err_hint(&e, "create it");
	err_wrap(&e, "session %d", 7);
	err_wrap(&e, "resume");
	assert_string_equal(e.what, "resume: session 7: cannot open the store");
	assert_string_equal(e.path, "/x/y");
	assert_int_equal(e.errnum, ENOENT);
	assert_string_equal(e.hint, "create it");
	err_wrap(NULL, "nothing"); /* no error to wrap: no crash */
	/* a long context is cut to fit, never overflows */
	char big[2000];
	memset(big, 'c', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	err_wrap(&e, "%s", big);
	assert_int_equal(strlen(e.what), sizeof e.what - 1);
}

static void format_size(void **state)
{
	(void)state;
	struct err e = {0};
	e.errnum = ENAMETOOLONG;
	memset(e.what, 'w', sizeof e.what - 1);
	memset(e.path, 'p', sizeof e.path - 1);
	memset(e.hint, 'h', sizeof e.hint - 1);
	char buf[ERR_FMT_MAX];
	err_format(&e, buf, sizeof buf);
	/* whole: it ends with the hint's closing parenthesis */
	assert_int_equal(buf[strlen(buf) - 1], ')');
	assert_non_null(strstr(buf, strerror(ENAMETOOLONG)));
}

/* Said once: no path the message names already, no hint nested in parentheses (issue 16). */
static void format_once(void **state)
{
	(void)state;
	char buf[ERR_FMT_MAX];
	struct err e = {0};
	err_set(&e, 0, "--fs", "option --fs needs a value");
	err_hint(&e, "see `agentjail run --help`");
	err_format(&e, buf, sizeof buf);
	assert_string_equal(buf, "option --fs needs a value (see `agentjail run --help`)");
	err_set(&e, 0, "/", "the workspace cannot be /");
	err_hint(&e, "a jail never binds the whole root (it would expose every host socket)");
	err_format(&e, buf, sizeof buf);
	assert_string_equal(buf, "the workspace cannot be /; a jail never binds the whole root "
				 "(it would expose every host socket)");
	err_set(&e, 0, "", "no command given (usage: agentjail run CMD)");
	err_hint(&e, "see `agentjail run --help`");
	err_format(&e, buf, sizeof buf);
	assert_string_equal(buf, "no command given (usage: agentjail run CMD); see `agentjail run --help`");
	/* a path inside a longer word is still named */
	err_set(&e, ENOENT, "/a", "cannot open /a/b");
	err_format(&e, buf, sizeof buf);
	assert_string_equal(buf, "cannot open /a/b: /a: No such file or directory");
}

static void uuid(void **state)
{
	(void)state;
	char a[UUID_STR_LEN + 1], b[UUID_STR_LEN + 1];
	struct err e = {0};
	assert_int_equal(uuid_v4(a, &e), 0);
	assert_int_equal(uuid_v4(b, &e), 0);
	assert_int_equal(strlen(a), UUID_STR_LEN);
	assert_string_not_equal(a, b);
	for (int i = 0; i < UUID_STR_LEN; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23)
			assert_int_equal(a[i], '-');
		else
			assert_non_null(strchr("0123456789abcdef", a[i]));
	}
	assert_int_equal(a[14], '4');               /* version 4 */
	assert_non_null(strchr("89ab", a[19]));      /* RFC 4122 variant */
	char *c = uuid_v4_new(&e);
	assert_non_null(c);
	assert_int_equal(strlen(c), UUID_STR_LEN);
	free(c);
}

static void clock_monotonic(void **state)
{
	(void)state;
	long long t0 = clock_mono_ms();
	long long t1 = clock_mono_ms();
	assert_true(t0 > 0 && t1 >= t0);
}

/* fs_mkdirs makes what is missing with the mode, leaves what exists, and when it cannot make a
 * path names the component the walk from "/" stops at (it tries the whole path first). */
static void mkdirs(void **state)
{
	(void)state;
	char top[] = "/tmp/aj-mkdirs-XXXXXX";
	assert_non_null(mkdtemp(top));
	char p[256], q[256];
	struct stat st;
	mode_t old = umask(022);
	snprintf(p, sizeof p, "%s/a/b/c", top);
	assert_int_equal(fs_mkdirs(p, 0700, NULL), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(q, sizeof q, "%s/a", top);
	assert_int_equal(stat(q, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	assert_int_equal(fs_mkdirs(p, 0755, NULL), 0); /* exists: left as it is */
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	snprintf(p, sizeof p, "%s/a/b/d/e/", top); /* a trailing slash, two missing */
	assert_int_equal(fs_mkdirs(p, 0700, NULL), 0);
	assert_int_equal(stat(p, &st), 0);
	/* a file in the way: the component below it is the one that fails */
	snprintf(q, sizeof q, "%s/a/f", top);
	FILE *f = fopen(q, "we");
	assert_non_null(f);
	fclose(f);
	snprintf(p, sizeof p, "%s/a/f/g/h", top);
	char *failed = NULL;
	assert_int_equal(fs_mkdirs(p, 0700, &failed), -1);
	assert_int_equal(errno, ENOTDIR);
	snprintf(q, sizeof q, "%s/a/f/g", top);
	assert_string_equal(failed, q);
	free(failed);
	umask(old);
	assert_int_equal(test_rm_tree(top), 0);
}

/* hex both ways, and jstr's two forms round trip (the bytes JSON cannot hold as hex) */
static void hex_and_jstr(void **state)
{
	(void)state;
	char out[9];
	hex_encode("\x01\xab\xff/", 4, out);
	assert_string_equal(out, "01abff2f");
	char *s = hex_decode_str("2f6101");
	assert_string_equal(s, "/a\x01");
	free(s);
	s = hex_decode_str("");
	assert_string_equal(s, "");
	free(s);
	assert_null(hex_decode_str("2f6"));   /* odd */
	assert_null(hex_decode_str("2F61"));  /* not what hex_encode writes */
	assert_null(hex_decode_str("2f0061")); /* a NUL byte */
	assert_null(hex_decode_str(" 2f6"));
	static const char *const cases[] = {"plain", "", "caf\xc3\xa9", "bad\xff\xfename"};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		json_t *j = jstr(cases[i]);
		assert_non_null(j);
		assert_true(json_is_string(j) == (i < 3));
		char *back = jstr_get(j);
		assert_string_equal(back, cases[i]);
		free(back);
		json_decref(j);
	}
	json_t *h = json_pack("{s:s}", "hex", "62ff");
	char *back = jstr_get(h);
	assert_string_equal(back, "b\xff");
	free(back);
	json_decref(h);
	assert_null(jstr_get(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(wrap),
		cmocka_unit_test(format_size),
		cmocka_unit_test(format_once),
		cmocka_unit_test(uuid),
		cmocka_unit_test(clock_monotonic),
		cmocka_unit_test(mkdirs), cmocka_unit_test(hex_and_jstr),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
