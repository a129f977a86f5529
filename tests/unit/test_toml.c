/* Tests for core/config/toml: a table of valid documents with the tree each gives (as JSON, keys in
 * file order), a table of invalid ones with the exact line:col of the error and a fragment of its
 * message, and the positions, lookups and type names of the tree. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/config/toml.h"
#include "tomljson.h"

/* The example of doc/design.md's configuration section. */
static const char design_example[] =
	"[policy]                      # defaults for every run\n"
	"fs = \"workspace-write\"        # read-only | workspace-write | danger-full-access\n"
	"net = \"off\"                   # off | on | allow\n"
	"rw = [\"~/scratch\"]            # extra writable paths\n"
	"ro = [\"~/datasets\"]           # extra read-only paths\n"
	"hide = [\"secrets\"]            # hidden inside the view (relative = inside the workspace)\n"
	"devices = [\"/dev/kvm\"]\n"
	"env = [\"AWS_PROFILE\"]         # variable names passed through\n"
	"allow_domains = [\"github.com\", \"*.npmjs.org\"]\n"
	"deny_domains = []\n"
	"hosts = { \"db.local\" = \"127.0.0.1\" }\n"
	"\n"
	"[agent.claude]                # per-agent defaults: the same keys as [policy]\n"
	"net = \"allow\"\n"
	"\n"
	"[profile.myagent]             # a new agent profile, or one extending a built-in\n"
	"command = \"myagent\"\n"
	"skip_permission_flags = [\"--yolo\"]\n"
	"rw = [\"~/.myagent\"]\n"
	"env = [\"MYAGENT_API_KEY\"]\n"
	"allow_domains = [\"api.myagent.dev\"]\n"
	"\n"
	"bwrap = \"/usr/bin/bwrap\"\n"
	"state_dir = \"~/.local/state/agentjail\"\n";

static const struct {
	const char *doc, *json;
} valid[] = {
	{"", "{}"},
	{"# only a comment\n\n   \n\t# another\n", "{}"},
	{"a = \"x\"\nb = 'lit\\n'\nc = -12\nd = true\ne = false\n",
	 "{\"a\":\"x\",\"b\":\"lit\\\\n\",\"c\":-12,\"d\":true,\"e\":false}"},
	{"s = \"\\b\\t\\n\\f\\r\\\"\\\\ \\u00e9 \\U0001F600 \\u001b\"",
	 "{\"s\":\"\\u0008\\u0009\\u000a\\u000c\\u000d\\\"\\\\ é 😀 \\u001b\"}"},
	{"a.b.c = 1\na.b.d = 2\na . \"x.y\" = 3\n", "{\"a\":{\"b\":{\"c\":1,\"d\":2},\"x.y\":3}}"},
	{"[a.b]\nx = 1\n[a]\ny = 2\n", "{\"a\":{\"b\":{\"x\":1},\"y\":2}}"},
	{"a.b.c = 1\n[a.b.d]\ne = 2\n", "{\"a\":{\"b\":{\"c\":1,\"d\":{\"e\":2}}}}"},
	{"[t]\n[u]\n[t.v]\n", "{\"t\":{\"v\":{}},\"u\":{}}"},
	{"[t]\nx.y = 1\nx.z = 2\n[t.x.w]\n", "{\"t\":{\"x\":{\"y\":1,\"z\":2,\"w\":{}}}}"},
	{"x = [ ]\ny = [\n  \"a\", # c\n\n  'b',\n]\nz = [\"q\"]\n",
	 "{\"x\":[],\"y\":[\"a\",\"b\"],\"z\":[\"q\"]}"},
	{"h = { \"db.local\" = \"127.0.0.1\", b = 'x' }\ne = {}\n",
	 "{\"h\":{\"db.local\":\"127.0.0.1\",\"b\":\"x\"},\"e\":{}}"},
	{"a = +0\nb = -0\nc = 1_000\nd = 9223372036854775807\ne = -9223372036854775808\nf = 0\n",
	 "{\"a\":0,\"b\":0,\"c\":1000,\"d\":9223372036854775807,\"e\":-9223372036854775808,\"f\":0}"},
	{"a = 1\r\n[t]\r\nb = 2 # x\r\n", "{\"a\":1,\"t\":{\"b\":2}}"},
	{"  \tk\t=\t\"v\"\t# c\n[ t . u ]  # c\n  z=1", "{\"k\":\"v\",\"t\":{\"u\":{\"z\":1}}}"},
	{"k = \"a\tb é\"\n'quoted key' = \"\"\n\"\" = 'e'\n",
	 "{\"k\":\"a\\u0009b é\",\"quoted key\":\"\",\"\":\"e\"}"},
	{"1234 = \"x\"\n-_ = \"y\"\ntrue = false\n", "{\"1234\":\"x\",\"-_\":\"y\",\"true\":false}"},
	{"# ünïcode\tcomment\na = 'ü' # ü\n", "{\"a\":\"ü\"}"},
	{"a = 'C:\\path\\\"x'", "{\"a\":\"C:\\\\path\\\\\\\"x\"}"},
	{design_example,
	 "{\"policy\":{\"fs\":\"workspace-write\",\"net\":\"off\",\"rw\":[\"~/scratch\"],"
	 "\"ro\":[\"~/datasets\"],\"hide\":[\"secrets\"],\"devices\":[\"/dev/kvm\"],"
	 "\"env\":[\"AWS_PROFILE\"],\"allow_domains\":[\"github.com\",\"*.npmjs.org\"],"
	 "\"deny_domains\":[],\"hosts\":{\"db.local\":\"127.0.0.1\"}},"
	 "\"agent\":{\"claude\":{\"net\":\"allow\"}},"
	 "\"profile\":{\"myagent\":{\"command\":\"myagent\",\"skip_permission_flags\":[\"--yolo\"],"
	 "\"rw\":[\"~/.myagent\"],\"env\":[\"MYAGENT_API_KEY\"],"
	 "\"allow_domains\":[\"api.myagent.dev\"],\"bwrap\":\"/usr/bin/bwrap\","
	 "\"state_dir\":\"~/.local/state/agentjail\"}}}"},
};

static const struct {
	const char *doc;
	size_t len; /* 0: strlen */
	const char *where, *what;
} invalid[] = {
	{"a = 1.5\n", 0, "1:5", "floats are not supported: write an integer or a string"},
	{"a = 1e3", 0, "1:5", "floats are not supported"},
	{"a = -nan", 0, "1:5", "floats are not supported"},
	{"a = inf", 0, "1:5", "floats are not supported"},
	{"a = 1979-05-27", 0, "1:5", "dates and times are not supported"},
	{"a = 07:32:00", 0, "1:5", "dates and times are not supported"},
	{"a = 0x10", 0, "1:5", "hexadecimal, octal and binary integers are not supported"},
	{"a = 012", 0, "1:5", "leading zeros"},
	{"a = 1__0", 0, "1:6", "`_` in an integer must stand between two digits"},
	{"a = 1_", 0, "1:6", "`_` in an integer"},
	{"a = _1", 0, "1:5", "expected a value after `=`"},
	{"a = 9223372036854775808", 0, "1:5", "integer out of range"},
	{"a = -9223372036854775809", 0, "1:5", "integer out of range"},
	{"a = 99999999999999999999999", 0, "1:5", "integer out of range"},
	{"a =\n", 0, "1:4", "expected a value after `=` (a string, an integer, true, false, […] or "
			    "{…}), found end of line"},
	{"a = ", 0, "1:5", "found end of file"},
	{"a = tru", 0, "1:5", "expected a value after `=`"},
	{"a = truex", 0, "1:9", "expected the end of the line after the value, found `x`"},
	{"a\n= 1", 0, "1:2", "expected `=` after the key `a`, found end of line"},
	{"a b = 1", 0, "1:3", "expected `=` after the key `a`, found `b`"},
	{"a = 1 b = 2", 0, "1:7", "expected the end of the line after the value, found `b`"},
	{"= 1", 0, "1:1", "expected a key"},
	{"a. = 1", 0, "1:4", "expected a key"},
	{"é = 1", 0, "1:1", "expected a key (letters, digits, `_`, `-`, or a quoted string), found a "
			    "non-ASCII character"},
	{"fs = 'a'\nx = 1\nfs = 'b'", 0, "3:1", "key `fs` is defined twice (first at line 1)"},
	{"[t]\na.b = 1\n\"a\".'b' = 2", 0, "3:5", "key `a.b` is defined twice (first at line 2)"},
	{"[policy]\nx = 1\n[policy]\n", 0, "3:1", "table [policy] is defined twice (first by a "
						  "[header] at line 1)"},
	{"[a.b]\n[a.b]", 0, "2:1", "table [a.b] is defined twice"},
	{"a.b.c = 1\n[a.b]", 0, "2:1", "table [a.b] is defined twice (first by dotted keys at line 1)"},
	{"a.b = 1\n[a]\n", 0, "2:1", "table [a] is defined twice (first by dotted keys"},
	{"x = { a = 'b' }\n[x]", 0, "2:1", "table [x] is defined twice (first by an inline table"},
	{"x = { a = 'b' }\n[x.y]", 0, "2:2", "an inline table is closed"},
	{"a = {x = 'y'}\na.z = 'w'", 0, "2:1", "cannot add to `a`, an inline table (line 1): an "
					       "inline table is closed"},
	{"a = 1\na.b = 2", 0, "2:1", "key `a` is already an integer (line 1), not a table"},
	{"a = 'x'\n[a.b]", 0, "2:2", "key `a` is already a string (line 1), not a table"},
	{"[a]\nb = 1\n[a.b]", 0, "3:4", "key `a.b` is already an integer (line 2), not a table"},
	{"[a.b]\n[a]\nb.c = 1", 0, "3:1", "cannot add to table `b` with a dotted key here: it was "
					  "made by a [header] at line 1"},
	{"[a.b.c]\n[a]\nb.d = 1", 0, "3:1", "cannot add to table `b` with a dotted key"},
	{"[a]\nb = 1\n[a]", 0, "3:1", "table [a] is defined twice"},
	{"a = [1]", 0, "1:6", "arrays may hold only strings here, found `1`"},
	{"a = ['x', 2]", 0, "1:11", "arrays may hold only strings here"},
	{"a = [['x']]", 0, "1:6", "arrays may hold only strings here, found `[`"},
	{"a = ['x' 'y']", 0, "1:10", "expected `,` or `]` after an array item, found `'`"},
	{"a = ['x',\n", 0, "2:1", "unterminated array: expected `]`, found end of file"},
	{"a = [,]", 0, "1:6", "arrays may hold only strings here, found `,`"},
	{"a = \"\"\"x\"\"\"", 0, "1:5", "multi-line strings are not supported"},
	{"a = '''x'''", 0, "1:5", "multi-line strings are not supported"},
	{"a = \"abc\n", 0, "1:9", "unterminated string: expected `\"` before end of line"},
	{"a = 'abc", 0, "1:9", "unterminated string: expected `'` before end of file"},
	{"a = \"\\q\"", 0, "1:6", "unknown escape `\\` followed by `q`"},
	{"a = \"\\e\"", 0, "1:6", "unknown escape"},
	{"a = \"\\uD800\"", 0, "1:6", "\\uD800 is a surrogate, not a character"},
	{"a = \"\\UDFFF0000\"", 0, "1:6", "beyond U+10FFFF"},
	{"a = \"\\U0000DC00\"", 0, "1:6", "surrogate"},
	{"a = \"\\u00\"", 0, "1:10", "expected 4 hexadecimal digits after `\\u`, found `\"`"},
	{"a = \"\\U00110000\"", 0, "1:6", "beyond U+10FFFF"},
	{"a = \"\\u0000\"", 0, "1:6", "a NUL character (\\u0000) is not allowed in a string"},
	{"a = { x = 1 }", 0, "1:11", "inline tables may hold only strings here, found `1`"},
	{"a = { x = 'y', }", 0, "1:16", "a trailing comma is not allowed in an inline table"},
	{"a = { x = 'y'\n}", 0, "1:14", "expected `,` or `}` in the inline table (on one line), found "
					"end of line"},
	{"a = { x = 'a', x = 'b' }", 0, "1:16", "key `x` is defined twice (first at column 7)"},
	{"a = { b.c = 'd' }", 0, "1:8", "dotted keys are not supported inside an inline table"},
	{"a = { b 'd' }", 0, "1:9", "expected `=` after the key `b`, found `'`"},
	{"[[a]]", 0, "1:1", "arrays of tables ([[…]]) are not supported"},
	{"[]", 0, "1:2", "expected a key"},
	{"[a", 0, "1:3", "expected `]` after the table name, found end of file"},
	{"[a]x = 1", 0, "1:4", "expected the end of the line after the table header, found `x`"},
	{"[a] # ok\n[b] [c]", 0, "2:5", "after the table header, found `[`"},
	{"k = \"a\x01\"", 0, "1:7", "control character U+0001 is not allowed: only tab and newline"},
	{"a = 1\n# \x7f", 0, "2:3", "control character U+007F"},
	{"a = 'x' # c\x1b[0m", 0, "1:12", "control character U+001B"},
	{"a = 1\rb = 2", 0, "1:6", "a carriage return must be followed by a line feed"},
	{"a = 1\r", 0, "1:6", "carriage return"},
	{"a = '\xff'", 0, "1:6", "invalid UTF-8 (byte 0xff)"},
	{"a = '\xed\xa0\x80'", 0, "1:6", "invalid UTF-8 (byte 0xed)"},
	{"a = '\xc0\xaf'", 0, "1:6", "invalid UTF-8"},
	{"a = '\xf4\x90\x80\x80'", 0, "1:6", "invalid UTF-8"},
	{"a = 'x\xe2\x82'", 0, "1:7", "invalid UTF-8"},
	{"a = 1\n\0", 7, "2:1", "a NUL byte is not allowed"},
	{"\xef\xbb\xbf" "a = 1", 0, "1:1", "expected a key"},
	{"a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a = 1", 0, "1:65",
	 "a key may have at most 32 parts"},
	{"[a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a]\nb = 1\nc.d = 1", 0, "3:1", "tables may nest at most 32 deep: this key reaches 33"},
};

static char *dump(const struct toml_value *v)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	tomljson(f, v);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void valid_documents(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof valid / sizeof *valid; i++) {
		struct toml_value t;
		struct err e = {0};
		if (toml_parse(valid[i].doc, strlen(valid[i].doc), "v.toml", &t, &e) < 0)
			fail_msg("valid[%zu] refused: %s: %s", i, e.path, e.what);
		char *got = dump(&t);
		if (strcmp(got, valid[i].json) != 0)
			fail_msg("valid[%zu]:\n got %s\nwant %s", i, got, valid[i].json);
		free(got);
		toml_free(&t);
	}
}

static void invalid_documents(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof invalid / sizeof *invalid; i++) {
		struct toml_value t;
		struct err e = {0};
		size_t len = invalid[i].len ? invalid[i].len : strlen(invalid[i].doc);
		if (toml_parse(invalid[i].doc, len, "bad.toml", &t, &e) == 0) {
			char *got = dump(&t);
			fail_msg("invalid[%zu] accepted as %s", i, got);
		}
		char want[64];
		snprintf(want, sizeof want, "bad.toml:%s", invalid[i].where);
		if (strcmp(e.path, want) != 0 || !strstr(e.what, invalid[i].what))
			fail_msg("invalid[%zu]:\n got %s: %s\nwant %s: …%s…", i, e.path, e.what, want,
				 invalid[i].what);
		assert_null(strchr(e.what, '\n'));
		assert_null(t.items);
		assert_int_equal(t.n, 0);
	}
}

/* A bare word where a value goes: the error says where, the hint how to quote it (issue 26);
 * no hint when the word does not end where a value would (it would quote the wrong text). */
static const struct {
	const char *doc, *where, *what, *hint;
} bare[] = {
	{"memory = 4G\n", "1:10", "expected an integer, found `4G`", "quote it: \"4G\""},
	{"memory = 512Mi # half\n", "1:10", "expected an integer, found `512Mi`",
	 "quote it: \"512Mi\""},
	{"memory = 1.5G", "1:10", "floats are not supported", "quote it: \"1.5G\""},
	{"net = off", "1:7", "expected a value after `=`", "quote it: \"off\""},
	{"fs = read-only\r\n", "1:6", "expected a value after `=`", "quote it: \"read-only\""},
	{"rw = [~/src]", "1:7", "arrays may hold only strings here, found `~`",
	 "quote it: \"~/src\""},
	{"rw = ['a', ~/b ,]", "1:12", "arrays may hold only strings here", "quote it: \"~/b\""},
	{"a = x\"y\"", "1:5", "expected a value after `=`", ""},
	{"a = [1.5.5]", "1:6", "arrays may hold only strings here, found `1`", "quote it: \"1.5.5\""},
	{"a = 4 G", "1:7", "expected the end of the line after the value, found `G`", ""},
};

static void bare_words(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof bare / sizeof *bare; i++) {
		struct toml_value t;
		struct err e = {0};
		assert_int_equal(toml_parse(bare[i].doc, strlen(bare[i].doc), "c.toml", &t, &e), -1);
		char want[64];
		snprintf(want, sizeof want, "c.toml:%s", bare[i].where);
		if (strcmp(e.path, want) || !strstr(e.what, bare[i].what) || strcmp(e.hint, bare[i].hint))
			fail_msg("bare[%zu]:\n got %s: %s (%s)\nwant %s: …%s… (%s)", i, e.path, e.what,
				 e.hint, want, bare[i].what, bare[i].hint);
	}
}

static void positions(void **state)
{
	(void)state;
	const char *doc = "# c\n[policy]\n  fs = \"ro\"\nenv = [\n  'A',\n]\n";
	struct toml_value t;
	struct err e = {0};
	assert_int_equal(toml_parse(doc, strlen(doc), "p.toml", &t, &e), 0);
	const struct toml_value *pol = toml_get(&t, "policy");
	assert_non_null(pol);
	assert_int_equal(pol->type, TOML_TABLE);
	assert_false(pol->inline_table);
	assert_int_equal(pol->line, 2);
	assert_int_equal(pol->col, 1);
	assert_int_equal(pol->i, 0); /* the parser's bookkeeping is cleared */
	const struct toml_value *fs = toml_get(pol, "fs");
	assert_non_null(fs);
	assert_string_equal(fs->s, "ro");
	assert_int_equal(fs->line, 3);
	assert_int_equal(fs->col, 8);
	assert_int_equal(pol->key_line[0], 3);
	assert_int_equal(pol->key_col[0], 3);
	const struct toml_value *env = toml_get(pol, "env");
	assert_int_equal(env->type, TOML_ARRAY);
	assert_int_equal(env->line, 4);
	assert_int_equal(env->col, 7);
	assert_int_equal(env->items[0].line, 5);
	assert_int_equal(env->items[0].col, 3);
	assert_null(toml_get(pol, "nope"));
	assert_null(toml_get(fs, "x"));
	assert_null(toml_get(&t, "policy.fs")); /* one level, no dots */
	toml_free(&t);
}

static void type_names(void **state)
{
	(void)state;
	assert_string_equal(toml_type_name(TOML_TABLE), "table");
	assert_string_equal(toml_type_name(TOML_STRING), "string");
	assert_string_equal(toml_type_name(TOML_INT), "integer");
	assert_string_equal(toml_type_name(TOML_BOOL), "boolean");
	assert_string_equal(toml_type_name(TOML_ARRAY), "array");
}

/* AJ_TOML_EXPORT=DIR: write the documents of both tables there (valid-N.toml, invalid-N.toml)
 * for the differential test against another parser (tests/sh/90-toml.t), run no test. */
static int export_docs(const char *dir)
{
	char path[4096];
	for (size_t i = 0; i < sizeof valid / sizeof *valid + sizeof invalid / sizeof *invalid; i++) {
		size_t k = i < sizeof valid / sizeof *valid ? i : i - sizeof valid / sizeof *valid;
		bool ok = k == i;
		const char *doc = ok ? valid[k].doc : invalid[k].doc;
		size_t len = ok ? strlen(doc) : invalid[k].len ? invalid[k].len : strlen(doc);
		snprintf(path, sizeof path, "%s/%s-%02zu.toml", dir, ok ? "valid" : "invalid", k);
		FILE *f = fopen(path, "wbe");
		if (!f || fwrite(doc, 1, len, f) != len || fclose(f) != 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

int main(void)
{
	if (getenv("AJ_TOML_EXPORT"))
		return export_docs(getenv("AJ_TOML_EXPORT"));
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(valid_documents),
		cmocka_unit_test(invalid_documents),
		cmocka_unit_test(bare_words),
		cmocka_unit_test(positions),
		cmocka_unit_test(type_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
