/* caps: what each backend guarantees, as data (backend.h, doc/design.md §2a). The README's table
 * of guarantees is checked against these words (tests/unit/test_backend.c), verify's SKIPs and
 * WARNs and the agent commands' fallback are decided from the flags. Pure. */
#include "core/backend/backend.h"

#include "util/strbuf.h"

static const char *const row_names[BR__N] = {
	[BR_READS] = "reads limited to the jail's allowlist",
	[BR_WRITES] = "writes only to the workspace (+ --rw)",
	[BR_PROTECTED] = "protected paths kept (.git/hooks, .envrc…)",
	[BR_PRIVATE_TMP] = "private /tmp, $HOME",
	[BR_PTRACE] = "no ptrace, no new namespaces",
	[BR_NET_OFF] = "--net off",
	[BR_NET_ALLOW] = "--net allow",
	[BR_UNIX] = "host Unix sockets",
	[BR_PRIVATE_PROC] = "private /proc, PIDs, hostname, IPC",
	[BR_SESSIONS] = "sessions, resume, `verify`",
	[BR_WATCH] = "post-run snapshot, live watch, violations",
	[BR_LIMITS] = "memory/pids limits",
	[BR_OUTLIVE] = "nothing of the run outlives it",
	[BR_AGENTS] = "agent commands (`agentjail claude` …)",
	[BR_AGENT_PROTECT] = "agent's hooks, MCP lists, instruction files",
	[BR_AGENT_COPY] = "private copy of ~/.claude.json, safe keys merged back",
	[BR_AGENT_HIDE] = "IDE tokens (~/.claude/ide) masked",
	[BR_AGENT_PRIVATE] = "agent's own dirs (shell snapshots, downloads) private",
	[BR_AGENT_RESUME] = "resume with the agent's own session id",
	[BR_AUTO] = "`backend = \"auto\"` chooses it",
};

const char *backend_row_name(enum backend_row r)
{
	return r >= 0 && r < BR__N ? row_names[r] : "?";
}

const struct backend_caps backend_caps_bwrap = {
	.column = "bwrap (default)",
	.noun = "jail",
	.private_note = "~ and /tmp are private and discarded",
	.rows = {
		[BR_READS] = "yes (mounts)",
		[BR_WRITES] = "yes",
		[BR_PROTECTED] = "read-only binds",
		[BR_PRIVATE_TMP] = "tmpfs",
		[BR_PTRACE] = "yes",
		[BR_NET_OFF] = "no network namespace",
		[BR_NET_ALLOW] = "proxy in a namespace",
		[BR_UNIX] = "private /run",
		[BR_PRIVATE_PROC] = "yes",
		[BR_SESSIONS] = "yes",
		[BR_WATCH] = "yes",
		[BR_LIMITS] = "yes",
		[BR_OUTLIVE] = "PID namespace",
		[BR_AGENTS] = "yes",
		[BR_AGENT_PROTECT] = "read-only binds",
		[BR_AGENT_COPY] = "yes (bound over the file)",
		[BR_AGENT_HIDE] = "yes",
		[BR_AGENT_PRIVATE] = "the workspace's own",
		[BR_AGENT_RESUME] = "yes",
		[BR_AUTO] = "where its test jail runs",
	},
	.namespaces = true,
	.agents = true,
	.verify = true,
	.rlimits = true,
};

const struct backend_caps backend_caps_landlock = {
	.column = "landlock",
	.noun = "landlock sandbox",
	.private_note = "/tmp is private and discarded, ~ out of reach", /* no namespaces (§4c) */
	.rows = {
		[BR_READS] = "yes (Landlock)",
		[BR_WRITES] = "yes",
		[BR_PROTECTED] = "watched: a change is moved aside at once and the original restored",
		[BR_PRIVATE_TMP] = "a private TMPDIR and $HOME (another path: $HOME points there)",
		[BR_PTRACE] = "yes (seccomp)",
		[BR_NET_OFF] = "seccomp refuses IP sockets",
		[BR_NET_ALLOW] = "proxy on loopback; TCP to its port only (any host on that port)",
		[BR_UNIX] = "socket(AF_UNIX) refused",
		[BR_PRIVATE_PROC] = "**no**: host processes visible",
		[BR_SESSIONS] = "yes (namespace probes SKIP)",
		[BR_WATCH] = "yes",
		[BR_LIMITS] = "in a cgroup scope only (`--dry-run` says)",
		[BR_OUTLIVE] = "every descendant killed, scope or not",
		[BR_AGENTS] = "yes (`--backend landlock`, or auto)",
		[BR_AGENT_PROTECT] = "watched: a change is moved aside at once and the original restored",
		[BR_AGENT_COPY] = "yes (a link in the private $HOME); pi's auth.json: watched instead",
		[BR_AGENT_HIDE] = "**no**: readable (said at the start)",
		[BR_AGENT_PRIVATE] = "inside the config dir the host's, writable during the run, what it wrote there moved aside after it (said); elsewhere the workspace's own",
		[BR_AGENT_RESUME] = "yes",
		[BR_AUTO] = "where bwrap cannot build its jail",
	},
	.agents = true,
	.verify = true,
	.net_by_port = true,
	.fallback = "where namespaces cannot be had, `agentjail run --backend landlock` is a weaker "
		    "sandbox without them (Landlock and seccomp): reads and writes confined to the "
		    "jail's allowlist, no ptrace, no new namespaces, network off or by port; but no "
		    "private /proc, PIDs, hostname or mounts: the command sees the host's other "
		    "processes and can reach those of the same user that Landlock's scoping does not "
		    "cover (doc/design.md §4c)",
	.min_landlock_abi = 3,     /* truncate (llrun.h's LLRUN_MIN_ABI) */
	.min_landlock_abi_net = 4, /* TCP connect and bind by port */
	.auto_note = "no private /proc, PIDs or mounts",
};

/* The service's isolation is the service's (doc/design.md §4b): not in the table. */
const struct backend_caps backend_caps_opensandbox = {
	.column = "opensandbox",
	.noun = "jail",
	.private_note = "~ and /tmp are private and discarded", /* the sandbox's, deleted */
	.agents_instead = "a local jail",
	.agents_why = "its credentials are never sent to a service",
	.verify_why = "the service's isolation is its own",
};

char *backend_caps_table(const struct backend_caps *const *cols, size_t n)
{
	struct strbuf b = STRBUF_INIT;
	sb_add(&b, "| guarantee");
	for (size_t c = 0; c < n; c++)
		sb_addf(&b, " | %s", cols[c]->column);
	sb_add(&b, " |\n|---");
	for (size_t c = 0; c < n; c++)
		sb_add(&b, "|---");
	sb_add(&b, "|\n");
	for (int r = 0; r < BR__N; r++) {
		sb_addf(&b, "| %s", row_names[r]);
		for (size_t c = 0; c < n; c++)
			sb_addf(&b, " | %s", cols[c]->rows[r] ? cols[c]->rows[r] : "");
		sb_add(&b, " |\n");
	}
	return sb_steal(&b);
}
