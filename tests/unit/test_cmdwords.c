/* cmdwords: the programs a command line names (core/backend/bwrap/cmdwords.h), for the "not in the
 * jail's view" line after a shell's or env's 127 (issue 26, item 5). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/bwrap/cmdwords.h"
#include "util/strbuf.h"
#include "util/strv.h"

/* The words found, joined by "|". */
static char *joined(const struct strv *v)
{
	struct strbuf b = STRBUF_INIT;
	for (size_t i = 0; i < v->n; i++)
		sb_addf(&b, "%s%s", i ? "|" : "", v->v[i]);
	return sb_steal(&b);
}

static void script_is(const char *script, const char *want)
{
	struct strv v = STRV_INIT;
	cmdwords_script(script, &v);
	char *got = joined(&v);
	if (strcmp(got, want) != 0)
		fail_msg("script %s: got '%s', want '%s'", script, got, want);
	free(got);
	strv_free(&v);
}

static void argv_is(const char *want, ...)
{
	struct strv a = STRV_INIT;
	va_list ap;
	va_start(ap, want);
	for (const char *s; (s = va_arg(ap, const char *));)
		strv_push(&a, s);
	va_end(ap);
	struct strv v = STRV_INIT;
	cmdwords_collect(a.v, a.n, &v);
	char *got = joined(&v);
	if (strcmp(got, want) != 0)
		fail_msg("argv %s…: got '%s', want '%s'", a.n ? a.v[0] : "", got, want);
	free(got);
	strv_free(&v);
	strv_free(&a);
}

static void scripts(void **state)
{
	(void)state;
	script_is("/srv/tool", "/srv/tool");
	script_is("  tool --x a b", "tool");
	script_is("echo a; tool | grep x && other || last &", "echo|tool|grep|other|last");
	script_is("a\nb\n\tc", "a|b|c");
	script_is("FOO=1 BAR=2 tool arg", "tool");
	script_is("exec /srv/tool", "/srv/tool");
	script_is("env -i FOO=1 /srv/tool", "/srv/tool");
	script_is("command -v x", "");
	script_is("nohup srvtool >/dev/null 2>&1", "srvtool");
	script_is("> out tool", "tool");
	script_is("2> err tool", "tool");
	script_is("if [ -x /srv/t ]; then /srv/t; else other; fi", "/srv/t|other");
	script_is("! tool", "tool");
	script_is("{ a; b; }", "a|b");
	script_is("(cd x && make)", "cd|make");
	script_is("for i in a b; do tool $i; done", "tool");
	script_is("case $x in a) one;; esac", "one");
	script_is("while read l; do proc; done", "read|proc");
	script_is("x=$(inner arg) outer", "inner|outer");
	script_is("V=$(git describe) make all", "git|make");
	script_is("echo $(inner) after; next", "echo|inner|next");
	script_is("(a) ; b", "a|b");
	script_is("case $x in a) one;; b|c) two;;\n d) three;; esac; after",
		  "one|two|three|after");
	script_is("cat f 2>&1 | grep x &>/dev/null; last", "cat|grep|last");
	script_is("echo `inner` after", "echo|inner");
	script_is("echo $((1+2)); next", "echo|next");
	script_is(". ./env.sh; tool", "tool");
	script_is("# a comment; not a command\ntool", "tool");
	/* quoting: a separator inside quotes starts nothing, a quoted word is not guessed at */
	script_is("echo 'a; fake' \"b; fake2\" c\\;fake3", "echo");
	script_is("\"/srv/my tool\" x; tool2", "tool2");
	script_is("$CMD x; tool", "tool");
	script_is("/srv/*/tool; ~/bin/t; t?", "");
	script_is("'unterminated; tool", "");
	script_is("-x; tool", "tool");
	script_is("", "");
	script_is("a; a; a", "a"); /* each once */
	/* bounded */
	struct strbuf b = STRBUF_INIT;
	for (int i = 0; i < 100; i++)
		sb_addf(&b, "c%d;", i);
	struct strv v = STRV_INIT;
	cmdwords_script(sb_str(&b), &v);
	assert_int_equal(v.n, CMDWORDS_MAX);
	strv_free(&v);
	sb_free(&b);
}

static void argvs(void **state)
{
	(void)state;
	argv_is("/srv/tool", "sh", "-c", "/srv/tool", NULL);
	argv_is("tool", "/bin/bash", "-ec", "tool x", "name", "arg", NULL);
	argv_is("tool", "bash", "--norc", "-o", "pipefail", "-c", "tool", NULL);
	argv_is("tool", "bash", "-lc", "tool", NULL);
	argv_is("tool", "dash", "-e", "-c", "tool", NULL);
	argv_is("", "sh", "script.sh", "arg", NULL);     /* a script file: not read */
	argv_is("", "sh", "+c", "x", NULL);               /* +c is no -c */
	argv_is("", "sh", "-c", NULL);                    /* no script */
	argv_is("/srv/tool", "env", "FOO=1", "/srv/tool", "a", NULL);
	argv_is("/srv/tool", "env", "-i", "-u", "X", "--", "/srv/tool", NULL);
	argv_is("sh|inner", "/usr/bin/env", "sh", "-c", "inner", NULL);
	argv_is("", "env", "-S", "a b", NULL);
	argv_is("", "env", "FOO=1", NULL);
	argv_is("", "ls", "-c", "x", NULL);               /* not a shell */
	argv_is("", NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scripts),
		cmocka_unit_test(argvs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
