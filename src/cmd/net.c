/* `agentjail net questions|allow|deny`: --net ask's questions answered from another shell
 * (doc/design.md §4, "Ask instead of fail"), through the running session's control socket
 * (core/jail/ctlsock.h). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "core/jail/ctlsock.h"
#include "core/plan/ctlproto.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/termtext.h"
#include "util/xalloc.h"

static const char usage[] =
	"usage: agentjail net questions [ID | --last] [--json]\n"
	"       agentjail net allow ID|--last HOST[:PORT] [--once | --always]\n"
	"       agentjail net deny ID|--last HOST[:PORT]\n"
	"A session run with --net ask holds each connection the allow-list refuses while it asks\n"
	"you; these answer from another shell.\n"
	"  questions   the open questions of the session (the newest of this workspace by default)\n"
	"  allow       allow HOST[:PORT] for the rest of the session (what waits goes on)\n"
	"    --once    only what waits for it now\n"
	"    --always  also add it to allow_domains in your configuration file\n"
	"  deny        refuse it (what waits, and the rest of the session)\n"
	"HOST[:PORT] as --allow-domain takes it: the question's entry, e.g. evil.example (ports 80\n"
	"and 443 and its lookups) or db.example:5432.\n"
	"example: agentjail net allow 3f2a registry.npmjs.org\n";

/* Ask the session; the reply's lines, or an exit status (said). */
static int call(const char *id, const char *line, struct strv *reply, char **full)
{
	return cmd_session_call("net", "nothing waits for an answer", id, line, NULL, 0, reply,
				full);
}

static int questions(const char *id, bool json)
{
	struct strv reply = STRV_INIT;
	_cleanup_free_ char *full = NULL;
	int rc = call(id, "AJ1 questions", &reply, &full);
	if (rc) {
		strv_free(&reply);
		return rc;
	}
	struct timespec now;
	(void)clock_gettime(CLOCK_REALTIME, &now);
	long long now_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	json_t *a = json_array();
	if (!json && reply.n > 1)
		printf("%-4s %-40s %-8s %s\n", "ID", "ENTRY", "PROTO", "LEFT");
	for (size_t i = 1; i < reply.n; i++) {
		struct net_question q;
		if (ctlproto_question_parse(reply.v[i], strlen(reply.v[i]), &q) < 0)
			continue;
		long long left = (q.deadline_ms - now_ms) / 1000;
		if (json) {
			json_array_append_new(
				a, json_pack("{s:I, s:s, s:s, s:i, s:s, s:I}", "id", (json_int_t)q.id,
					     "entry", q.entry, "host", q.host, "port", (int)q.port,
					     "proto", q.proto, "deadline_ms",
					     (json_int_t)q.deadline_ms));
			continue;
		}
		_cleanup_free_ char *entry = fmt_clean(q.entry);
		printf("%-4llu %-40s %-8s %llds\n", (unsigned long long)q.id, entry,
		       q.proto, left > 0 ? left : 0);
	}
	if (json) {
		char *s = json_dumps(a, JSON_INDENT(2) | JSON_ENSURE_ASCII);
		printf("%s\n", s ? s : "[]");
		free(s);
	} else if (reply.n <= 1) {
		printf("session %s has no open question\n", full);
	}
	json_decref(a);
	strv_free(&reply);
	return 0;
}

static int answer(const char *id, const char *entry, const char *ans)
{
	if (!ctlproto_word_ok(entry)) {
		cmd_warn("net: %s is not a HOST[:PORT]", entry);
		return EXIT_USAGE;
	}
	_cleanup_free_ char *line = xasprintf("AJ1 answer %s %s net", entry, ans);
	struct strv reply = STRV_INIT;
	_cleanup_free_ char *full = NULL;
	int rc = call(id, line, &reply, &full);
	if (rc) {
		strv_free(&reply);
		return rc;
	}
	/* "ok answered N ENTRY" */
	long n;
	const char *rest = "";
	if (ctlproto_reply_head(reply.v[0], &n, &rest) != 1)
		rest = ""; /* call() saw an "ok" */
	unsigned long waiting = 0;
	char what[CTLPROTO_WORD_MAX + 1] = "";
	if (sscanf(rest, "answered %lu %300s", &waiting, what) != 2)
		(void)snprintf(what, sizeof what, "%s", entry);
	_cleanup_free_ char *shown = fmt_clean(what);
	const char *verb = !strcmp(ans, "deny")	    ? "denied for the session"
			   : !strcmp(ans, "once")   ? "allowed once"
			   : !strcmp(ans, "always") ? "allowed, and added to your configuration"
						    : "allowed for the session";
	printf("%s %s of %s (%lu question%s waiting)\n", shown, verb, full, waiting,
	       waiting == 1 ? "" : "s");
	strv_free(&reply);
	return 0;
}

static int bad_args(void)
{
	cmd_warn("net: unexpected arguments");
	fputs(usage, stderr);
	return EXIT_USAGE;
}

int cmd_net(int argc, char **argv)
{
	if (argc < 1 || !strcmp(argv[0], "--help") || !strcmp(argv[0], "-h")) {
		fputs(usage, argc < 1 ? stderr : stdout);
		return argc < 1 ? EXIT_USAGE : 0;
	}
	const char *verb = argv[0];
	const char *pos[2] = {NULL, NULL};
	size_t npos = 0;
	bool last = false, json = false, once = false, always = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--last"))
			last = true;
		else if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--once"))
			once = true;
		else if (!strcmp(argv[i], "--always"))
			always = true;
		else if (argv[i][0] != '-' && npos < 2)
			pos[npos++] = argv[i];
		else
			return bad_args();
	}
	if (!strcmp(verb, "questions") && !once && !always && npos <= (last ? 0u : 1u))
		return questions(pos[0], json);
	bool allow = !strcmp(verb, "allow"), deny = !strcmp(verb, "deny");
	if ((allow || deny) && !json && !(once && always) && !(deny && (once || always)) &&
	    npos == (last ? 1u : 2u))
		return answer(last ? NULL : pos[0], pos[last ? 0 : 1],
			      deny ? "deny" : once ? "once" : always ? "always" : "session");
	return bad_args();
}
