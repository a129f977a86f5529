/* The names a sandbox sends back (core/backend/remote/osb_names.h, doc/design.md §4b): the one
 * check every name passes (refused whole otherwise, with where it pointed), the protection rule on
 * checked names, the git-dir shape, and the listing: forged lines, names listed twice, modes, caps.
 * */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/remote/osb_names.h"
#include "util/strv.h"

/* The fault of s (as a C string) and where it pointed ("-" for none). */
static enum osb_name_fault check(const char *s, const char *want_aim)
{
	char *aim = NULL;
	enum osb_name_fault f = osb_name_check(s, strlen(s), &aim);
	assert_string_equal(aim ? aim : "-", want_aim);
	free(aim);
	return f;
}

static void names(void **state)
{
	(void)state;
	/* the spelling: after sha256sum's "./", ".//.git/…" leaves "/.git/…" */
	assert_int_equal(check("/.git/hooks/pre-commit", ".git/hooks/pre-commit"), OSB_NAME_ABSOLUTE);
	assert_int_equal(check(".//.git/hooks/pre-commit", ".git/hooks/pre-commit"), OSB_NAME_DOT);
	assert_int_equal(check("a//b", "a/b"), OSB_NAME_EMPTY_DIR);
	assert_int_equal(check("./a", "a"), OSB_NAME_DOT);
	assert_int_equal(check("a/./b", "a/b"), OSB_NAME_DOT);
	assert_int_equal(check("a/../b", "b"), OSB_NAME_DOTDOT);
	assert_int_equal(check("a/..", "-"), OSB_NAME_DOTDOT);
	assert_int_equal(check("..", "-"), OSB_NAME_DOTDOT);
	assert_int_equal(check("../../etc/passwd", "etc/passwd"), OSB_NAME_DOTDOT);
	assert_int_equal(check("/abs", "abs"), OSB_NAME_ABSOLUTE);
	assert_int_equal(check("a/", "a"), OSB_NAME_EMPTY_DIR);
	assert_int_equal(check("a/b/", "a/b"), OSB_NAME_EMPTY_DIR);
	assert_int_equal(check(".", "-"), OSB_NAME_DOT);
	assert_int_equal(check("", "-"), OSB_NAME_EMPTY);
	/* bytes a C string cannot show: NUL inside */
	char *aim = (char *)"x";
	assert_int_equal(osb_name_check("a\0b", 3, &aim), OSB_NAME_NUL);
	assert_null(aim);
	assert_int_equal(check("a\nb", "-"), OSB_NAME_CONTROL);
	assert_int_equal(check("a\rb", "-"), OSB_NAME_CONTROL);
	assert_int_equal(check("x\033[2J", "-"), OSB_NAME_CONTROL);
	assert_int_equal(check("x\177", "-"), OSB_NAME_CONTROL);
	assert_int_equal(check("x\302\233y", "-"), OSB_NAME_CONTROL); /* C1: CSI */
	assert_int_equal(check("caf\303\251/\302\240nbsp", "caf\303\251/\302\240nbsp"), OSB_NAME_OK);
	assert_int_equal(check("sp ace/-dash/back\\slash", "sp ace/-dash/back\\slash"), OSB_NAME_OK);
	assert_int_equal(check("a.txt", "a.txt"), OSB_NAME_OK);
	assert_int_equal(check("...", "..."), OSB_NAME_OK);
	assert_int_equal(check(".hidden/..x/x..", ".hidden/..x/x.."), OSB_NAME_OK);
	/* agentjail's own names at the top */
	assert_int_equal(check(".agentjail-up.tar", ".agentjail-up.tar"), OSB_NAME_RESERVED);
	assert_int_equal(check(".agentjail-sync.42/0", ".agentjail-sync.42/0"), OSB_NAME_RESERVED);
	assert_int_equal(check("sub/.agentjail-sync.42", "sub/.agentjail-sync.42"), OSB_NAME_OK);
	assert_int_equal(check(".agentjail-up.tarx", ".agentjail-up.tarx"), OSB_NAME_OK);
	for (int f = OSB_NAME_OK; f <= OSB_NAME_RESERVED; f++)
		assert_string_not_equal(osb_name_fault_str(f), "?");
}

static void long_names(void **state)
{
	(void)state;
	char buf[OSB_NAME_MAX + 2];
	memset(buf, 'a', sizeof buf);
	/* a component of 255 bytes is fine, 256 is not */
	assert_int_equal(osb_name_check(buf, 255, NULL), OSB_NAME_OK);
	assert_int_equal(osb_name_check(buf, 256, NULL), OSB_NAME_LONG);
	/* 4096 bytes of short components is fine, 4097 is not */
	for (size_t i = 100; i < sizeof buf; i += 101)
		buf[i] = '/';
	assert_int_equal(osb_name_check(buf, OSB_NAME_MAX, NULL), OSB_NAME_OK);
	char *aim = (char *)"x";
	assert_int_equal(osb_name_check(buf, OSB_NAME_MAX + 1, &aim), OSB_NAME_LONG);
	assert_null(aim);
	/* a long refused name is shown cut */
	char *shown = osb_name_shown(buf, OSB_NAME_MAX);
	assert_true(strlen(shown) < 220);
	assert_non_null(strstr(shown, "\"…"));
	free(shown);
}

static void shown(void **state)
{
	(void)state;
	char *s = osb_name_shown("e\033[2J\"q\\\n\t\302\233\303\251", 14);
	assert_string_equal(s, "\"e\\x1b[2J\\\"q\\\\\\n\\t\\xc2\\x9b\\xc3\\xa9\"");
	free(s);
	s = osb_name_shown("a\0b", 3);
	assert_string_equal(s, "\"a\\x00b\"");
	free(s);
}

static void protection(void **state)
{
	(void)state;
	const char *yes[] = {".git", ".git/hooks/pre-commit", ".git/config", "sub/.git/config",
			     "a/b/.git", "a/.git/x/y", ".GIT/hooks/pre-commit", "sub/.Git/HEAD",
			     ".envrc", ".ENVRC", ".gitmodules", ".mcp.json", ".vscode/tasks.json",
			     ".claude/settings.json", ".claude/settings.local.json", ".claude/hooks/x",
			     ".bashrc", ".agentjail.toml", ".pre-commit-config.yaml", ".idea",
			     ".codex/config.toml", "opencode.json", NULL};
	const char *no[] = {".gitignore", ".github/workflows/ci.yml", ".gitx/hooks/pre-commit",
			    "x.git/config", "git/hooks", ".envrc2", "sub/.envrc", ".claude/other.json",
			    ".vscode-x", "a.txt", "src/.gitkeep", NULL};
	for (const char *const *p = yes; *p; p++)
		if (!osb_protected(*p))
			fail_msg("%s should be protected", *p);
	for (const char *const *p = no; *p; p++)
		if (osb_protected(*p))
			fail_msg("%s should not be protected", *p);
}

static void exec_dirs(void **state)
{
	(void)state;
	size_t l[8];
	assert_int_equal(osb_exec_dirs("bare/config", l, 8), 1);
	assert_int_equal(l[0], 4);
	assert_int_equal(osb_exec_dirs("config", l, 8), 1);
	assert_int_equal(l[0], 0);
	assert_int_equal(osb_exec_dirs("a/hooks/b/config", l, 8), 2);
	assert_int_equal(l[0], 1);
	assert_int_equal(l[1], 9);
	assert_int_equal(osb_exec_dirs("x/INFO/attributes", l, 8), 1);
	assert_int_equal(osb_exec_dirs("src/main.c", l, 8), 0);
	assert_int_equal(osb_exec_dirs("configs/x", l, 8), 0);
	assert_int_equal(osb_exec_dirs("a/config/config/config", l, 2), 2); /* bounded */
}

#define H0 "0000000000000000000000000000000000000000000000000000000000000000"
#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define HU "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
#define HA "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static void parse(struct osb_listing *L, const char *const *lines)
{
	struct strv v = STRV_INIT;
	for (; *lines; lines++)
		strv_push(&v, *lines);
	osb_listing_parse(&v, L);
	strv_free(&v);
}

static bool refused(const struct osb_listing *L, const char *part)
{
	for (size_t i = 0; i < L->refused.n; i++)
		if (strstr(L->refused.v[i], part))
			return true;
	return false;
}

static void listing(void **state)
{
	(void)state;
	const char *lines[] = {
		H0 "  ./b.txt",
		H1 "  ./a.txt",
		"M 644 a.txt",
		"M 6777 tool.sh",
		"M 755 tool.sh",
		H0 "  ./tool.sh",
		"M 600 secret",
		H0 "  ./secret",
		H0 "  ./dup",
		H1 "  ./dup",
		H0 "  ./both",
		"L both",
		"L link",
		"L /abs-link",
		HA "  ./.git/hooks/pre-commit",
		HA "  .//.git/hooks/pre-commit",
		"M 755 /.git/hooks/pre-commit",
		HA "  ./sub/../.envrc",
		"\\" HA "  ./new\\nline",
		"not a listing line",
		"",
		H0 "  ./bare/HEAD",
		H0 "  ./bare/config",
		H0 "  ./plain/config",
		H0 "  ./BIG/head",
		H0 "  ./BIG/hooks/x",
		HU "  ./upper-hex",
		NULL,
	};
	struct osb_listing L;
	parse(&L, lines);
	/* the files that may come back, sorted, each once */
	const char *want[] = {".git/hooks/pre-commit", "BIG/head", "BIG/hooks/x", "a.txt",
			      "b.txt", "bare/HEAD", "bare/config", "plain/config", "secret",
			      "tool.sh", NULL};
	size_t n = 0;
	for (; want[n]; n++) {
		assert_true(n < L.n);
		assert_string_equal(L.v[n].rel, want[n]);
	}
	assert_int_equal(L.n, n);
	/* protection: .git, and config/hooks in a directory with a HEAD (any case) */
	assert_true(osb_listing_file(&L, ".git/hooks/pre-commit")->protected_);
	assert_true(osb_listing_file(&L, "bare/config")->protected_);
	assert_false(osb_listing_file(&L, "bare/HEAD")->protected_);
	assert_true(osb_listing_file(&L, "BIG/hooks/x")->protected_);
	assert_false(osb_listing_file(&L, "plain/config")->protected_);
	assert_false(osb_listing_file(&L, "a.txt")->protected_);
	/* modes: the least permissive line wins, masked with 0755; 0644 without one */
	assert_int_equal(osb_listing_file(&L, "tool.sh")->mode, 0755);
	assert_int_equal(osb_listing_file(&L, "a.txt")->mode, 0644);
	assert_int_equal(osb_listing_file(&L, "b.txt")->mode, 0644);
	assert_int_equal(osb_listing_file(&L, "secret")->mode, 0600);
	assert_int_equal(osb_listing_file(&L, "a.txt")->sha[0], 0x11);
	/* listed twice, or as a file and a symlink: refused, remembered */
	assert_null(osb_listing_file(&L, "dup"));
	assert_null(osb_listing_file(&L, "both"));
	assert_true(osb_listing_dup(&L, "dup") && osb_listing_dup(&L, "both"));
	assert_false(osb_listing_dup(&L, "a.txt"));
	assert_true(refused(&L, "\"dup\": listed more than once"));
	assert_true(refused(&L, "\"both\": listed as a file and a symlink"));
	/* symlinks: checked names only */
	assert_true(osb_listing_link(&L, "link") && osb_listing_link(&L, "both"));
	assert_false(osb_listing_link(&L, "/abs-link"));
	assert_true(refused(&L, "\"/abs-link\": not a plain relative path: an absolute name"));
	/* other spellings: refused whole, the protected path they pointed at is a violation */
	assert_true(refused(&L, "\"/.git/hooks/pre-commit\": not a plain relative path"));
	assert_true(refused(&L, "\"sub/../.envrc\": not a plain relative path: a .. component"));
	assert_true(strv_contains(&L.aimed, ".git/hooks/pre-commit"));
	assert_true(strv_contains(&L.aimed, ".envrc"));
	assert_int_equal(L.aimed.n, 2);
	/* escaped names and noise */
	assert_true(refused(&L, "\"new\\\\nline\": a name with a newline or backslash"));
	assert_true(refused(&L, "\"not a listing line\": not a line of the listing"));
	assert_true(refused(&L, "./upper-hex\": not a line of the listing"));
	assert_int_equal(L.refused_more, 0);
	osb_listing_free(&L);
}

static void listing_bounded(void **state)
{
	(void)state;
	struct strv v = STRV_INIT;
	for (int i = 0; i < OSB_REFUSED_SHOWN + 10; i++)
		strv_pushf(&v, H0 "  ./.git/x%d/./y", i);
	struct osb_listing L;
	osb_listing_parse(&v, &L);
	assert_int_equal(L.n, 0);
	assert_int_equal(L.refused.n, OSB_REFUSED_SHOWN);
	assert_int_equal(L.refused_more, 10);
	assert_int_equal(L.aimed.n, OSB_REFUSED_SHOWN); /* .git/xN/y each: bounded too */
	osb_listing_free(&L);
	strv_free(&v);
	/* nothing at all */
	osb_listing_parse(&v, &L);
	assert_int_equal(L.n + L.links.n + L.refused.n, 0);
	assert_null(osb_listing_file(&L, "a"));
	assert_false(osb_listing_link(&L, "a"));
	osb_listing_free(&L);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names),      cmocka_unit_test(long_names),
		cmocka_unit_test(shown),      cmocka_unit_test(protection),
		cmocka_unit_test(exec_dirs),  cmocka_unit_test(listing),
		cmocka_unit_test(listing_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
