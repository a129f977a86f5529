/* suggest: edit distance and the nearest candidate for a mistyped key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/plan/suggest.h"

static void distance(void **state)
{
	(void)state;
	assert_int_equal(edit_distance("", "", 3), 0);
	assert_int_equal(edit_distance("abc", "abc", 3), 0);
	assert_int_equal(edit_distance("abc", "abd", 3), 1);
	assert_int_equal(edit_distance("abc", "acb", 3), 1); /* a swap is one edit */
	assert_int_equal(edit_distance("abc", "ab", 3), 1);
	assert_int_equal(edit_distance("ABC", "abc", 3), 0);
	assert_int_equal(edit_distance("kitten", "sitting", 5), 3);
	assert_int_equal(edit_distance("kitten", "sitting", 2), 3); /* capped: max + 1 */
	assert_int_equal(edit_distance("a", "abcdefgh", 2), 3);
}

static void closest(void **state)
{
	(void)state;
	static const char *const keys[] = {"allow_domains", "deny_domains", "rw", "ro", "hide",
					   "env", "net", "fs", NULL};
	assert_string_equal(closest_word("allow_domain", keys), "allow_domains");
	assert_string_equal(closest_word("alow_domains", keys), "allow_domains");
	assert_string_equal(closest_word("deny_domian", keys), "deny_domains");
	assert_string_equal(closest_word("nte", keys), "net");
	assert_string_equal(closest_word("rw", keys), "rw");
	assert_null(closest_word("completely_else", keys));
	assert_null(closest_word("xyz", keys));
	assert_null(closest_word("x", NULL));
	/* the start of a longer word, too far by edits: the first word it begins */
	static const char *const opts[] = {"--allow-domain", "--allow-http", "--deny-domain",
					   "--net", "--env", NULL};
	assert_string_equal(closest_word("--allow", opts), "--allow-domain");
	assert_string_equal(closest_word("--deny", opts), "--deny-domain");
	assert_string_equal(closest_word("allow", keys), "allow_domains");
	assert_null(closest_word("--", opts));  /* too short a start to mean one of them */
	assert_null(closest_word("--a", opts));
	assert_null(closest_word("", keys));
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(distance), cmocka_unit_test(closest)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
