/* jsonmerge: only allowlisted keys of an agent's private config copy come back (pure). */
#include "core/plan/jsonmerge.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

/* ~/.claude.json, from Claude Code 2.1.197 (its defaults and what it writes at startup and at
 * exit; doc/agents.md). Counters, onboarding and tip state, first-start ids, per-project usage
 * figures. Never: mcpServers, projects[*].mcpServers/allowedTools/hasTrustDialogAccepted/
 * enabledMcpjsonServers/hasClaudeMdExternalIncludesApproved, customApiKeyResponses,
 * primaryApiKey, apiKeyHelper, env, diffTool, autoConnectIde, autoInstallIdeExtension,
 * remoteControlAtStartup, bypassPermissionsModeAccepted, oauthAccount, the feature-flag caches
 * (cachedGrowthBookFeatures, cachedDynamicConfigs: claude fetches them again), nor anything not
 * named here. */
static const struct jm_key claude_top[] = {
	{"numStartups", JM_NUMBER},
	{"firstStartTime", JM_STRING},
	{"userID", JM_STRING},
	{"machineID", JM_STRING},
	{"migrationVersion", JM_NUMBER},
	{"opusProMigrationComplete", JM_BOOL},
	{"sonnet1m45MigrationComplete", JM_BOOL},
	{"seenNotifications", JM_OBJECT},
	{"tipsHistory", JM_OBJECT},
	{"memoryUsageCount", JM_NUMBER},
	{"promptQueueUseCount", JM_NUMBER},
	{"btwUseCount", JM_NUMBER},
	{"queuedCommandUpHintCount", JM_NUMBER},
	{"subscriptionNoticeCount", JM_NUMBER},
	{"lspRecommendationIgnoredCount", JM_NUMBER},
	{"hasSeenTasksHint", JM_BOOL},
	{"hasUsedStash", JM_BOOL},
	{"hasUsedBackgroundTask", JM_BOOL},
	{"hasUsedBackslashReturn", JM_BOOL},
	{"hasCompletedOnboarding", JM_BOOL},
	{"hasAvailableSubscription", JM_BOOL},
	{"remoteDialogSeen", JM_BOOL},
	{"lastOnboardingVersion", JM_STRING},
	{"lastReleaseNotesSeen", JM_STRING},
	{"claudeCodeFirstTokenDate", JM_STRING},
	{"changelogLastFetched", JM_NUMBER},
	{"cachedChangelog", JM_STRING},
	{"feedbackSurveyState", JM_OBJECT},
	/* display preferences (/config) */
	{"theme", JM_STRING},
	{"verbose", JM_BOOL},
	{"editorMode", JM_STRING},
	{"autoCompactEnabled", JM_BOOL},
	{"showTurnDuration", JM_BOOL},
	{"showMessageTimestamps", JM_BOOL},
	{"todoFeatureEnabled", JM_BOOL},
	{"showExpandedTodos", JM_BOOL},
	{"terminalProgressBarEnabled", JM_BOOL},
	{NULL, 0},
};

static const struct jm_key claude_project[] = {
	{"lastCost", JM_NUMBER},
	{"lastAPIDuration", JM_NUMBER},
	{"lastAPIDurationWithoutRetries", JM_NUMBER},
	{"lastToolDuration", JM_NUMBER},
	{"lastDuration", JM_NUMBER},
	{"lastLinesAdded", JM_NUMBER},
	{"lastLinesRemoved", JM_NUMBER},
	{"lastTotalInputTokens", JM_NUMBER},
	{"lastTotalOutputTokens", JM_NUMBER},
	{"lastTotalCacheCreationInputTokens", JM_NUMBER},
	{"lastTotalCacheReadInputTokens", JM_NUMBER},
	{"lastTotalWebSearchRequests", JM_NUMBER},
	{"lastFpsAverage", JM_NUMBER},
	{"lastFpsLow1Pct", JM_NUMBER},
	{"lastGracefulShutdown", JM_BOOL},
	{"lastVersionBase", JM_STRING},
	{"lastModelUsage", JM_OBJECT},
	{"lastSessionId", JM_STRING},
	{"lastSessionMetrics", JM_OBJECT},
	{"projectOnboardingSeenCount", JM_NUMBER},
	{"hasCompletedProjectOnboarding", JM_BOOL},
	{"hasClaudeMdExternalIncludesWarningShown", JM_BOOL},
	{"exampleFiles", JM_ARRAY},
	{"exampleFilesGeneratedAt", JM_NUMBER},
	{NULL, 0},
};

const struct jm_rules jm_claude_json = {
	.top = claude_top, .map = "projects", .map_keys = claude_project};

/* pi's ~/.pi/agent/auth.json: one entry per provider, {type: "api_key", key} or {type: "oauth",
 * access, refresh, expires, …} (pi-coding-agent's auth-storage). An API key "!cmd" runs cmd
 * when the host's pi needs the key (verified): refused. Token endpoints (enterpriseUrl) are not
 * merged: they would send the host's refresh token elsewhere. */
static const struct jm_key pi_auth_entry[] = {
	{"type", JM_STRING},     {"key", JM_STRING},	  {"access", JM_STRING},
	{"refresh", JM_STRING},  {"expires", JM_NUMBER}, {"projectId", JM_STRING},
	{"accountId", JM_STRING}, {"email", JM_STRING},	  {NULL, 0},
};

const struct jm_rules jm_pi_auth = {
	.map_keys = pi_auth_entry, .whole_map = true, .refuse_bang = true};

static const struct jm_key *find_key(const struct jm_key *l, const char *name)
{
	for (size_t i = 0; l && l[i].name; i++)
		if (!strcmp(l[i].name, name))
			return &l[i];
	return NULL;
}

static bool type_ok(enum jm_type t, const json_t *v, bool refuse_bang)
{
	if (refuse_bang && json_is_string(v) && json_string_value(v)[0] == '!')
		return false;
	switch (t) {
	case JM_BOOL:
		return json_is_boolean(v);
	case JM_NUMBER:
		return json_is_number(v);
	case JM_STRING:
		return json_is_string(v);
	case JM_OBJECT:
		return json_is_object(v);
	case JM_ARRAY:
		return json_is_array(v);
	case JM_ANY_SCALAR:
		return json_is_boolean(v) || json_is_number(v) || json_is_string(v) ||
		       json_is_null(v);
	}
	return false;
}

static json_t *load(const char *text, size_t n, const char *what_path, const char *which,
		    struct err *e)
{
	if (n > JM_MAX_BYTES) {
		err_set(e, 0, what_path, "%s is %zu bytes, more than the %u merged: nothing merged",
			which, n, JM_MAX_BYTES);
		return NULL;
	}
	json_error_t je;
	json_t *o = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
	if (!o) {
		err_set(e, 0, what_path, "%s is not valid JSON (line %d: %s): nothing merged",
			which, je.line, je.text);
		return NULL;
	}
	if (!json_is_object(o)) {
		json_decref(o);
		err_set(e, 0, what_path, "%s is not a JSON object: nothing merged", which);
		return NULL;
	}
	return o;
}

static bool changed(json_t *base, json_t *jail, const char *k)
{
	json_t *b = base ? json_object_get(base, k) : NULL;
	json_t *j = json_object_get(jail, k);
	if (!b || !j)
		return b != j;
	return !json_equal(b, j);
}

static void drop(struct strv *dropped, const char *map, const char *entry, const char *k)
{
	if (!dropped)
		return;
	if (map)
		strv_pushf(dropped, "%s[%s].%s", map, entry, k);
	else
		strv_push(dropped, k);
}

/* Apply to `host` the allowed keys that changed between base and jail; the rest to dropped.
 * Returns how many keys were applied. */
static int merge_level(const struct jm_key *allowed, bool refuse_bang, json_t *base, json_t *jail,
		       json_t *host, const char *map, const char *entry, const char *skip,
		       struct strv *dropped)
{
	int n = 0;
	const char *k;
	json_t *v;
	json_object_foreach(jail, k, v)
	{
		if ((skip && !strcmp(k, skip)) || !changed(base, jail, k))
			continue;
		const struct jm_key *a = find_key(allowed, k);
		if (!a || !type_ok(a->type, v, refuse_bang)) {
			drop(dropped, map, entry, k);
			continue;
		}
		if (json_object_set(host, k, v) < 0)
			abort();
		n++;
	}
	/* removed in the jail: removed on the host (an allowed key only) */
	json_object_foreach(base, k, v)
	{
		if ((skip && !strcmp(k, skip)) || json_object_get(jail, k))
			continue;
		if (!find_key(allowed, k)) {
			drop(dropped, map, entry, k);
			continue;
		}
		if (json_object_get(host, k)) {
			(void)json_object_del(host, k);
			n++;
		}
	}
	return n;
}

static bool has_bang(json_t *o)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		if (json_is_string(v) && json_string_value(v)[0] == '!')
			return true;
	}
	return false;
}

/* An object of objects (jm: the jail's, bm: as given, hm: the host's now), each entry merged
 * by the map_keys. Entries removed in the jail stay on the host. */
static int merge_entries(const struct jm_rules *r, const char *name, json_t *bm, json_t *jm,
			 json_t *hm, json_t *host, struct strv *dropped)
{
	int n = 0;
	const char *entry;
	json_t *je;
	json_object_foreach(jm, entry, je)
	{
		json_t *be = bm ? json_object_get(bm, entry) : NULL;
		if (be && json_equal(be, je))
			continue;
		if (!json_is_object(je) || (r->refuse_bang && has_bang(je))) {
			/* a command in an entry: none of it (half an entry could break the host's
			 * agent) */
			drop(dropped, name, entry, "*");
			continue;
		}
		if (be && !json_is_object(be))
			be = NULL;
		json_t *he = hm ? json_object_get(hm, entry) : NULL;
		if (he && !json_is_object(he))
			continue; /* the host's own odd value stays as it is */
		json_t *empty = json_object();
		if (!empty)
			abort();
		bool fresh = !he;
		if (fresh)
			he = empty;
		int k = merge_level(r->map_keys, r->refuse_bang, be ? be : empty, je, he, name,
				    entry, NULL, dropped);
		if (k > 0 && fresh) {
			if (!hm) {
				hm = json_object();
				if (!hm || json_object_set_new(host, r->map, hm) < 0)
					abort();
			}
			if (json_object_set(hm, entry, he) < 0)
				abort();
		}
		json_decref(empty);
		n += k;
	}
	return n;
}

static int merge_map(const struct jm_rules *r, json_t *base, json_t *jail, json_t *host,
		     struct strv *dropped)
{
	if (r->whole_map)
		return merge_entries(r, "", base, jail, host, host, dropped);
	json_t *jm = json_object_get(jail, r->map);
	json_t *bm = json_object_get(base, r->map);
	if (!jm || (bm && json_equal(bm, jm)))
		return 0;
	if (!json_is_object(jm)) {
		drop(dropped, NULL, NULL, r->map);
		return 0;
	}
	if (bm && !json_is_object(bm))
		bm = NULL;
	json_t *hm = json_object_get(host, r->map);
	if (hm && !json_is_object(hm))
		return 0; /* the host's own odd value stays as it is */
	return merge_entries(r, r->map, bm, jm, hm, host, dropped);
}

int jsonmerge(const struct jm_rules *r, const char *base, size_t nbase, const char *jail,
	      size_t njail, const char *host, size_t nhost, const char *what_path, char **out,
	      struct strv *dropped, struct err *e)
{
	*out = NULL;
	json_t *b = load(base, nbase, what_path, "the copy given to the jail", e);
	json_t *j = b ? load(jail, njail, what_path, "the jail's copy", e) : NULL;
	json_t *h = j ? load(host, nhost, what_path, "the host file", e) : NULL;
	int rc = -1;
	if (h) {
		int n = r->whole_map ? 0
				     : merge_level(r->top, r->refuse_bang, b, j, h, NULL, NULL,
						   r->map, dropped);
		if (r->map || r->whole_map)
			n += merge_map(r, b, j, h, dropped);
		rc = 0;
		if (n > 0) {
			*out = json_dumps(h, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			if (!*out)
				abort();
			rc = 1;
		}
	}
	json_decref(b);
	json_decref(j);
	json_decref(h);
	return rc;
}
