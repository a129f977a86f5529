/* Tests for core/session/evdetail: a file name a jail chose survives the event's JSON exactly,
 * even when it is not UTF-8 (it used to be stored with no detail at all). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "core/session/evdetail.h"

/* set, dump, load, get: what a run records and `quarantine` reads back */
static char *round_trip(const char *key, const char *value, char **dump)
{
	json_t *o = json_object();
	evdetail_set(o, key, value);
	*dump = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	assert_non_null(*dump);
	json_t *back = json_loads(*dump, 0, NULL);
	assert_non_null(back);
	char *got = evdetail_get(back, key);
	json_decref(back);
	return got;
}

static void utf8_kept_as_one_key(void **state)
{
	(void)state;
	char *dump;
	char *got = round_trip("path", "/w/caf\xc3\xa9/.git/config", &dump);
	assert_string_equal(got, "/w/caf\xc3\xa9/.git/config");
	assert_string_equal(dump, "{\"path\":\"/w/caf\xc3\xa9/.git/config\"}");
	free(got);
	free(dump);
}

static void bytes_kept_exactly(void **state)
{
	(void)state;
	static const char *const names[] = {
		"/w/m\xff/.git/config",       /* a lone byte */
		"/w/\xc0\xaf",		      /* overlong '/' */
		"/w/\xed\xa0\x80x",	      /* a surrogate */
		"/w/\xf4\x90\x80\x80",	      /* beyond U+10FFFF */
		"/w/\xe2\x82",		      /* cut short */
		"\x80\x81\x82\xfe\xff/\x1b[2J", /* controls are bytes too */
	};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		char *dump;
		char *got = round_trip("moved_to", names[i], &dump);
		assert_non_null(got);
		assert_string_equal(got, names[i]);
		assert_non_null(strstr(dump, "\"moved_to_hex\""));
		assert_non_null(strstr(dump, "\xef\xbf\xbd")); /* U+FFFD: the readable form shows a loss */
		free(got);
		free(dump);
	}
}

static void null_and_missing(void **state)
{
	(void)state;
	json_t *o = json_object();
	evdetail_set(o, "path", NULL);
	assert_int_equal(json_object_size(o), 0);
	assert_null(evdetail_get(o, "path"));
	assert_null(evdetail_get(NULL, "path"));
	json_decref(o);
}

/* A detail written by an older agentjail (no _hex), or a _hex that is not ours, reads as the
 * plain string: never as bytes it does not say. */
static void hex_not_trusted_blindly(void **state)
{
	(void)state;
	static const char *const bad[] = {"zz", "abc", "", "6100", "00"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		json_t *o = json_pack("{s:s, s:s}", "path", "plain", "path_hex", bad[i]);
		char *got = evdetail_get(o, "path");
		assert_string_equal(got, "plain");
		free(got);
		json_decref(o);
	}
	json_t *o = json_pack("{s:s, s:s}", "path", "x", "path_hex", "2f77");
	char *got = evdetail_get(o, "path");
	assert_string_equal(got, "/w");
	free(got);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utf8_kept_as_one_key),
		cmocka_unit_test(bytes_kept_exactly),
		cmocka_unit_test(null_and_missing),
		cmocka_unit_test(hex_not_trusted_blindly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
