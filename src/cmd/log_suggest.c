/* `agentjail log [ID] --suggest [--apply [--yes]]`: the allow_domains entries that would allow
 * what a session's proxy denied (core/net/netsuggest.c), printed as configuration lines; with
 * --apply, added to the user's configuration file after asking — never to a project's file
 * (doc/design.md §8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "core/config/config_write.h"
#include "core/config/config_edit.h"
#include "core/net/netsuggest.h"
#include "core/config/toml.h"
#include "core/session/store.h"
#include "util/cleanup.h"
#include "util/xalloc.h"

/* The session's agent (its profile) and rules. 0, or an exit status (said). */
static int session_rules(struct store *st, const char *id, char **agent, struct netrules *r)
{
	struct session s;
	int rc = cmd_session_get(st, id, &s);
	if (rc)
		return rc;
	struct policy pol;
	policy_init(&pol);
	struct err e = {0};
	rc = policy_from_json(s.policy_json ? s.policy_json : "{}", &pol, &e);
	if (rc == 0)
		rc = netrules_build(&pol.allow_domains, &pol.deny_domains, &pol.map_hosts, r, &e);
	if (rc < 0) {
		err_wrap(&e, "log --suggest: session %s: its stored policy", id);
		cmd_print_err(&e);
	}
	*agent = s.profile ? xstrdup(s.profile) : NULL;
	policy_free(&pol);
	session_free(&s);
	return rc < 0 ? 1 : 0;
}

/* The user's file (read at path) with the entries added: *out, or NULL when it has them all.
 * Checked as the configuration reads it, not only as TOML. -1 with e. */
static int edited(const struct strv *add, const char *agent, const char *path,
		  const char *header, char **out, size_t *out_len, size_t *added, struct err *e)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (config_read_file(path, false, &text, &len, e) < 0)
		return -1;
	const char *tpath[2] = {agent ? "agent" : "policy", agent};
	int r = config_add_to_list(text ? text : "", len, path, tpath, agent ? 2 : 1, header,
				   "allow_domains", add, out, out_len, added, e);
	if (r < 0 || !*added)
		return r;
	struct toml_value root;
	struct config c;
	config_init(&c);
	r = toml_parse(*out, *out_len, path, &root, e);
	if (r == 0) {
		r = config_apply(&c, &root, path, CFG_USER, true, NET_OFF, NULL, e);
		toml_free(&root);
	}
	config_free(&c);
	return r;
}

int cmd_allow_edit(const char *agent, const struct strv *add, struct cmd_allow_edit *ed,
		   struct err *e)
{
	memset(ed, 0, sizeof *ed);
	struct config_env env;
	config_env_from_process(&env, NULL, NET_OFF);
	ed->path = config_user_file(&env);
	ed->header = net_suggest_table(agent);
	return edited(add, agent, ed->path, ed->header, &ed->out, &ed->out_len, &ed->added, e);
}

int cmd_allow_write(const struct cmd_allow_edit *ed, struct err *e)
{
	return config_write_file(ed->path, ed->out, ed->out_len, e);
}

void cmd_allow_edit_free(struct cmd_allow_edit *ed)
{
	free(ed->path);
	free(ed->header);
	free(ed->out);
	memset(ed, 0, sizeof *ed);
}

static int apply(const struct net_suggest *sg, const char *agent, bool yes)
{
	struct strv add = STRV_INIT;
	for (size_t i = 0; i < sg->n_add; i++)
		strv_push(&add, sg->add[i].entry);
	struct cmd_allow_edit ed;
	struct err e = {0};
	int rc = cmd_allow_edit(agent, &add, &ed, &e);
	strv_free(&add);
	if (rc < 0) {
		err_wrap(&e, "log --apply");
		cmd_print_err(&e);
		cmd_allow_edit_free(&ed);
		return 1;
	}
	if (!ed.added) {
		printf("%s already has these in %s: nothing to add\n", ed.path, ed.header);
		cmd_allow_edit_free(&ed);
		return 0;
	}
	if (!yes && !cmd_confirm("add %zu entr%s to allow_domains in %s of %s?", ed.added,
				 ed.added == 1 ? "y" : "ies", ed.header, ed.path)) {
		cmd_warn("log --apply: not confirmed; %s is unchanged (--yes adds them without "
			 "asking)", ed.path);
		cmd_allow_edit_free(&ed);
		return 1;
	}
	if (cmd_allow_write(&ed, &e) < 0) {
		err_wrap(&e, "log --apply");
		cmd_print_err(&e);
		cmd_allow_edit_free(&ed);
		return 1;
	}
	printf("added %zu entr%s to allow_domains in %s of %s\n", ed.added,
	       ed.added == 1 ? "y" : "ies", ed.header, ed.path);
	cmd_allow_edit_free(&ed);
	return 0;
}

int cmd_log_suggest(struct store *st, const char *id, bool apply_them, bool yes)
{
	char *agent = NULL;
	struct netrules rules;
	int rc = session_rules(st, id, &agent, &rules);
	if (rc)
		return rc;
	struct net_count *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (store_net_counts(st, id, NET_DENIED, 0, &v, &n, &e) < 0) {
		cmd_print_err(&e);
		free(agent);
		netrules_free(&rules);
		return 1;
	}
	struct net_denial *d = xcalloc(n ? n : 1, sizeof *d);
	long long total = 0;
	for (size_t i = 0; i < n; i++) {
		d[i] = (struct net_denial){v[i].host, v[i].port, v[i].n};
		total += v[i].n;
	}
	struct net_suggest sg;
	net_suggest_build(d, n, &rules, &sg);
	if (!n) {
		printf("# session %s: nothing was denied\n", id);
	} else {
		char *text = net_suggest_render(&sg, agent);
		printf("# session %s: %lld denied; %s would allow %s\n", id, total,
		       sg.n_add ? "these lines in your configuration" : "no allow entry",
		       sg.n_add ? "them (agentjail log ID --suggest --apply adds them)" : "them");
		cmd_put_text(stdout, text); /* hosts the jail named: cleaned again, to be sure */
		free(text);
	}
	fflush(stdout);
	rc = 0;
	if (apply_them && sg.n_add)
		rc = apply(&sg, agent, yes);
	else if (apply_them)
		printf("nothing to add\n");
	net_suggest_free(&sg);
	free(d);
	net_counts_free(v, n);
	netrules_free(&rules);
	free(agent);
	return rc;
}
