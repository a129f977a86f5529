/* Fuzz target: the control socket's protocol (core/plan/ctlproto.c, doc/design.md §5) and
 * `agentjail exec`'s request to the jail's init (core/plan/execwire.c). The input is what a
 * peer sends: a request line, a question line, a reply's first line, an exec request.
 * Invariants: no read past len; a request that parses has a version >= 1, a verb and at most
 * CTLPROTO_ARGS_MAX arguments, each a word of the protocol and a piece of the line; a question
 * that parses formats back to the same line; a reply head is ok, err or neither, and a list's
 * count is within CTLPROTO_LIST_MAX. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/ctlproto.h"
#include "core/plan/execwire.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *p = fuzz_dup(data, size);
	struct ctl_req r;
	const char *why = NULL;
	int rc = ctlproto_parse(p, size, &r, &why);
	FUZZ_CHECK(rc == 0 || rc == -1);
	if (rc == 0) {
		FUZZ_CHECK(r.version >= 1 && r.verb && ctlproto_word_ok(r.verb));
		FUZZ_CHECK(r.nargs >= 0 && r.nargs <= CTLPROTO_ARGS_MAX);
		size_t total = 2 + strlen("AJ") + strlen(r.verb);
		for (int i = 0; i < r.nargs; i++) {
			FUZZ_CHECK(ctlproto_word_ok(r.args[i]));
			FUZZ_CHECK(memmem(data, size, r.args[i], strlen(r.args[i])) != NULL);
			total += strlen(r.args[i]) + 1;
		}
		FUZZ_CHECK(total <= size);
		FUZZ_CHECK(memcmp(data, "AJ", 2) == 0);
	} else {
		FUZZ_CHECK(why != NULL);
	}
	struct net_question q;
	if (ctlproto_question_parse(p, size, &q) == 0) {
		char back[CTLPROTO_LINE_MAX + 1];
		FUZZ_CHECK(q.id >= 1 && ctlproto_word_ok(q.entry) && ctlproto_word_ok(q.host));
		FUZZ_CHECK(ctlproto_question_format(&q, back, sizeof back) == 0);
		struct net_question q2;
		FUZZ_CHECK(ctlproto_question_parse(back, strlen(back), &q2) == 0);
		FUZZ_CHECK(memcmp(&q, &q2, sizeof q) == 0);
	}
	free(p);
	char *s = fuzz_cstr(data, size);
	long n = -1;
	const char *rest = NULL;
	int h = ctlproto_reply_head(s, &n, &rest);
	FUZZ_CHECK(h == 1 || h == 0 || h == -1);
	if (h >= 0)
		FUZZ_CHECK(rest && n >= 0 && n <= CTLPROTO_LIST_MAX && rest >= s &&
			   rest <= s + strlen(s));
	long pid = -1;
	bool stopping = false;
	if (ctlproto_jail_parse(s, &pid, &stopping) == 0)
		FUZZ_CHECK(pid >= 0 && pid <= (1 << 22));
	free(s);
	/* an exec request: what unpacks packs back to the same bytes */
	if (size <= EXECWIRE_MAX) {
		char *b = fuzz_dup(data, size);
		char *argv[EXECWIRE_ARGS_MAX + 1];
		unsigned flags;
		size_t argc;
		if (execwire_unpack(b, size, &flags, argv, EXECWIRE_ARGS_MAX, &argc) == 0) {
			FUZZ_CHECK(argc <= EXECWIRE_ARGS_MAX && argv[argc] == NULL);
			char *again = malloc(size + 1);
			FUZZ_CHECK(again != NULL);
			size_t n2 = execwire_pack(flags, (const char *const *)argv, argc, again,
						  size + 1);
			FUZZ_CHECK(n2 == size && memcmp(again, data, size) == 0);
			free(again);
		}
		free(b);
	}
	return 0;
}
