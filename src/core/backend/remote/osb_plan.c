/* osb_plan: a policy and the [opensandbox] settings as the service's requests (osb_plan.h). */
#include "core/backend/remote/osb_plan.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan/netrules.h"
#include "util/cleanup.h"
#include "util/path.h"
#include "util/xalloc.h"

static int refuse(struct err *e, const char *what, const char *path, const char *why)
{
	err_set(e, 0, path ? path : "", "%s cannot be used with --backend opensandbox", what);
	err_hint(e, "%s", why);
	return -1;
}

static int outside(const struct strv *v, const char *ws, const char *flag, struct err *e)
{
	for (size_t i = 0; i < v->n; i++)
		if (!path_is_under(v->v[i], ws))
			return refuse(e, flag, v->v[i],
				      "the sandbox receives only the workspace; a path outside it "
				      "does not exist there (run it with --backend local)");
	return 0;
}

int osb_policy_check(const struct policy *p, struct err *e)
{
	if (p->fs == FS_DANGER_FULL)
		return refuse(e, "--fs danger-full-access", NULL,
			      "it means no sandbox at all; a remote sandbox cannot give that");
	if (p->fs == FS_REVIEW)
		return refuse(e, "--fs review", NULL,
			      "its change set is an overlay of the local workspace; the remote "
			      "sandbox's changes come back as they are (run it with --backend "
			      "local)");
	if (outside(&p->rw, p->workspace, "--rw", e) < 0 ||
	    outside(&p->ro, p->workspace, "--ro", e) < 0 ||
	    outside(&p->hide, p->workspace, "--hide", e) < 0)
		return -1;
	if (p->dev.n)
		return refuse(e, "--dev", p->dev.v[0],
			      "the service's sandbox has no host devices");
	if (p->hide.n)
		return refuse(e, "--hide", p->hide.v[0],
			      "the workspace is copied up whole; leave the path out with .gitignore");
	if (p->map_hosts.n)
		return refuse(e, "--map-host", p->map_hosts.v[0],
			      "the service resolves names itself; it has no host map");
	if (p->publish.n)
		return refuse(e, "--publish", p->publish.v[0],
			      "the sandbox's ports are the service's; it has no way back to this "
			      "host's 127.0.0.1");
	if (p->ask)
		return refuse(e, "--net ask", NULL,
			      "the service's egress policy is fixed when the sandbox is made; nobody "
			      "is asked");
	if (p->allow_ptrace)
		return refuse(e, "--allow-ptrace", NULL,
			      "what runs in the sandbox is the service's to decide");
	if (p->home == HOME_PERSIST)
		return refuse(e, "--home persist", NULL,
			      "the sandbox's home is the service's and goes with the sandbox; a "
			      "persisted home lives in this host's state directory and only a local "
			      "jail mounts it (--backend local)");
	if (p->agent_rw.n)
		return refuse(e, "an agent's credential paths", p->agent_rw.v[0],
			      "they are never copied to a remote service; run agents with "
			      "--backend local");
	if (p->net == NET_ALLOW) {
		const struct strv *lists[] = {&p->allow_domains, &p->deny_domains};
		for (int l = 0; l < 2; l++)
			for (size_t i = 0; i < lists[l]->n; i++) {
				struct netrule r;
				struct err e2 = {0};
				if (netrule_parse(lists[l]->v[i], &r, &e2) < 0)
					return err_set(e, 0, lists[l]->v[i], "%s", e2.what);
				bool ok = (r.kind == NR_NAME || r.kind == NR_WILDCARD) && !r.port;
				netrule_free(&r);
				if (!ok)
					return refuse(e, l ? "--deny-domain" : "--allow-domain",
						      lists[l]->v[i],
						      "the service's egress rules are domain names "
						      "or *.wildcards, without ports or addresses");
			}
	}
	return 0;
}

bool osb_sync_back(const struct policy *p)
{
	return p->fs != FS_READ_ONLY;
}

static json_t *rule(const char *action, const char *target)
{
	return json_pack("{s:s, s:s}", "action", action, "target", target);
}

char *osb_create_body(const struct osb_settings *s, const struct policy *p, const char *session_id,
		      struct err *e)
{
	if (osb_policy_check(p, e) < 0)
		return NULL;
	json_t *o = json_object();
	json_object_set_new(o, "image", json_pack("{s:s}", "uri", s->image));
	json_t *ep = json_array();
	for (size_t i = 0; i < s->entrypoint.n; i++)
		json_array_append_new(ep, json_string(s->entrypoint.v[i]));
	json_object_set_new(o, "entrypoint", ep);
	/* both required by the spec (doc/design.md §4b): "none" is the longest it allows */
	json_object_set_new(o, "timeout", json_integer(s->timeout ? s->timeout : OSB_TIMEOUT_MAX));
	json_object_set_new(o, "resourceLimits",
			    json_pack("{s:s, s:s}", "cpu", s->cpu ? s->cpu : OSB_DEFAULT_CPU,
				      "memory", s->memory ? s->memory : OSB_DEFAULT_MEMORY));
	json_t *md = json_pack("{s:s}", "agentjail.workspace", path_basename(p->workspace));
	if (session_id)
		json_object_set_new(md, "agentjail.session", json_string(session_id));
	json_object_set_new(o, "metadata", md);
	json_t *np = json_object();
	json_t *eg = json_array();
	if (p->net == NET_ON) {
		json_object_set_new(np, "defaultAction", json_string("allow"));
	} else {
		json_object_set_new(np, "defaultAction", json_string("deny"));
		if (p->net == NET_ALLOW) {
			/* deny rules first: the service takes the first match */
			for (size_t i = 0; i < p->deny_domains.n; i++)
				json_array_append_new(eg, rule("deny", p->deny_domains.v[i]));
			for (size_t i = 0; i < p->allow_domains.n; i++)
				json_array_append_new(eg, rule("allow", p->allow_domains.v[i]));
		}
	}
	json_object_set_new(np, "egress", eg);
	json_object_set_new(o, "networkPolicy", np);
	char *txt = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (!txt)
		err_set(e, ENOMEM, "", "cannot encode the sandbox request");
	return txt;
}

char *osb_timeout_note(const struct osb_settings *s)
{
	if (s->timeout)
		return NULL;
	return xasprintf("timeout = 0 (none): the service's API requires an expiry, so the longest "
			 "it allows is asked, %d s (24 h); the sandbox is deleted when the run ends "
			 "(timeout = %d asks for it without this note)",
			 OSB_TIMEOUT_MAX, OSB_TIMEOUT_MAX);
}

bool osb_id_ok(const char *id)
{
	size_t n = strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
	return n && n <= 128 && !id[n] && strcmp(id, ".") && strcmp(id, "..");
}

char *osb_api_url(const struct osb_settings *s, const char *path)
{
	return xasprintf("%s/v1%s", s->url, path);
}

bool osb_interactive(const struct strv *cmd)
{
	static const char *const repl[] = {"sh", "bash", "dash", "zsh", "fish", "ksh", "python",
					   "python3", "node", "irb", "ghci", "psql", "mysql",
					   "sqlite3", NULL};
	static const char *const tui[] = {"vi", "vim", "nvim", "nano", "emacs", "less", "more",
					  "top", "htop", "tmux", "screen", "ssh", NULL};
	if (!cmd->n)
		return false;
	const char *b = path_basename(cmd->v[0]);
	for (const char *const *n = tui; *n; n++)
		if (!strcmp(b, *n))
			return true;
	for (const char *const *n = repl; *n; n++)
		if (!strcmp(b, *n))
			return cmd->n == 1 || (cmd->n == 2 && !strcmp(cmd->v[1], "-i"));
	return false;
}
