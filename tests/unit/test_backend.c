/* The backend interface (core/backend/backend.h, doc/design.md §2a): the README's table of
 * guarantees is the capabilities' data (one source: a cell that differs fails here), the choice
 * of a backend, and what the commands read from the capabilities. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/backend.h"
#include "core/config/config.h"
#include "golden.h"
#include "util/strv.h"
#include "util/xalloc.h"

/* The cells of a Markdown table row "| a | b |": trimmed, in order. */
static void cells(const char *line, struct strv *out)
{
	strv_free(out);
	const char *p = strchr(line, '|');
	while (p && *p == '|') {
		const char *q = strchr(p + 1, '|');
		if (!q)
			break;
		const char *a = p + 1, *b = q;
		while (a < b && *a == ' ')
			a++;
		while (b > a && b[-1] == ' ')
			b--;
		strv_push_take(out, xstrndup(a, (size_t)(b - a)));
		p = q;
	}
}

/* The lines of the table that starts with "| guarantee" in text (NULL-terminated, in place). */
static size_t table_lines(char *text, char **lines, size_t max)
{
	char *start = strstr(text, "\n| guarantee ");
	size_t n = 0;
	for (char *l = start ? start + 1 : NULL; l && *l == '|' && n < max;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		lines[n++] = l;
		l = nl ? nl + 1 : NULL;
	}
	return n;
}

static const struct backend_caps *const all_caps[] = {&backend_caps_bwrap, &backend_caps_landlock,
						      &backend_caps_opensandbox};

static const struct backend_caps *caps_of_column(const char *column)
{
	for (size_t i = 0; i < sizeof all_caps / sizeof *all_caps; i++)
		if (!strcmp(all_caps[i]->column, column))
			return all_caps[i];
	return NULL;
}

/* Check a table (as text) against the data: every column a backend's, every row a guarantee,
 * every cell that backend's words. */
static void check_table(char *text, const char *what)
{
	char *lines[64];
	size_t n = table_lines(text, lines, 64);
	assert_int_equal(n, 2 + BR__N); /* the head, the rule, one line per guarantee */
	struct strv head = STRV_INIT, row = STRV_INIT;
	cells(lines[0], &head);
	assert_true(head.n >= 2);
	assert_string_equal(head.v[0], "guarantee");
	const struct backend_caps *cols[8];
	for (size_t c = 1; c < head.n; c++) {
		cols[c] = caps_of_column(head.v[c]);
		if (!cols[c])
			fail_msg("%s: the column %s is no backend's (core/backend/caps.c)", what,
				 head.v[c]);
	}
	for (int r = 0; r < BR__N; r++) {
		cells(lines[2 + r], &row);
		assert_int_equal(row.n, head.n);
		if (strcmp(row.v[0], backend_row_name(r)))
			fail_msg("%s: row %d is \"%s\", the data says \"%s\"", what, r + 1, row.v[0],
				 backend_row_name(r));
		for (size_t c = 1; c < head.n; c++) {
			const char *want = cols[c]->rows[r] ? cols[c]->rows[r] : "";
			if (strcmp(row.v[c], want))
				fail_msg("%s: \"%s\" for %s is \"%s\"; core/backend/caps.c says \"%s\"",
					 what, row.v[0], head.v[c], row.v[c], want);
		}
	}
	strv_free(&head);
	strv_free(&row);
}

static void readme_table_is_the_data(void **state)
{
	(void)state;
	const char *src = getenv("AJ_SRC");
	if (!src) {
		fprintf(stderr, "# AJ_SRC is not set (make check sets it): the README is not found\n");
		skip();
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/README.md", src);
	char *readme = golden_read_all(path);
	assert_non_null(readme);
	check_table(readme, "README.md");
	free(readme);
}

static void rendered_table_is_the_data(void **state)
{
	(void)state;
	const struct backend_caps *cols[] = {&backend_caps_bwrap, &backend_caps_landlock};
	char *t = backend_caps_table(cols, 2);
	char *text = xasprintf("\n%s", t);
	check_table(text, "backend_caps_table");
	free(text);
	free(t);
}

static void choosing(void **state)
{
	(void)state;
	struct config cfg;
	config_init(&cfg);
	assert_ptr_equal(backend_choose(NULL, NULL), &backend_bwrap);
	assert_ptr_equal(backend_choose("landlock", NULL), &backend_landlock);
	assert_ptr_equal(backend_choose("bwrap", NULL), &backend_bwrap);
	assert_ptr_equal(backend_choose("opensandbox", NULL), &backend_opensandbox);
	cfg.backend.v = xstrdup("landlock");
	assert_ptr_equal(backend_choose(NULL, &cfg), &backend_landlock);
	assert_ptr_equal(backend_choose("local", &cfg), &backend_bwrap); /* the flag first */
	config_free(&cfg);
	for (int id = BACKEND_LOCAL; id <= BACKEND_LANDLOCK; id++)
		assert_int_equal(backend_by_id(id)->id, id);
	/* a session runs where it ran: the row's backend, else its policy's */
	assert_ptr_equal(backend_of_session("opensandbox", BACKEND_LOCAL), &backend_opensandbox);
	assert_ptr_equal(backend_of_session(NULL, BACKEND_LANDLOCK), &backend_landlock);
	assert_ptr_equal(backend_of_session(NULL, BACKEND_LOCAL), &backend_bwrap);
	/* agents run in the bwrap jail unless the chosen backend runs them */
	assert_ptr_equal(backend_for_agents(&backend_landlock), &backend_landlock); /* issue 28 */
	assert_ptr_equal(backend_for_agents(&backend_opensandbox), &backend_bwrap);
	assert_ptr_equal(backend_for_agents(&backend_bwrap), &backend_bwrap);
	/* agentjail (this library's remote backend execs agentjail-remote) runs every backend */
	assert_true(backend_opensandbox.elsewhere);
	assert_true(backend_here(&backend_bwrap) && backend_here(&backend_landlock) &&
		    backend_here(&backend_opensandbox));
}

static void what_the_commands_read(void **state)
{
	(void)state;
	const struct backend *const all[] = {&backend_bwrap, &backend_landlock,
					     &backend_opensandbox};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
		const struct backend *b = all[i];
		const struct backend_caps *c = b->caps;
		assert_non_null(b->run);
		assert_non_null(c->noun);
		assert_non_null(c->private_note);
		/* a local backend (verify's battery runs in it) has a prepared jail's operations */
		assert_true(!c->verify || (b->dry_run && b->launch));
		assert_true(c->verify || c->verify_why);
		/* one that does not run agents says where they run instead, and why */
		assert_true(c->agents || (c->agents_instead && c->agents_why));
	}
	/* the bwrap jail has namespaces and a test run; the way out where it cannot start is one
	 * paragraph, the Landlock backend's */
	assert_true(backend_bwrap.caps->namespaces && backend_bwrap.available);
	assert_false(backend_landlock.caps->namespaces);
	assert_ptr_equal(backend_fallback(), backend_landlock.caps->fallback);
	assert_non_null(strstr(backend_fallback(), "--backend landlock"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(readme_table_is_the_data),
		cmocka_unit_test(rendered_table_is_the_data),
		cmocka_unit_test(choosing),
		cmocka_unit_test(what_the_commands_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
