/* bwrap_argv: policy + host facts → bwrap argv (doc/design.md §3). No syscalls here: every question
 * about the host goes to the hostfacts table. */
#include "core/plan/bwrap_argv.h"
#include "core/plan/bindpath.h"
#include "core/plan/initargs.h"
#include "core/plan/publish.h"
#include "core/plan/initpath.h"
#include "core/plan/gitprotect.h"
#include "core/plan/homekeep.h"
#include "core/plan/netrules.h"
#include "core/plan/resolve.h"
#include "core/plan/review.h"
#include "core/plan/toolcache.h"
#include "core/plan/toolmgr.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/xalloc.h"

/* tmpfs sizes: generous for builds (4 GiB /tmp, 1 GiB /var/tmp, /dev/shm and $HOME, 64 MiB
 * /run), scaled down so together they never promise more than --memory (limits.c) */

/* the agents' project files that run code or steer them (doc/agents.md): claude's skills,
 * workflow scripts, routines, launch and scheduled tasks (the project files claude itself
 * keeps its own sandbox from writing), pi's .pi (extensions it loads unasked, packages),
 * gemini's extensions, commands, policies and hooks, kiro's .kiro (hooks, MCP servers),
 * aider's .aider.conf.yml (lint-cmd and test-cmd run after each edit) */
const char *const bw_protected_names[] = {
	".git/hooks", ".git/config", ".gitmodules", ".pre-commit-config.yaml", ".agentjail.toml",
	".envrc", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".mcp.json",
	".vscode", ".idea", ".claude/commands", ".claude/agents", ".claude/hooks",
	".claude/skills", ".claude/workflows", ".claude/routines", ".claude/launch.json",
	".claude/scheduled_tasks.json", ".codex", ".gemini/settings.json", ".gemini/extensions",
	".gemini/commands", ".gemini/policies", ".gemini/hooks", "opencode.json",
	"opencode.jsonc", ".opencode", ".pi", ".kiro", ".aider.conf.yml", NULL};

const char *bw_protected_prefix(const char *rel)
{
	for (const char *const *n = bw_protected_names; *n; n++) {
		size_t l = strlen(*n);
		if (!strncasecmp(rel, *n, l) && (rel[l] == '\0' || rel[l] == '/'))
			return *n;
	}
	return NULL;
}

/* What in a home runs code later, relative to $HOME, each with who runs it (doc/design.md §3b):
 * read-only wherever a writable bind of a host path covers it (the workspace is $HOME or
 * above it, --rw ~/.config, a profile's directory), watched and moved aside when it is
 * missing. Not every program's configuration that can start one: the ones that run without
 * anyone looking at them first. */
const struct bw_home_code bw_home_code[] = {
	{".bashrc", "bash runs it in every interactive shell"},
	{".bash_profile", "bash runs it at login"},
	{".bash_login", "bash runs it at login"},
	{".bash_logout", "bash runs it at logout"},
	{".bash_aliases", "Debian's .bashrc runs it"},
	{".profile", "a login shell runs it"},
	{".zshenv", "zsh runs it in every shell, scripts too"},
	{".zprofile", "zsh runs it at login"},
	{".zshrc", "zsh runs it in every interactive shell"},
	{".zlogin", "zsh runs it at login"},
	{".zlogout", "zsh runs it at logout"},
	{".config/fish", "fish runs config.fish and conf.d/ at every start"},
	{".gitconfig", "git runs the commands it names (core.fsmonitor, aliases, hooksPath)"},
	{".config/git/config", "git runs the commands it names (core.fsmonitor, aliases, "
			       "hooksPath)"},
	{".ssh/authorized_keys", "sshd lets the keys it lists log in"},
	{".ssh/authorized_keys2", "sshd lets the keys it lists log in"},
	{".ssh/rc", "sshd runs it at every login"},
	{".ssh/environment", "sshd sets what it names at login (PermitUserEnvironment)"},
	{".ssh/config", "ssh runs its ProxyCommand, LocalCommand and Match exec"},
	{".ssh/known_hosts", "ssh, and agentjail's filtered ssh agent, trust the host keys it lists"},
	{".local/bin", "it is on PATH: what is there runs in place of the system's commands"},
	{".local/lib", "python imports the .pth files of the user's site-packages at every start"},
	{".npmrc", "npm runs what it names (script-shell, node-options, git)"},
	{".yarnrc", "yarn runs what it names (yarn-path)"},
	{".yarnrc.yml", "yarn runs what it names (yarnPath, plugins)"},
	{".cargo/config.toml", "cargo runs what it names (runners, rustc wrappers)"},
	{".cargo/config", "cargo runs what it names (runners, rustc wrappers)"},
	{".claude.json", "claude starts the MCP servers it lists"},
	{".config/systemd/user", "systemd starts the user services there"},
	{".config/environment.d", "systemd sets the variables there for the user's session"},
	{".config/autostart", "the desktop starts the entries there at login"},
	{".xprofile", "the display manager runs it at login"},
	{".xsessionrc", "the X session runs it at login"},
	{".xinitrc", "startx runs it"},
	{".xsession", "the X session runs it at login"},
	{".gnupg/gpg-agent.conf", "gpg-agent runs the programs it names (pinentry-program)"},
	{".vimrc", "vim runs it at every start"},
	{".config/nvim", "neovim runs init.lua and its plugins at every start"},
	{".emacs", "emacs runs it at every start"},
	{".emacs.d", "emacs runs init.el at every start"},
	{NULL, NULL}};

/* ---- plan construction helpers ---- */

static struct bw_op *op_new(struct bw_plan *p, const char *comment)
{
	if (p->nops == p->capops) {
		p->capops = p->capops ? p->capops * 2 : 64;
		p->ops = xrealloc(p->ops, p->capops * sizeof *p->ops);
	}
	struct bw_op *o = &p->ops[p->nops++];
	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->comment = comment ? xstrdup(comment) : NULL;
	return o;
}

static void op(struct bw_plan *p, const char *comment, int n, ...)
{
	struct bw_op *o = op_new(p, comment);
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		strv_push(&o->args, va_arg(ap, const char *));
	va_end(ap);
}

static void op_fd_bind(struct bw_plan *p, bool rw, const char *src, const char *dest,
		       const char *comment)
{
	struct bw_op *o = op_new(p, comment);
	o->fd = p->next_fd++;
	o->src = xstrdup(src);
	/* --fs review: a bind of a workspace path onto itself shows the overlay's, never the
	 * host's (the rename guards would make the real .git writable) */
	const char *rel = p->ovl.lower && !strcmp(src, dest) ? path_below(src, p->ovl.lower) : NULL;
	if (rel)
		o->ovl_rel = xstrdup(rel);
	strv_push(&o->args, rw ? "--bind-fd" : "--ro-bind-fd");
	strv_pushf(&o->args, "%d", o->fd);
	strv_push(&o->args, dest);
}

/* A read-only file made of `data` at dest (bwrap --ro-bind-data FD DEST), readable by all:
 * bwrap's default for such a file is 0600, which a jail without capabilities cannot read
 * even as its owner's uid 0 in some kernels (seen: `cat /etc/resolv.conf` refused as root). */
static void op_data_bind(struct bw_plan *p, const char *data, const char *dest,
			 const char *comment)
{
	struct bw_op *o = op_new(p, comment);
	o->fd = p->next_fd++;
	o->data = xstrdup(data);
	strv_push(&o->args, "--perms");
	strv_push(&o->args, "0644");
	strv_push(&o->args, "--ro-bind-data");
	strv_pushf(&o->args, "%d", o->fd);
	strv_push(&o->args, dest);
}

static void skip(struct bw_plan *p, const char *path, const char *why)
{
	strv_pushf(&p->skipped, "%s: %s", path, why);
}

/* Mask a host path inside the view: directories become an empty read-only tmpfs, anything else
 * a read-only /dev/null (bwrap mounts it nodev, so it cannot even be opened). */
static void mask(struct bw_plan *p, struct hostfacts *hf, const char *path, const char *why)
{
	enum hf_type t = hf_type(hf, path);
	if (t == HF_MISSING) {
		skip(p, path, "mask: does not exist");
		return;
	}
	if (t == HF_SYMLINK) {
		skip(p, path, "mask: is a symlink (its target is judged where it lies)");
		return;
	}
	if (t == HF_DIR) {
		op(p, why, 4, "--perms", "0000", "--tmpfs", path);
		op(p, "  … and read-only", 2, "--remount-ro", path);
	} else {
		op(p, why, 3, "--ro-bind", "/dev/null", path);
	}
}

/* ---- the sections, in doc/design.md §3 mount order ---- */

static void add_always(struct bw_plan *p, const struct policy *pol)
{
	op(p, "new user, mount, pid, ipc, uts, cgroup and network namespaces", 1,
	   "--unshare-all");
	op(p, "a user namespace even as root, so --disable-userns applies", 1, "--unshare-user");
	if (pol->net == NET_ON)
		op(p, "net on: the host's network (its loopback services too)", 1, "--share-net");
	if (pol->net == NET_ALLOW) {
		/* launch starts bwrap inside the namespace holder's network namespace */
		p->net_allow = true;
		op(p, "net allow: the holder's network namespace, loopback only (the proxy and the "
		      "DNS stub)",
		   1, "--share-net");
	}
	op(p, "no nested user namespaces inside the jail", 1, "--disable-userns");
	op(p, "no capabilities, whatever the uid", 2, "--cap-drop", "ALL");
	op(p, "the jail dies when agentjail dies", 1, "--die-with-parent");
	op(p, "our init helper is PID 1: it forwards signals and reaps", 1, "--as-pid-1");
	op(p, "fixed hostname", 2, "--hostname", "agentjail");
	char fd[16];
	snprintf(fd, sizeof fd, "%d", BW_FD_SECCOMP);
	op(p, "syscall filter for every process in the jail", 2, "--seccomp", fd);
	snprintf(fd, sizeof fd, "%d", BW_FD_STATUS);
	op(p, "tells agentjail whether the command really started", 2, "--json-status-fd", fd);
}

static const char *const sys[] = {"/usr",    "/bin", "/sbin", "/lib", "/lib32",
				  "/lib64", "/libx32", "/opt", "/etc", NULL};

static void add_system(struct bw_plan *p, struct hostfacts *hf)
{
	for (size_t i = 0; sys[i]; i++) {
		const struct hf_stat *st = hf_stat(hf, sys[i]);
		if (st->type == HF_DIR) {
			char *c = xasprintf("%s: system files, read-only", sys[i]);
			op_fd_bind(p, false, sys[i], sys[i], c);
			free(c);
		} else if (st->type == HF_SYMLINK) {
			op(p, "merged-/usr link, as on the host", 3, "--symlink", st->link, sys[i]);
		} else if (st->type == HF_MISSING) {
			skip(p, sys[i], "does not exist on this host");
		} else {
			skip(p, sys[i], "not a directory");
		}
	}
}

/* Well-known secrets in /etc: matched against its entries (and a few subdirectories). */
static void etc_secret_paths(struct hostfacts *hf, struct strv *out)
{
	static const char *const top[] = {"shadow*", "gshadow*", "sudoers", "sudoers.d",
					  "krb5.keytab", "wireguard", NULL};
	static const struct {
		const char *dir;
		const char *glob;
	} sub[] = {{"/etc/ssh", "ssh_host_*_key"},
		   {"/etc/ssl", "private"},
		   {"/etc/security", "opasswd"},
		   {"/etc/NetworkManager", "system-connections"},
		   {"/etc/libvirt", "secrets"},
		   {"/etc/openvpn", "*.key"},
		   {NULL, NULL}};
	const struct strv *names = hf_children(hf, "/etc");
	for (size_t i = 0; i < names->n; i++)
		for (size_t g = 0; top[g]; g++)
			if (fnmatch(top[g], names->v[i], FNM_PERIOD) == 0)
				strv_push_take(out, path_join("/etc", names->v[i]));
	for (size_t s = 0; sub[s].dir; s++) {
		const struct strv *kids = hf_children(hf, sub[s].dir);
		for (size_t i = 0; i < kids->n; i++)
			if (fnmatch(sub[s].glob, kids->v[i], 0) == 0)
				strv_push_take(out, path_join(sub[s].dir, kids->v[i]));
	}
}

static bool under_any(const struct strv *v, const char *path)
{
	for (size_t i = 0; i < v->n; i++)
		if (path_is_under(path, v->v[i]))
			return true;
	return false;
}

/* At most this many read-denied paths (of LANDLOCK_MAX_DENY_READ) come from scanned trees. */
#define TREE_DENY_READ_MAX 256

/* A writable path at, above or below x: Landlock cannot deny reading x then (init refuses). */
static bool meets_writable(struct hostfacts *hf, const struct policy *pol, const char *x)
{
	const char *w[] = {pol->workspace, hf->gitdir, hf->commondir, hf->home};
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		if (w[i] && (path_is_under(x, w[i]) || path_is_under(w[i], x)))
			return true;
	const struct strv *lists[] = {&pol->rw, &pol->agent_rw};
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < lists[l]->n; i++)
			if (path_is_under(x, lists[l]->v[i]) || path_is_under(lists[l]->v[i], x))
				return true;
	return false;
}

/* As root, the entries of a tree bound read-only that an unprivileged user could not read
 * (etcscan.h: the scan, its cache and what that cache notices) are masked: a 0700 directory
 * with one mount, a file with /dev/null. Called right after the tree's bind, by whatever binds
 * a host tree read-only (system trees, PATH directories and install trees under $HOME). */
static void mask_root_only(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			   const char *tree)
{
	if (hf->uid != 0)
		return;
	const struct strv *u = hf_unreadable(hf, tree);
	for (size_t i = 0; i < u->n; i++) {
		const char *x = u->v[i];
		if (!path_is_under(x, tree))
			continue;
		if (path_is_under(pol->workspace, x)) {
			/* a mask there would leave no place to mount the workspace on */
			skip(p, x, "root-only, but holds the workspace: not masked");
			continue;
		}
		enum hf_type t = hf_type(hf, x);
		mask(p, hf, x, "an entry an unprivileged user could not read: masked for root");
		/* Landlock keeps it unreadable if the host renames over it (a package upgrade),
		 * which detaches the mount; not where a writable path meets it, and not past a
		 * bound that keeps init's walk (and its rule budget) small */
		if ((t != HF_FILE && t != HF_DIR) || meets_writable(hf, pol, x))
			continue;
		if (p->deny_read.n >= TREE_DENY_READ_MAX)
			skip(p, x, "masked, but past the read-deny bound: the mount alone hides it");
		else
			strv_push(&p->deny_read, x);
	}
}

static void add_tree_masks(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol)
{
	for (size_t i = 0; sys[i]; i++)
		if (strcmp(sys[i], "/etc") != 0 && hf_type(hf, sys[i]) == HF_DIR)
			mask_root_only(p, hf, pol, sys[i]); /* /etc: add_etc_masks */
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* NAME.lock, NAME.1234 (shadow-utils' per-pid lock), NAME+ (its edit copy) */
static bool transient_etc_name(const char *path)
{
	size_t n = strlen(path);
	if (n > 5 && !strcmp(path + n - 5, ".lock"))
		return true;
	if (n && path[n - 1] == '+')
		return true;
	const char *dot = strrchr(path_basename(path), '.');
	if (!dot || !dot[1])
		return false;
	for (const char *c = dot + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

static void add_etc_masks(struct bw_plan *p, struct hostfacts *hf)
{
	if (hf_type(hf, "/etc") != HF_DIR)
		return;
	struct strv all = STRV_INIT;
	etc_secret_paths(hf, &all);
	if (hf->uid == 0)
		strv_copy(&all, &hf->etc_unreadable);
	if (all.n)
		qsort(all.v, all.n, sizeof *all.v, cmp_str);
	struct strv done = STRV_INIT;
	for (size_t i = 0; i < all.n; i++) {
		/* sorted: a masked directory comes before its contents, which it already hides */
		if (under_any(&done, all.v[i]))
			continue;
		if (transient_etc_name(all.v[i])) {
			/* lock files (NAME.lock, NAME.PID) and shadow-utils' "+" copies live for the
			 * moment of an edit (useradd, passwd): masking one that vanished before bwrap
			 * mounts would fail the whole jail; they hold a pid or nothing, and as root
			 * init's Landlock read-deny leaves them unreadable anyway */
			skip(p, all.v[i], "transient lock or edit copy: not masked");
			continue;
		}
		strv_push(&done, all.v[i]);
		/* as root only permissions are bypassed: Landlock keeps these unreadable even
		 * when the host replaces them by rename (which detaches our mount) */
		if (hf->uid == 0)
			strv_push(&p->deny_read, all.v[i]);
		bool unreadable = strv_contains(&hf->etc_unreadable, all.v[i]);
		mask(p, hf, all.v[i],
		     unreadable ? "/etc entry an unprivileged user could not read: masked for root"
				: "well-known secret in /etc: masked");
	}
	strv_free(&done);
	strv_free(&all);
}

static void add_proc_dev(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol)
{
	op(p, "a fresh /proc for the jail's pid namespace", 2, "--proc", "/proc");
	static const char *const ro[] = {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
					 "/proc/bus", "/proc/fs", NULL};
	for (size_t i = 0; ro[i]; i++) {
		if (hf_type(hf, ro[i]) == HF_MISSING) {
			skip(p, ro[i], "not on this kernel");
			continue;
		}
		op(p, i == 0 ? "read-only: as root, a writable core_pattern is a host takeover"
			     : "kernel knobs, read-only",
		   3, "--ro-bind", ro[i], ro[i]);
	}
	static const char *const hide[] = {"/proc/kcore",     "/proc/keys", "/proc/timer_list",
					   "/proc/sched_debug", "/proc/acpi", "/proc/scsi",
					   NULL};
	for (size_t i = 0; hide[i]; i++) {
		if (hf_type(hf, hide[i]) == HF_MISSING) {
			skip(p, hide[i], "not on this kernel");
			continue;
		}
		mask(p, hf, hide[i], "kernel information the jail does not need: masked");
	}
	/* root-only on the host (0400): the jail's uid 0 passes their owner check. (kallsyms is
	 * 0444 and shows zero addresses without CAP_SYSLOG; kmsg needs CAP_SYSLOG to open;
	 * program_cpu is not mainline, seen 0400 and readable on a Firecracker guest kernel.) */
	static const char *const root_only[] = {
		"/proc/slabinfo",     "/proc/kpageflags",  "/proc/kpagecount", "/proc/kpagecgroup",
		"/proc/pagetypeinfo", "/proc/vmallocinfo", "/proc/program_cpu", NULL};
	for (size_t i = 0; hf->uid == 0 && root_only[i]; i++) {
		if (hf_type(hf, root_only[i]) == HF_MISSING) {
			skip(p, root_only[i], "not on this kernel");
			continue;
		}
		mask(p, hf, root_only[i], "kernel memory layout, root-only on the host: masked for root");
	}
	op(p, "a minimal /dev (null, zero, random, tty, pts, shm)", 2, "--dev", "/dev");
	for (size_t i = 0; i < pol->dev.n; i++)
		op(p, "device asked for with --dev", 3, "--dev-bind", pol->dev.v[i],
		   pol->dev.v[i]);
}

/* a tmpfs size in bytes, for --size */
#define SZ(v) (snprintf(sz, sizeof sz, "%llu", (unsigned long long)(v)), sz)

static void add_tmpfs(struct bw_plan *p)
{
	char sz[24];
	const struct tmpfs_sizes *t = &p->limits.tmpfs;
	op(p, "private /tmp", 6, "--size", SZ(t->tmp), "--perms", "1777", "--tmpfs", "/tmp");
	op(p, "private /var/tmp", 6, "--size", SZ(t->vartmp), "--perms", "1777", "--tmpfs",
	   "/var/tmp");
	op(p, "private /run: no host sockets", 6, "--size", SZ(t->run), "--perms", "0755",
	   "--tmpfs", "/run");
	op(p, "private shared memory", 6, "--size", SZ(t->shm), "--perms", "1777", "--tmpfs",
	   "/dev/shm");
	op(p, "as on the host", 3, "--symlink", "../run", "/var/run");
	char fd[16];
	snprintf(fd, sizeof fd, "%d", BW_FD_INIT);
	op(p, "agentjail's init helper, read-only, from an fd", 3, "--ro-bind-fd", fd,
	   BW_INIT_PATH);
}

/* verify's battery is agentjail itself (`__probe`), not the small init: it is bound beside
 * the init, read-only, for a command that names it and for no other; last of the binds, so
 * every other fd number is the one `run` gives the same view */
static void add_self(struct bw_plan *p, const struct hostfacts *hf, const struct strv *cmd)
{
	if (!cmd->n || strcmp(cmd->v[0], BW_SELF_PATH) != 0 || !hf->self_exe)
		return;
	op_fd_bind(p, false, hf->self_exe, BW_SELF_PATH, "agentjail itself, for the command");
}

/* --net allow: DNS goes to the stub on 127.0.0.1:53 (NET_DNS_PORT). The file is replaced
 * where it really is: the target under /run (over the fresh tmpfs), /etc/resolv.conf itself,
 * or the plain file one symlink away; /etc/hosts stays the host's. Without a file glibc asks
 * 127.0.0.1 anyway. */
static void add_resolv_stub(struct bw_plan *p, struct hostfacts *hf, bool ask)
{
	static const char allow[] = "# agentjail --net allow: the DNS stub answers allowed names "
				    "only\nnameserver 127.0.0.1\n";
	/* --net ask: a lookup waits while the person is asked; glibc's longest wait (30 s a
	 * try, twice) rather than its 5 s, so an answer within a minute reaches the lookup */
	static const char asking[] = "# agentjail --net ask: the DNS stub answers allowed names, "
				     "and asks about others\nnameserver 127.0.0.1\noptions "
				     "timeout:30 attempts:2\n";
	const char *stub = ask ? asking : allow;
	static const char why[] = "net allow: DNS to the stub (nameserver 127.0.0.1)";
	const char *etc = "/etc/resolv.conf";
	const struct hf_stat *st = hf_stat(hf, etc);
	if (hf->resolv_target) {
		op_data_bind(p, stub, hf->resolv_target, why);
	} else if (st->type == HF_FILE) {
		op_data_bind(p, stub, etc, why);
	} else if (st->type == HF_SYMLINK) {
		_cleanup_free_ char *t = path_normalize("/etc", st->link);
		if (hf_type(hf, t) == HF_FILE && !hf_has_symlink_below(hf, "/", t))
			op_data_bind(p, stub, t, why);
		else
			skip(p, etc, "net allow: a symlink to no plain file; not replaced (DNS to "
				     "the host's servers fails at once in the jail's namespace)");
	} else {
		skip(p, etc, "net allow: no file; glibc asks 127.0.0.1, the DNS stub");
	}
}

static void add_resolv(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol)
{
	if (pol->net == NET_ALLOW) {
		add_resolv_stub(p, hf, pol->ask);
		return;
	}
	if (pol->net == NET_OFF || !hf->resolv_target)
		return;
	if (!path_is_under(hf->resolv_target, "/run")) {
		skip(p, hf->resolv_target, "resolv.conf target outside /run: visible through /etc");
		return;
	}
	op_fd_bind(p, false, hf->resolv_target, hf->resolv_target,
		   "resolv.conf's target, after the /run tmpfs (before it, it would be hidden)");
}

/* ---- secrets, inspected hosts, agents (doc/design.md §4d) ---- */

static void setenv_op(struct bw_plan *p, const char *name, const char *value, bool secret,
		      const char *why);

/* What names a CA bundle for the tools that take one from the environment: OpenSSL (and what
 * links it: curl, git, Python's ssl, Ruby, PHP), Node (added to its own roots), Python's
 * requests, curl, git, pip, npm, cargo, the AWS SDKs, Deno */
static const char *const bundle_env[] = {"SSL_CERT_FILE",     "NODE_EXTRA_CA_CERTS",
					 "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
					 "GIT_SSL_CAINFO",    "PIP_CERT",
					 "npm_config_cafile", "CARGO_HTTP_CAINFO",
					 "AWS_CA_BUNDLE",     "DENO_CERT",
					 NULL};

/* After /run's tmpfs and /etc: the bundle, and the host's own bundle file shown with it. */
static void add_bundle(struct bw_plan *p, struct hostfacts *hf)
{
	if (!hf->sec.bundle)
		return;
	op_data_bind(p, hf->sec.bundle, BW_CA_BUNDLE_PATH,
		     "inspected hosts (§4d): the host's CA bundle and agentjail's CA, read-only");
	const char *host = hf->sec.bundle_host;
	if (host && hf_type(hf, host) == HF_FILE && !hf_has_symlink_below(hf, "/", host))
		op_data_bind(p, hf->sec.bundle, host,
			     "… over the host's bundle too (tools with a compiled-in path)");
	else if (host)
		skip(p, host, "the host's CA bundle is not a plain file: not replaced (the "
			      "variables name the jail's)");
}

/* After the home's tmpfs: the filtered ssh agent and known_hosts, gpg's extra socket and the
 * public keyring. -1 (exit 2) for --gpg-agent without a home of the jail's own. */
static int add_agents(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
		      bool home_own, struct err *e)
{
	if (pol->ssh_agent && hf->sec.ssh_sock) {
		op_fd_bind(p, false, hf->sec.ssh_sock, BW_SSH_AGENT_PATH,
			   "--ssh-agent: agentjail's filtered agent (list keys, sign for sessions "
			   "bound to allowed hosts)");
		/* where git's ssh is told to look (ssh's own ~ is the passwd entry's home), and
		 * where plain ssh looks when the home is the jail's */
		_cleanup_free_ char *kh = hf->home ? path_join(hf->home, ".ssh/known_hosts") : NULL;
		if (kh && hf_type(hf, kh) == HF_FILE) {
			op_fd_bind(p, false, kh, BW_KNOWN_HOSTS_PATH,
				   "--ssh-agent: the hosts ssh knows, read-only");
			if (home_own)
				op_fd_bind(p, false, kh, kh, "… and where ssh looks, read-only");
		}
	}
	if (!pol->gpg_agent || !hf->sec.gpg_sock)
		return 0;
	if (!home_own)
		return err_set(e, 0, hf->home ? hf->home : "$HOME",
			       "--gpg-agent needs the jail's own home: here the workspace shows "
			       "yours, secret keys included");
	_cleanup_free_ char *dir = path_join(hf->home, ".gnupg");
	op(p, "--gpg-agent: a gpg home of the jail's own", 4, "--perms", "0700", "--dir", dir);
	static const char *const pub[] = {"pubring.kbx", "pubring.gpg", "trustdb.gpg", NULL};
	for (size_t i = 0; hf->sec.gpg_home && pub[i]; i++) {
		_cleanup_free_ char *src = path_join(hf->sec.gpg_home, pub[i]);
		_cleanup_free_ char *dst = path_join(dir, pub[i]);
		if (hf_type(hf, src) == HF_FILE)
			op_fd_bind(p, false, src, dst, "--gpg-agent: the public keyring, read-only");
	}
	_cleanup_free_ char *sock = path_join(dir, "S.gpg-agent");
	op_fd_bind(p, false, hf->sec.gpg_sock, sock,
		   "--gpg-agent: gpg-agent's restricted extra socket (signs; no key leaves it)");
	return 0;
}

/* The variables: a secret's placeholder is set where its value was (add_env); these follow
 * the proxy's. */
static void add_secrets_env(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			    bool home_own)
{
	for (size_t i = 0; hf->sec.bundle && bundle_env[i]; i++)
		setenv_op(p, bundle_env[i], BW_CA_BUNDLE_PATH, false,
			  "inspected hosts: the jail's CA bundle");
	if (pol->ssh_agent && hf->sec.ssh_sock) {
		setenv_op(p, "SSH_AUTH_SOCK", BW_SSH_AGENT_PATH, false,
			  "--ssh-agent: agentjail's filtered agent");
		setenv_op(p, "GIT_SSH_COMMAND",
			  "ssh -o ProxyCommand='" BW_INIT_PATH " __connect %h %p' "
			  "-o UserKnownHostsFile=" BW_KNOWN_HOSTS_PATH,
			  false, "--ssh-agent: git's ssh through the proxy, with the hosts you know");
	}
	if (pol->gpg_agent && hf->sec.gpg_sock && home_own) {
		_cleanup_free_ char *dir = path_join(hf->home, ".gnupg");
		setenv_op(p, "GNUPGHOME", dir, false, "--gpg-agent: the jail's gpg home");
	}
}

static bool is_home_or_ancestor(const char *dir, const char *home)
{
	return path_is_under(home, dir);
}

/* The private copy the agent writes instead of a host file (policy agent_copy pairs), or NULL. */
static const char *agent_copy_of(const struct policy *pol, const char *path)
{
	for (size_t i = 0; i + 1 < pol->agent_copy.n; i += 2)
		if (!strcmp(pol->agent_copy.v[i], path))
			return pol->agent_copy.v[i + 1];
	return NULL;
}

/* The agent profile's config and credential paths, writable. One reached through a symlink
 * (a dotfiles manager's ~/.claude → ~/dotfiles/claude) is bound at its real place and the link
 * recreated. */
static void add_agent_rw(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			 struct strv *agent_roots)
{
	for (size_t i = 0; i < pol->agent_rw.n; i++) {
		const char *a = pol->agent_rw.v[i];
		const char *copy = agent_copy_of(pol, a);
		if (copy) {
			op_fd_bind(p, true, copy, a,
				   "a private copy of the agent's file: only safe keys go back "
				   "(doc/agents.md)");
			strv_push(agent_roots, a);
			continue;
		}
		struct strv l = STRV_INIT;
		_cleanup_free_ char *real = hf_realpath(hf, a, &l);
		enum hf_type t = real ? hf_type(hf, real) : HF_MISSING;
		if (t != HF_DIR && t != HF_FILE) {
			skip(p, a, "agent config path: missing");
		} else if (bindpath_never(hf, real)) {
			skip(p, a, "agent config path resolves to / or $HOME or above, or to "
				   "agentjail's own directories: not bound");
		} else {
			for (size_t k = 0; k + 1 < l.n; k += 2)
				op(p, "the agent's config path is a symlink on the host too", 3,
				   "--symlink", l.v[k + 1], l.v[k]);
			_cleanup_free_ char *why =
				xasprintf("%s's config and credentials, writable",
					  pol->profile ? pol->profile : "the agent");
			op_fd_bind(p, true, real, real, why);
			strv_push(agent_roots, real);
		}
		strv_free(&l);
	}
}

/* What goes with the tool managers' trees: their credentials-like files masked, the private
 * package caches (writable, from <state>/cache: the host's caches are never written), and the
 * registry configuration as filtered copies made in <state>/toolconf (core/host/toolprep). */
/* The tool managers behind the host's PATH, recognised once per plan: add_home binds their
 * trees and add_env names their roots (recognising them walks hundreds of host facts). */
struct tools_memo {
	bool done;
	struct toolmgr_plan tm;
	char *cache_root; /* the private caches' directory (toolcache_root), or NULL */
	struct strv private_late; /* triples (source or "", place, "over" or ""): the agent's
				   * private dirs inside its writable binds, mounted after the
				   * protection */
};

static const struct toolmgr_plan *tools_of(struct tools_memo *m, struct hostfacts *hf)
{
	if (!m->done)
		toolmgr_recognise(hf, hf_getenv(hf, "PATH"), &m->tm);
	m->done = true;
	return &m->tm;
}

/* `path` with every symlink of its existing part followed and the missing rest appended; NULL
 * when that cannot be told (a chain too long). */
static char *real_or_below(struct hostfacts *hf, const char *path)
{
	char *r = hf_realpath(hf, path, NULL);
	if (r || !strcmp(path, "/") || hf_type(hf, path) != HF_MISSING)
		return r;
	_cleanup_free_ char *up = path_dirname(path);
	_cleanup_free_ char *ru = real_or_below(hf, up);
	return ru ? path_join(ru, path_basename(path)) : NULL;
}

/* One of the agent's private directories at `at`: its directory in agentjail's state, or
 * when that was not made (a dry run, an unusable state dir) a tmpfs for this run; never the
 * host's directory. */
static void bind_private(struct bw_plan *p, struct hostfacts *hf, const char *src, const char *at,
			 const char *agent)
{
	if (src && *src && hf_type(hf, src) == HF_DIR) {
		_cleanup_free_ char *why = xasprintf("%s's own directory, this workspace's (what the "
						     "agent runs from it later): never the host's",
						     agent);
		op_fd_bind(p, true, src, at, why);
		return;
	}
	char sz[24];
	_cleanup_free_ char *why = xasprintf("%s's own directory: a tmpfs for this run (its "
					     "directory in agentjail's state is not made); never "
					     "the host's",
					     agent);
	op(p, why, 6, "--size", SZ(p->limits.tmpfs.home), "--perms", "0700", "--tmpfs", at);
}

/* The agent's private directories (profile.private_dirs, doc/agents.md). One inside a writable
 * bind of the agent is mounted at its real place after the protection there (codex's
 * skills/.system lies in its read-only skills/): kept in tools->private_late. One only in the
 * home tmpfs (opencode's ~/.cache/opencode) is mounted now, and is a root for what the profile
 * protects inside it (the host's ~/.cache/opencode/bin, read-only). */
static void add_agent_private(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			      struct tools_memo *tools, struct strv *agent_roots)
{
	const char *agent = pol->profile ? pol->profile : "the agent";
	struct strv rw_roots = STRV_INIT, all = STRV_INIT;
	strv_copy(&rw_roots, agent_roots);
	strv_copy(&all, &pol->agent_private);
	strv_copy(&all, &pol->agent_private_over);
	for (size_t i = 0; i < all.n; i++) {
		const char *d = all.v[i];
		bool over = i >= pol->agent_private.n;
		_cleanup_free_ char *src = tools->cache_root && pol->profile
						   ? toolcache_agent_dir(tools->cache_root,
									 pol->profile, d)
						   : xstrdup("");
		_cleanup_free_ char *real = real_or_below(hf, d);
		if (real && under_any(&rw_roots, real)) {
			strv_push(&tools->private_late, src);
			strv_push(&tools->private_late, real);
			strv_push(&tools->private_late, over ? "over" : "");
		} else if (over && under_any(agent_roots, d)) {
			/* inside a private dir of the home tmpfs mounted above (opencode's
			 * ~/.cache/opencode/bin): the host's entries are those of the host's dir */
			strv_push(&tools->private_late, src);
			strv_push(&tools->private_late, d);
			strv_push(&tools->private_late, "over");
		} else if (over) {
			skip(p, d, "the agent's private dir showing the host's entries is in none of "
				   "its writable or private dirs: not mounted");
		} else if (path_is_under(d, hf->home) && !path_is_under(d, pol->workspace)) {
			bind_private(p, hf, src, d, agent);
			strv_push(agent_roots, d);
		} else {
			skip(p, d, "the agent's private directory: neither in the home's tmpfs nor in "
				   "its writable directories: not mounted");
		}
	}
	strv_free(&rw_roots);
	strv_free(&all);
}

/* Inside a private instruction dir (profile.private_over), the host's entries read-only; not
 * the agent's own there: hidden ones (codex's skills/.system; a .npmrc's token stays out) and
 * a package install (opencode's plugin dependencies: node_modules, package.json, its lock
 * files); nor a symlink (its target is not judged here: a skill reached through one is not
 * shown). */
static void show_host_entries(struct bw_plan *p, struct hostfacts *hf, const char *dir)
{
	static const char *const own[] = {"node_modules", "package.json", "package-lock.json",
					  "bun.lock", "bun.lockb", NULL};
	const struct strv *kids = hf_children(hf, dir);
	for (size_t i = 0; i < kids->n; i++) {
		bool mine = kids->v[i][0] == '.';
		for (size_t k = 0; own[k] && !mine; k++)
			mine = !strcmp(kids->v[i], own[k]);
		if (mine)
			continue;
		_cleanup_free_ char *k = path_join(dir, kids->v[i]);
		enum hf_type t = hf_type(hf, k);
		if (t == HF_DIR || t == HF_FILE)
			op_fd_bind(p, false, k, k, "the host's instruction entry, read-only");
		else if (t == HF_SYMLINK)
			skip(p, k, "an instruction entry that is a symlink: not shown");
	}
}

static void add_private_late(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			     const struct tools_memo *tools)
{
	const struct strv *l = &tools->private_late;
	for (size_t i = 0; i + 2 < l->n; i += 3) {
		bind_private(p, hf, l->v[i], l->v[i + 1], pol->profile ? pol->profile : "the agent");
		if (l->v[i + 2][0])
			show_host_entries(p, hf, l->v[i + 1]);
	}
}

static void add_tool_extras(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			    const struct tools_memo *tools, const struct strv *bound,
			    struct strv *writable)
{
	const struct toolmgr_plan *tm = &tools->tm;
	for (size_t i = 0; i + 1 < tm->masks.n; i += 2) {
		if (!under_any(bound, tm->masks.v[i]))
			continue;
		_cleanup_free_ char *why = xasprintf("%s: credentials-like file in its tree: masked",
						     tm->masks.v[i + 1]);
		mask(p, hf, tm->masks.v[i], why);
	}
	const char *path = hf_getenv(hf, "PATH");
	struct strv mounts = STRV_INIT, vars = STRV_INIT, skipped = STRV_INIT;
	toolcache_plan(hf, path, tools->cache_root, &mounts, &vars, &skipped);
	for (size_t i = 0; i < skipped.n; i++)
		skip(p, "tool cache", skipped.v[i]);
	for (size_t i = 0; i + 1 < mounts.n; i += 2) {
		const char *dest = mounts.v[i + 1];
		if (path_is_under(dest, pol->workspace) ||
		    (under_any(bound, dest) && hf_type(hf, dest) != HF_DIR)) {
			skip(p, dest, "private cache: its place is inside a read-only tree");
			continue;
		}
		_cleanup_free_ char *why = xasprintf(
			"private package cache (%s), %s; never the host's",
			path_basename(mounts.v[i]),
			pol->cache == CACHE_SHARED ? "shared by every workspace's jails (cache = shared)"
						   : "this workspace's own");
		op_fd_bind(p, true, mounts.v[i], dest, why);
		strv_push(writable, dest);
	}
	for (size_t i = 0; hf->state_dir && toolconfs[i].home_rel; i++) {
		_cleanup_free_ char *host = toolconf_host_path(hf, i);
		if (!host || path_is_under(host, pol->workspace))
			continue;
		enum hf_type t = hf_type(hf, host);
		if (t == HF_SYMLINK) {
			skip(p, host, "registry configuration is a symlink: not passed");
			continue;
		}
		if (t != HF_FILE)
			continue;
		_cleanup_free_ char *copy = xasprintf("%s/toolconf/%s", hf->state_dir,
						      toolconfs[i].copy);
		if (hf_type(hf, copy) != HF_FILE) {
			skip(p, host, "registry configuration: its filtered copy was not made "
				      "(the state dir is new or unusable): not passed");
			continue;
		}
		op_fd_bind(p, false, copy, host,
			   "registry configuration, credential lines removed (a filtered copy)");
	}
	strv_free(&mounts);
	strv_free(&vars);
	strv_free(&skipped);
}

/* $HOME itself: an empty tmpfs, or with --home persist the workspace's persisted home
 * (homekeep.h), which core/host/homeprep made and cleared the way in before bwrap runs. */
static void add_home_base(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol)
{
	if (pol->home == HOME_PERSIST) {
		_cleanup_free_ char *dir = homekeep_dir(hf->state_dir, pol->workspace);
		op_fd_bind(p, true, dir, hf->home,
			   "$HOME is this workspace's persisted home (--home persist): what its "
			   "earlier jails left there; never the real home");
		return;
	}
	char sz[24];
	op(p, "$HOME is an empty private tmpfs", 6, "--size", SZ(p->limits.tmpfs.home), "--perms",
	   "0700", "--tmpfs", hf->home);
}

/* Returns whether $HOME became the jail's own (a tmpfs, or the persisted home). */
static bool add_home(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
		     const struct strv *cmd, struct strv *agent_roots, struct tools_memo *tools)
{
	const char *home = hf->home;
	if (!home || !strcmp(home, "/") || home[0] != '/') {
		skip(p, home ? home : "$HOME", "home is unset or /: no home tmpfs");
		return false;
	}
	if (path_is_under(home, pol->workspace)) {
		skip(p, home, "home lies inside the workspace: the workspace bind shows it");
		return false;
	}
	add_home_base(p, hf, pol);

	_cleanup_free_ char *gitconfig = path_join(home, ".gitconfig");
	enum hf_type gt = hf_type(hf, gitconfig);
	if (gt == HF_FILE)
		op_fd_bind(p, false, gitconfig, gitconfig, "your git identity, read-only");
	else if (gt == HF_SYMLINK)
		skip(p, gitconfig, "is a symlink: not followed");

	add_agent_rw(p, hf, pol, agent_roots);
	add_agent_private(p, hf, pol, tools, agent_roots);

	/* symlinks under $HOME on the way to PATH directories and the command: recreated with
	 * --symlink (before the binds, which show the same links where they overlap); the real
	 * directories behind them are bound instead, opened without following anything */
	struct strv bound = STRV_INIT, links = STRV_INIT;
	const char *path = hf_getenv(hf, "PATH");
	_cleanup_free_ char *copy = xstrdup(path ? path : "");
	for (char *save = NULL, *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue; /* ".", relative: meaningless across a chdir */
		_cleanup_free_ char *dir = path_normalize("/", d);
		if (!path_is_under(dir, home) || is_home_or_ancestor(dir, home) ||
		    path_is_under(dir, pol->workspace))
			continue;
		struct strv l = STRV_INIT;
		_cleanup_free_ char *real = hf_realpath(hf, dir, &l);
		if (!real || hf_type(hf, real) != HF_DIR) {
			skip(p, dir, "PATH entry under $HOME: missing or not a directory");
			strv_free(&l);
			continue;
		}
		for (size_t i = 0; i + 1 < l.n; i += 2)
			if (path_is_under(l.v[i], home) && !strv_contains(&links, l.v[i])) {
				strv_push(&links, l.v[i]);
				strv_push(&links, l.v[i + 1]);
			}
		strv_free(&l);
		if (!path_is_under(real, home) || is_home_or_ancestor(real, home))
			continue; /* outside $HOME: visible, or not, like any system path */
		if (!strv_contains(&bound, real))
			strv_push(&bound, real);
	}
	struct resolved rc = {0};
	struct err ignored = {0};
	if (cmd->n && resolve_command(hf, cmd->v[0], path, hf->self_exe, &rc, &ignored) == 0) {
		for (size_t i = 0; i + 1 < rc.links.n; i += 2)
			if (!strv_contains(&links, rc.links.v[i])) {
				strv_push(&links, rc.links.v[i]);
				strv_push(&links, rc.links.v[i + 1]);
			}
	}
	/* the tool managers behind the PATH: exactly their install trees (core/plan/toolmgr) */
	const struct toolmgr_plan *tm = tools_of(tools, hf);
	for (size_t i = 0; i < tm->warnings.n; i++)
		skip(p, "tool manager", tm->warnings.v[i]);
	/* `bound` holds the PATH directories; the command's needs and the managers' trees join
	 * them */
	struct strv all = STRV_INIT;
	strv_copy(&all, &bound);
	for (size_t i = 0; i < rc.binds.n; i++)
		if (!strv_contains(&all, rc.binds.v[i]))
			strv_push(&all, rc.binds.v[i]);
	for (size_t i = 0; i + 1 < tm->binds.n; i += 2)
		if (!path_is_under(tm->binds.v[i], pol->workspace) &&
		    !strv_contains(&all, tm->binds.v[i]))
			strv_push(&all, tm->binds.v[i]);
	/* parents before children; a child of a bound directory is already shown by it */
	if (all.n)
		qsort(all.v, all.n, sizeof *all.v, cmp_str);
	struct strv done = STRV_INIT;
	for (size_t i = 0; i < all.n; i++)
		if (!path_is_under(all.v[i], pol->workspace) && !under_any(&done, all.v[i]))
			strv_push(&done, all.v[i]);
	for (size_t i = 0; i + 1 < links.n; i += 2) {
		if (path_is_under(links.v[i], pol->workspace) || under_any(&done, links.v[i]))
			continue; /* a bind shows the link as it is */
		op(p, "a symlink on the way to a program, as on the host", 3,
		   "--symlink", links.v[i + 1], links.v[i]);
	}
	for (size_t i = 0; i < done.n; i++) {
		const char *mgr = toolmgr_bind_name(tm, done.v[i]);
		_cleanup_free_ char *why =
			mgr ? xasprintf("%s: its install tree, read-only", mgr)
			    : xstrdup(strv_contains(&bound, done.v[i])
					      ? "PATH directory under $HOME, read-only"
					      : "what the command needs to run (its install tree, "
						"its interpreter), read-only");
		op_fd_bind(p, false, done.v[i], done.v[i], why);
		mask_root_only(p, hf, pol, done.v[i]);
	}
	add_tool_extras(p, hf, pol, tools, &done, agent_roots);
	strv_free(&all);
	resolved_free(&rc);
	strv_free(&done);
	strv_free(&links);
	strv_free(&bound);
	return true;
}

static void add_workspace(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
			  struct strv *writable)
{
	bool review = pol->fs == FS_REVIEW;
	bool rw = pol->fs == FS_WORKSPACE_WRITE || review;
	if (review)
		p->ovl.lower = xstrdup(pol->workspace); /* op_fd_bind takes these from the overlay */
	op_fd_bind(p, rw, pol->workspace, pol->workspace,
		   review ? "the workspace as the review overlay: every write goes to the change "
			    "set (agentjail diff, apply, discard)"
		   : rw	  ? "the workspace, writable"
			  : "the workspace, read-only");
	if (rw)
		strv_push(writable, pol->workspace);
	/* the common dir first: a worktree's git dir usually lies inside it, and a mount of the
	 * ancestor after the child would cover the child */
	const char *gd[] = {hf->commondir, hf->gitdir};
	for (size_t i = 0; i < 2; i++) {
		if (!gd[i] || path_is_under(gd[i], pol->workspace))
			continue;
		if (i == 1 && hf->commondir && path_is_under(gd[1], hf->commondir))
			continue;
		if (hf_type(hf, gd[i]) != HF_DIR) {
			skip(p, gd[i], "git metadata of the workspace: not a directory");
			continue;
		}
		/* outside the workspace, so outside the overlay: under review the jail cannot
		 * write it (a commit there fails), and the real repository stays as it is */
		op_fd_bind(p, rw && !review, gd[i], gd[i],
			   review   ? "git metadata outside the workspace, read-only under --fs "
				      "review (no overlay covers it)"
			   : i == 1 ? "the worktree's git dir, like the workspace"
				    : "the repository's common git dir, like the workspace");
		if (rw && !review)
			strv_push(writable, gd[i]);
	}
	for (size_t i = 0; i < pol->rw.n; i++) {
		enum hf_type t = hf_type(hf, pol->rw.v[i]);
		if (t != HF_DIR && t != HF_FILE) {
			skip(p, pol->rw.v[i], "--rw: missing or not a file or directory");
			continue;
		}
		op_fd_bind(p, true, pol->rw.v[i], pol->rw.v[i], "--rw: writable");
		strv_push(writable, pol->rw.v[i]);
	}
}

/* Candidates for protection inside one writable root. */
static void protected_candidates(struct hostfacts *hf, const char *root, struct strv *out)
{
	for (size_t i = 0; bw_protected_names[i]; i++)
		strv_push_take(out, path_join(root, bw_protected_names[i]));
	_cleanup_free_ char *claude = path_join(root, ".claude");
	/* watched even when absent, so one that appears is caught */
	strv_push_take(out, path_join(claude, "settings.json"));
	strv_push_take(out, path_join(claude, "settings.local.json"));
	const struct strv *kids = hf_children(hf, claude);
	for (size_t i = 0; i < kids->n; i++)
		if (fnmatch("settings*.json", kids->v[i], 0) == 0)
			strv_push_take(out, path_join(claude, kids->v[i]));
}

/* `path` read-only, and every directory between its root and it a mount point, so it cannot be
 * renamed away and rebuilt (EBUSY). */
static void protect_one(struct strv *prot, struct strv *selfb, const char *root, const char *path)
{
	strv_push(prot, path);
	_cleanup_free_ char *d = path_dirname(path);
	while (path_is_strict_ancestor(root, d)) {
		if (!strv_contains(selfb, d))
			strv_push(selfb, d);
		char *up = path_dirname(d);
		free(d);
		d = up;
	}
}

/* The innermost root `path` lies in, or NULL. */
static const char *root_of(const struct strv *roots, const char *path)
{
	const char *root = NULL;
	for (size_t r = 0; r < roots->n; r++)
		if (path_is_under(path, roots->v[r]) && (!root || strlen(roots->v[r]) > strlen(root)))
			root = roots->v[r];
	return root;
}

/* A protected path that is (or is reached through) a symlink: the link itself stays watched, and
 * its target, when it lies in a writable root (the agent's config dir included), is made
 * read-only too, with the same rename guards. A target outside every writable root is read-only
 * or invisible already. Returns whether the target was protected. */
static bool protect_link_target(struct bw_plan *p, struct hostfacts *hf, const struct strv *roots,
				const char *link, struct strv *prot, struct strv *selfb)
{
	_cleanup_free_ char *real = hf_realpath(hf, link, NULL);
	enum hf_type t = real ? hf_type(hf, real) : HF_MISSING;
	if (t != HF_DIR && t != HF_FILE) {
		skip(p, link, "protected path is (or is reached through) a symlink whose target is "
			      "missing or not a file or directory: watched, not bound");
		return false;
	}
	const char *root = root_of(roots, real);
	if (!root) {
		skip(p, link, "protected path is (or is reached through) a symlink to outside the "
			      "writable roots: already read-only or invisible");
		return false;
	}
	for (size_t r = 0; r < roots->n; r++)
		if (path_is_under(roots->v[r], real)) {
			skip(p, link, "protected path is a symlink to a writable root itself (or "
				      "above one): not made read-only, watched");
			return false;
		}
	if (!strv_contains(&p->watch, real))
		strv_push(&p->watch, real);
	if (under_any(prot, real) || hf_has_symlink_below(hf, root, real))
		return true;
	protect_one(prot, selfb, root, real);
	return true;
}

/* Symlinks inside protected directories (a hook `.git/hooks/pre-commit -> ../../scripts/x`) run
 * on the host as well: their targets in writable roots become read-only too. Protected
 * directories are small; the walk is bounded anyway. */
#define LINKS_MAX_DEPTH 4
#define LINKS_MAX_ENTRIES 512

static void links_below(struct bw_plan *p, struct hostfacts *hf, const struct strv *roots,
			const char *dir, int depth, size_t *seen, struct strv *prot,
			struct strv *selfb)
{
	const struct strv *kids = hf_children(hf, dir);
	for (size_t i = 0; i < kids->n && *seen < LINKS_MAX_ENTRIES; i++, (*seen)++) {
		_cleanup_free_ char *k = path_join(dir, kids->v[i]);
		enum hf_type t = hf_type(hf, k);
		if (t == HF_SYMLINK)
			(void)protect_link_target(p, hf, roots, k, prot, selfb);
		else if (t == HF_DIR && depth < LINKS_MAX_DEPTH)
			links_below(p, hf, roots, k, depth + 1, seen, prot, selfb);
	}
}

static void protect_links_inside(struct bw_plan *p, struct hostfacts *hf,
				 const struct strv *roots, struct strv *prot, struct strv *selfb)
{
	size_t seen = 0;
	/* targets added while walking are appended to prot: only the directories there now */
	for (size_t i = 0, n = prot->n; i < n; i++) {
		_cleanup_free_ char *d = xstrdup(prot->v[i]);
		if (hf_type(hf, d) == HF_DIR)
			links_below(p, hf, roots, d, 1, &seen, prot, selfb);
	}
}

/* Whether `path` lies in (or is) a git dir that does not exist yet below `scan_root`, the tree the
 * after-run git scan covers (gitscan). Such a repository is created by `git init` or `git clone`
 * inside the jail: watching its `.git`, `hooks` or `config` would move them away while git is
 * still writing them, so the agent's own repository would never work. The scan after the run
 * reports it and moves aside what in it would run a command, keeping the repository. */
static bool in_new_repo(struct hostfacts *hf, const char *scan_root, const char *path)
{
	const char *rel = scan_root ? path_below(path, scan_root) : NULL;
	if (!rel)
		return false;
	for (const char *c = strstr(rel, ".git"); c; c = strstr(c + 1, ".git")) {
		bool starts = c == rel || c[-1] == '/';
		bool ends = c[4] == '\0' || c[4] == '/';
		if (!starts || !ends)
			continue;
		_cleanup_free_ char *rel_git = xstrndup(rel, (size_t)(c + 4 - rel));
		_cleanup_free_ char *full = path_join(scan_root, rel_git);
		if (hf_type(hf, full) == HF_MISSING)
			return true;
	}
	return false;
}

/* The home files that run code later (bw_home_code) that a writable bind of a host path (the
 * plan's binds so far whose source is their destination: the workspace, --rw, a profile's
 * directory; not a private cache or copy) covers, or whose target it covers (a dotfiles
 * checkout behind ~/.gitconfig). A file the agent gets a private copy of (claude's
 * ~/.claude.json) is not made read-only there: the copy is bound over it, as in a private
 * $HOME, and only its allowed keys come back. */
static void home_code_candidates(struct bw_plan *p, struct hostfacts *hf,
				 const struct policy *pol, struct strv *cand)
{
	if (!hf->home || hf->home[0] != '/' || !strcmp(hf->home, "/"))
		return;
	struct strv host_rw = STRV_INIT;
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		if (o->src && o->args.n == 3 && !strcmp(o->args.v[0], "--bind-fd") &&
		    !strcmp(o->src, o->args.v[2]))
			strv_push(&host_rw, o->src);
	}
	for (size_t i = 0; host_rw.n && bw_home_code[i].name; i++) {
		_cleanup_free_ char *c = path_join(hf->home, bw_home_code[i].name);
		const char *copy = agent_copy_of(pol, c);
		if (under_any(&host_rw, c)) {
			if (copy)
				op_fd_bind(p, true, copy, c,
					   "a private copy of the agent's file over the writable "
					   "bind: only safe keys go back (doc/agents.md)");
			else
				strv_push(cand, c);
			continue;
		}
		_cleanup_free_ char *real = copy ? NULL : hf_realpath(hf, c, NULL);
		if (real && strcmp(real, c) && under_any(&host_rw, real))
			strv_push(cand, real);
	}
	strv_free(&host_rw);
}

static void add_protection(struct bw_plan *p, struct hostfacts *hf, const struct strv *writable,
			   const struct strv *agent_roots, const struct policy *pol,
			   const char *scan_root)
{
	struct strv cand = STRV_INIT;
	struct strv roots = STRV_INIT;
	strv_copy(&roots, writable);
	strv_copy(&roots, agent_roots);
	for (size_t i = 0; i < pol->protect.n; i++)
		if (under_any(agent_roots, pol->protect.v[i]))
			strv_push(&cand, pol->protect.v[i]);
	home_code_candidates(p, hf, pol, &cand);
	for (size_t r = 0; r < writable->n; r++) {
		if (hf_type(hf, writable->v[r]) == HF_DIR)
			protected_candidates(hf, writable->v[r], &cand);
	}
	/* agentjail and every place its init and its remote backend may be (initpath.h): who
	 * rewrites them in one jail runs on the host (with the service's API key), or chooses the
	 * next jail's PID 1 */
	struct strv extra = STRV_INIT;
	if (hf->hooks_path)
		strv_push(&extra, hf->hooks_path);
	if (hf->self_exe) {
		strv_push(&extra, hf->self_exe);
		initpath_candidates(hf->self_exe, &extra);
		helperpath_candidates(&HELPER_REMOTE, hf->self_exe, &extra);
		helperpath_candidates(&HELPER_TLS, hf->self_exe, &extra);
	}
	for (size_t i = 0; i < extra.n; i++)
		if (under_any(writable, extra.v[i]))
			strv_push(&cand, extra.v[i]);
	strv_free(&extra);
	struct strv git = STRV_INIT;
	gitprotect_candidates(hf, &git);
	for (size_t i = 0; i < git.n; i++)
		if (under_any(writable, git.v[i]))
			strv_push(&cand, git.v[i]);
	strv_free(&git);
	for (size_t r = 0; r < writable->n; r++) {
		/* a .git file is a pointer: rewritten, it sends git on the host to a planted git dir */
		_cleanup_free_ char *g = path_join(writable->v[r], ".git");
		if (hf_type(hf, g) == HF_FILE)
			strv_push(&cand, g);
	}
	if (cand.n)
		qsort(cand.v, cand.n, sizeof *cand.v, cmp_str);

	struct strv prot = STRV_INIT, selfb = STRV_INIT;
	for (size_t i = 0; i < cand.n; i++) {
		const char *c = cand.v[i];
		if (i > 0 && !strcmp(c, cand.v[i - 1]))
			continue;
		enum hf_type t = hf_type(hf, c);
		if (!strv_contains(&p->watch, c) && !in_new_repo(hf, scan_root, c))
			strv_push(&p->watch, c);
		if (t == HF_MISSING)
			continue;
		if (under_any(&prot, c))
			continue; /* an ancestor is already read-only */
		const char *root = root_of(&roots, c);
		if (!root)
			continue;
		if (hf_has_symlink_below(hf, root, c)) {
			protect_link_target(p, hf, &roots, c, &prot, &selfb);
			continue;
		}
		protect_one(&prot, &selfb, root, c);
	}
	protect_links_inside(p, hf, &roots, &prot, &selfb);
	/* .git itself: a rename-proof mount point even when it holds no hooks or config */
	for (size_t r = 0; r < writable->n; r++) {
		_cleanup_free_ char *g = path_join(writable->v[r], ".git");
		if (!strv_contains(&p->watch, g) && !in_new_repo(hf, scan_root, g))
			strv_push(&p->watch, g);
		if (hf_type(hf, g) == HF_DIR && !strv_contains(&selfb, g) &&
		    !under_any(&prot, g))
			strv_push(&selfb, g);
	}
	if (selfb.n)
		qsort(selfb.v, selfb.n, sizeof *selfb.v, cmp_str);
	for (size_t i = 0; i < selfb.n; i++)
		op_fd_bind(p, true, selfb.v[i], selfb.v[i],
			   "rename guard: a mount point cannot be moved away (EBUSY)");
	for (size_t i = 0; i < prot.n; i++)
		op_fd_bind(p, false, prot.v[i], prot.v[i], "protected: read-only inside the jail");
	strv_free(&prot);
	strv_free(&selfb);
	strv_free(&cand);
	strv_free(&roots);
}

/* What gitscan compares after the run (a writable workspace only). */
static void add_git_scan(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol)
{
	if (pol->fs != FS_WORKSPACE_WRITE)
		return;
	strv_push(&p->git_roots, pol->workspace);
	const char *gd[] = {hf->gitdir, hf->commondir};
	for (size_t i = 0; i < 2; i++)
		if (gd[i] && !strv_contains(&p->git_dirs, gd[i]))
			strv_push(&p->git_dirs, gd[i]);
	strv_copy(&p->git_known, &hf->nested_git);
	/* the workspace's own .git, when it exists, is the snapshot's to judge (a changed kind) */
	_cleanup_free_ char *own = path_join(pol->workspace, ".git");
	if (hf_type(hf, own) != HF_MISSING)
		strv_push(&p->git_known, own);
	p->git_truncated = hf->nested_truncated;
	p->git_since = hf->nested_since;
}

static void add_masks(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
		      const struct strv *visible, const struct strv *writable)
{
	for (size_t i = 0; i < pol->hide.n; i++) {
		mask(p, hf, pol->hide.v[i], "--hide: masked");
		/* outside the writable view Landlock can also deny reading it (inside a writable
		 * root it cannot: write access there needs read access beneath) */
		if (hf_type(hf, pol->hide.v[i]) != HF_MISSING && !under_any(writable, pol->hide.v[i]))
			strv_push(&p->deny_read, pol->hide.v[i]);
	}
	const char *own[] = {hf->state_dir, hf->config_dir};
	for (size_t i = 0; i < 2; i++) {
		if (!own[i] || !under_any(visible, own[i]))
			continue;
		if (hf_type(hf, own[i]) == HF_MISSING)
			continue;
		mask(p, hf, own[i], "agentjail's own state/config: masked");
	}
	/* inside the agent's writable config (so not read-denied by Landlock: the mount hides) */
	for (size_t i = 0; i < pol->agent_hide.n; i++)
		mask(p, hf, pol->agent_hide.v[i], "the agent's IDE auth tokens: masked");
	for (size_t i = 0; i < pol->ro.n; i++) {
		enum hf_type t = hf_type(hf, pol->ro.v[i]);
		if (t != HF_DIR && t != HF_FILE) {
			skip(p, pol->ro.v[i], "--ro: missing or not a file or directory");
			continue;
		}
		op_fd_bind(p, false, pol->ro.v[i], pol->ro.v[i], "--ro: read-only (narrows)");
	}
	/* the profile's own read-only files: missing is normal (a user without ~/.aider.conf.yml) */
	for (size_t i = 0; i < pol->agent_ro.n; i++) {
		const char *a = pol->agent_ro.v[i];
		enum hf_type t = hf_type(hf, a);
		if (t == HF_FILE || t == HF_DIR)
			op_fd_bind(p, false, a, a, "the agent's config, read-only");
		else if (t == HF_SYMLINK)
			skip(p, a, "the agent's read-only config is a symlink: not followed");
	}
}

static const char *const env_keep[] = {"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM",
				       "COLORTERM", "LANG", "TZ", NULL};

static void setenv_op(struct bw_plan *p, const char *name, const char *value, bool secret,
		      const char *why)
{
	struct bw_op *o = op_new(p, why);
	strv_push(&o->args, "--setenv");
	strv_push(&o->args, name);
	strv_push(&o->args, value);
	o->secret = secret;
}

/* The toolchains' variables: the roots of the managers recognised, the private caches'
 * places, and the host's mirror variables (never their token siblings, nor a URL carrying a
 * password). */
static void add_tool_env(struct bw_plan *p, struct hostfacts *hf, struct tools_memo *tools)
{
	const char *path = hf_getenv(hf, "PATH");
	const struct toolmgr_plan *tm = tools_of(tools, hf);
	for (size_t i = 0; i < tm->env.n; i++) {
		_cleanup_free_ char *name = xstrndup(tm->env.v[i], strcspn(tm->env.v[i], "="));
		setenv_op(p, name, strchr(tm->env.v[i], '=') + 1, false,
			  "a tool manager's root, kept from the host");
	}
	for (size_t i = 0; i < hf->env.n; i++) {
		const char *kv = hf->env.v[i];
		const char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(kv, (size_t)(eq - kv));
		if (!toolenv_mirror_var(name))
			continue;
		if (toolenv_value_has_credentials(eq + 1)) {
			skip(p, name, "mirror variable with credentials in its URL: not passed");
			continue;
		}
		setenv_op(p, name, eq + 1, false, "package mirror or registry, kept from the host");
	}
	struct strv mounts = STRV_INIT, vars = STRV_INIT, skipped = STRV_INIT;
	toolcache_plan(hf, path, tools->cache_root, &mounts, &vars, &skipped);
	for (size_t i = 0; i + 1 < vars.n; i += 2)
		setenv_op(p, vars.v[i], vars.v[i + 1], false,
			  "the private package cache, where the tool looks");
	strv_free(&mounts);
	strv_free(&vars);
	strv_free(&skipped);
}

/* Whether an op above sets the variable. */
static bool env_set_above(const struct bw_plan *p, const char *name)
{
	for (size_t i = 0; i < p->nops; i++) {
		const struct strv *a = &p->ops[i].args;
		if (a->n == 3 && !strcmp(a->v[0], "--setenv") && !strcmp(a->v[1], name))
			return true;
	}
	return false;
}

/* --net allow: last, over anything passed above (--env, a profile; the host's environment
 * is cleared), the proxy settings clients honour; any other proxy setting passed above
 * (socks, ftp, GIT_PROXY_COMMAND…) is unset. */
static void add_proxy_env(struct bw_plan *p)
{
	const char *const *set = net_proxy_env();
	for (const char *const *c = net_proxy_env_clear(); *c; c++) {
		bool replaced = false;
		size_t n = strlen(*c);
		for (size_t i = 0; set[i] && !replaced; i++)
			replaced = !strncmp(set[i], *c, n) && set[i][n] == '=';
		if (!replaced && env_set_above(p, *c))
			op(p, "net allow: a proxy setting that would go around the proxy", 2,
			   "--unsetenv", *c);
	}
	for (size_t i = 0; set[i]; i++) {
		_cleanup_free_ char *name = xstrndup(set[i], strcspn(set[i], "="));
		setenv_op(p, name, strchr(set[i], '=') + 1, false,
			  "net allow: through agentjail's proxy");
	}
}

static void add_env(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
		    struct tools_memo *tools, bool home_own)
{
	op(p, "start from an empty environment", 1, "--clearenv");
	for (size_t i = 0; env_keep[i]; i++) {
		const char *v = hf_getenv(hf, env_keep[i]);
		if (!strcmp(env_keep[i], "PATH") && !v)
			v = "/usr/local/bin:/usr/bin:/bin";
		if (!strcmp(env_keep[i], "HOME") && !v)
			v = hf->home;
		if (v)
			setenv_op(p, env_keep[i], v, false, "kept from the host");
	}
	for (size_t i = 0; i < hf->env.n; i++) {
		const char *kv = hf->env.v[i];
		if (strncmp(kv, "LC_", 3) != 0)
			continue;
		const char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(kv, (size_t)(eq - kv));
		setenv_op(p, name, eq + 1, false, "locale, kept from the host");
	}
	add_tool_env(p, hf, tools);
	for (size_t i = 0; i < pol->env.n; i++) {
		const char *kv = pol->env.v[i];
		const char *eq = strchr(kv, '=');
		if (eq) {
			_cleanup_free_ char *name = xstrndup(kv, (size_t)(eq - kv));
			setenv_op(p, name, eq + 1, true, "--env NAME=VALUE");
			continue;
		}
		if (secret_set_find(&pol->secrets, kv)) {
			_cleanup_free_ char *ph = secret_placeholder(kv);
			setenv_op(p, kv, ph, false,
				  "a secret: its placeholder; agentjail adds the value at the proxy, "
				  "for its hosts only (§4d)");
			continue;
		}
		const char *v = hf_getenv(hf, kv);
		if (!v) {
			skip(p, kv, "--env: not set on the host");
			continue;
		}
		setenv_op(p, kv, v, true, "--env NAME: passed through from the host");
	}
	for (size_t i = 0; i < pol->setenv.n; i++) {
		const char *kv = pol->setenv.v[i];
		const char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		_cleanup_free_ char *name = xstrndup(kv, (size_t)(eq - kv));
		setenv_op(p, name, eq + 1, false, "set by the agent profile");
	}
	if (hf->session_id)
		setenv_op(p, "AGENTJAIL_SESSION", hf->session_id, false, "this session's id");
	if (pol->net == NET_ALLOW)
		add_proxy_env(p);
	add_secrets_env(p, hf, pol, home_own);
}

/* A --rw or --ro path that is not there: an error naming it (a typo would silently mean no
 * access). A missing --hide path is only worth a warning (cmd layer): nothing is there to see.
 * Never $HOME, an ancestor of it, or agentjail's own directories (bindpath.h; resolving the
 * paths refused them already, this holds for a policy from anywhere). */
static int check_binds(const struct strv *paths, const char *opt, struct hostfacts *hf,
		       struct err *e)
{
	for (size_t i = 0; i < paths->n; i++) {
		enum hf_type t = hf_type(hf, paths->v[i]);
		const char *why = bindpath_never(hf, paths->v[i]);
		if (why)
			return bindpath_refuse(e, opt, paths->v[i], paths->v[i], why);
		if (t == HF_DIR || t == HF_FILE)
			continue;
		if (t == HF_MISSING) {
			err_set(e, 0, paths->v[i], "%s path does not exist", opt);
			err_hint(e, "check the path, or create it first");
		} else {
			err_set(e, 0, paths->v[i], "%s needs a file or directory", opt);
			err_hint(e, "give the directory that holds it");
		}
		return -1;
	}
	return 0;
}

static int check_devices(const struct policy *pol, struct hostfacts *hf, struct err *e)
{
	for (size_t i = 0; i < pol->dev.n; i++) {
		const char *d = pol->dev.v[i];
		enum hf_type t = hf_type(hf, d);
		if (t == HF_BLK) {
			err_set(e, 0, d, "--dev refuses block devices");
			err_hint(e, "a block device gives raw access to a disk; agentjail only passes "
				    "character devices");
			return -1;
		}
		if (t != HF_CHR) {
			err_set(e, 0, d, "--dev needs a character device");
			err_hint(e, "check the path (e.g. /dev/kvm)");
			return -1;
		}
	}
	return 0;
}

/* The option an op gives, past a leading "--size N" and "--perms M". */
static const char *op_verb(const struct bw_op *o)
{
	size_t k = 0;
	while (k + 1 < o->args.n &&
	       (!strcmp(o->args.v[k], "--size") || !strcmp(o->args.v[k], "--perms")))
		k += 2;
	return k < o->args.n ? o->args.v[k] : NULL;
}

/* The mount an op makes (its destination), or NULL for a non-mount option. */
static const char *mount_dest(const struct bw_op *o)
{
	static const char *const m[] = {"--bind-fd", "--ro-bind-fd", "--ro-bind", "--bind",
					"--dev-bind", "--tmpfs", "--proc", "--dev", "--symlink",
					"--ro-bind-data", NULL};
	const char *verb = op_verb(o);
	for (size_t i = 0; verb && m[i]; i++)
		if (!strcmp(verb, m[i]))
			return o->args.v[o->args.n - 1];
	return NULL;
}

/* What an op leaves at its destination: a mount point or a directory of the plan's own. */
static const char *made_dest(const struct bw_op *o)
{
	const char *verb = op_verb(o);
	if (verb && !strcmp(verb, "--dir"))
		return o->args.v[o->args.n - 1];
	return mount_dest(o);
}

const char *bw_op_verb(const struct bw_op *o)
{
	return op_verb(o);
}

const char *bw_op_made_dest(const struct bw_op *o)
{
	return made_dest(o);
}

static void op_free(struct bw_op *o)
{
	strv_free(&o->args);
	free(o->comment);
	free(o->src);
	free(o->data);
	free(o->ovl_rel);
}

/* One mount per destination: when a later op mounts on the same path, it would cover the
 * earlier one anyway, so the earlier one (and a --remount-ro right after it) goes. Later
 * sections are the narrower ones (protection, masks, --ro), so the view is unchanged and
 * never widened. Bind fds are renumbered afterwards. */
static void dedupe_mounts(struct bw_plan *p)
{
	/* each op's destination found once (this compares every pair) */
	const char **dest = xcalloc(p->nops, sizeof *dest);
	for (size_t i = 0; i < p->nops; i++)
		dest[i] = mount_dest(&p->ops[i]);
	size_t w = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const char *d = dest[i];
		bool later = false;
		for (size_t j = i + 1; d && j < p->nops && !later; j++)
			later = dest[j] && !strcmp(dest[j], d);
		if (!later) {
			p->ops[w++] = p->ops[i];
			continue;
		}
		skip(p, d, "mounted again later in the plan: the later, narrower mount wins");
		struct bw_op *next = i + 1 < p->nops ? &p->ops[i + 1] : NULL;
		if (next && !strcmp(next->args.v[0], "--remount-ro") &&
		    !strcmp(next->args.v[1], d)) {
			op_free(next);
			op_free(&p->ops[i]);
			i++;
			continue;
		}
		op_free(&p->ops[i]);
	}
	free(dest);
	p->nops = w;
	int fd = BW_FD_BIND0;
	for (size_t i = 0; i < p->nops; i++) {
		struct bw_op *o = &p->ops[i];
		if (o->fd < 0)
			continue;
		o->fd = fd++;
		size_t k = o->args.n - 2; /* "--…-fd FD DEST", maybe after "--perms M" */
		free(o->args.v[k]);
		o->args.v[k] = xasprintf("%d", o->fd);
	}
	p->next_fd = fd;
}

/* bwrap makes the missing parents of a destination itself, and those of a bind come out 0700
 * (their mode follows the op's --perms, which a bind leaves 0: bubblewrap 0.8 to 0.11). As
 * root that directory is not readable by others, so init's Landlock walk gives it no read rule
 * (landlock.c's visit_entry, against renames over masked secrets) and everything bound below
 * it was unreadable: `--ro /srv/tools` could list /srv/tools and run nothing in it (issue 26).
 * So every directory on the way to a destination that lies in bwrap's empty root or in a tmpfs
 * of the plan (where nothing is but what the plan makes) is made first, 0755, by the plan
 * itself. Under a bind of a host directory nothing is made: it exists there, or bwrap would
 * write into the host's tree. */
static bool in_fresh_dir(const struct strv *dests, const struct strv *fresh, const char *a)
{
	const char *deepest = NULL;
	for (size_t i = 0; i < dests->n; i++)
		if (path_is_strict_ancestor(dests->v[i], a) &&
		    (!deepest || strlen(dests->v[i]) >= strlen(deepest)))
			deepest = dests->v[i];
	return !deepest || strv_contains(fresh, deepest);
}

static void add_parent_dirs(struct bw_plan *p)
{
	struct bw_op *ops = p->ops;
	size_t n = p->nops;
	p->ops = NULL;
	p->nops = p->capops = 0;
	struct strv dests = STRV_INIT; /* what the ops so far made, in order */
	struct strv fresh = STRV_INIT; /* … of which empty directories of the plan's own */
	for (size_t i = 0; i < n; i++) {
		const char *d = made_dest(&ops[i]);
		if (d && d[0] == '/') {
			for (const char *s = strchr(d + 1, '/'); s; s = strchr(s + 1, '/')) {
				_cleanup_free_ char *a = xstrndup(d, (size_t)(s - d));
				if (strv_contains(&dests, a) || !in_fresh_dir(&dests, &fresh, a))
					continue;
				op(p, "on the way to a mount point: searchable by all (bwrap "
				      "makes a bind's parents 0700)",
				   4, "--perms", "0755", "--dir", a);
				strv_push(&dests, a);
				strv_push(&fresh, a);
			}
		}
		*op_new(p, NULL) = ops[i];
		if (!d)
			continue;
		strv_push(&dests, d);
		const char *verb = op_verb(&ops[i]);
		if (!strcmp(verb, "--tmpfs") || !strcmp(verb, "--dir"))
			strv_push(&fresh, d);
	}
	free(ops);
	strv_free(&dests);
	strv_free(&fresh);
}

bool bw_plan_bind_final(const struct bw_plan *p, size_t i)
{
	const struct bw_op *o = &p->ops[i];
	const char *d = o->src ? mount_dest(o) : NULL;
	if (!d)
		return false;
	for (size_t j = i + 1; j < p->nops; j++) {
		const char *dj = mount_dest(&p->ops[j]);
		if (dj && path_is_under(d, dj))
			return false;
	}
	return true;
}

/* The limits as the policy has them (defaults resolved by the caller; unset: none) and how
 * this host enforces them (a fact the probe found). */
static void plan_limits(struct bw_plan *p, const struct policy *pol, const struct hostfacts *hf)
{
	p->limits.memory = pol->memory;
	p->limits.pids = pol->pids;
	p->limits.mech = hf->limits_mech;
	if ((hf->limits_mech == LIMITS_CGROUP || hf->limits_mech == LIMITS_CGROUP_V1) &&
	    hf->cgroup_parent)
		p->limits.cgroup_parent = xstrdup(hf->cgroup_parent);
	if (hf->limits_why)
		p->limits.why = xstrdup(hf->limits_why);
	p->limits.root = hf->uid == 0;
	p->limits.memory_default = pol->memory_default;
	limits_tmpfs_sizes(pol->memory, &p->limits.tmpfs);
}

/* Without a cgroup v2 scope, the jail's init sets rlimits: RLIMIT_DATA per process, and,
 * without a v1 pids scope either, RLIMIT_NPROC inside the jail's user namespace (it counts the
 * jail's processes only there; root is exempt from it, so not for root). */
/* --publish: the jail ports init may connect to for the host (each once); the host ports are
 * the command layer's (its listeners) */
static void add_publish(struct bw_plan *p, const struct policy *pol, struct init_args *ia)
{
	struct publish *v = NULL;
	size_t n = 0;
	struct err e = {0};
	if (pol->net == NET_ON || publish_list(&pol->publish, &v, &n, &e) < 0 || !n)
		return; /* validated before: nothing to publish */
	for (size_t i = 0; i < n; i++) {
		char port[8];
		(void)snprintf(port, sizeof port, "%u", (unsigned)v[i].port);
		if (!strv_contains(&ia->publish, port))
			strv_push(&ia->publish, port);
	}
	p->publish = true;
	free(v);
}

static void add_rlimits(const struct bw_plan *p, struct init_args *ia)
{
	const struct bw_limits *l = &p->limits;
	if (l->mech != LIMITS_RLIMIT && l->mech != LIMITS_CGROUP_V1)
		return;
	/* only a limit the user asked for: RLIMIT_DATA counts reserved writable memory, and
	 * sanitizer builds (ASan, TSan, go -race) reserve terabytes of shadow that way, so the
	 * host-derived default would break a developer's own test runs in the jail */
	if (l->memory != LIMIT_UNSET && l->memory != LIMIT_UNLIMITED && !l->memory_default)
		ia->rlimit_data = (unsigned long long)l->memory;
	if (l->pids != LIMIT_UNSET && l->pids != LIMIT_UNLIMITED && !l->root &&
	    l->mech == LIMITS_RLIMIT)
		ia->rlimit_nproc = (unsigned long long)l->pids;
}

/* --fs review (doc/design.md §3c): the overlay's places, <state>/review/<session id>, which
 * must lie outside the workspace (overlayfs refuses a layer inside another) */
static int plan_review(struct bw_plan *p, struct hostfacts *hf, const struct policy *pol,
		       struct err *e)
{
	if (!hf->state_dir || !hf->session_id) {
		err_set(e, 0, pol->workspace, "--fs review keeps the change set in agentjail's state "
					      "directory, and there is none here");
		err_hint(e, "set AGENTJAIL_STATE_DIR (or state_dir in the configuration) to a "
			    "directory of yours");
		return -1;
	}
	/* its real place: the holder opens every directory on the way without following a link
	 * (a $HOME reached through one, /home -> /var/home, is followed here, once) */
	_cleanup_free_ char *state = real_or_below(hf, hf->state_dir);
	_cleanup_free_ char *dir = review_dir(state ? state : hf->state_dir, hf->session_id);
	if (path_is_under(dir, pol->workspace) || path_is_under(pol->workspace, dir)) {
		err_set(e, 0, dir, "--fs review keeps the change set in agentjail's state directory, "
				   "which lies inside the workspace %s (or holds it): overlayfs "
				   "cannot keep a layer inside the tree it covers",
			pol->workspace);
		err_hint(e, "set AGENTJAIL_STATE_DIR (or state_dir in your configuration) to a "
			    "directory outside the workspace");
		return -1;
	}
	p->ovl.dir = xstrdup(dir);
	p->ovl.upper = path_join(dir, REVIEW_UPPER);
	p->ovl.work = path_join(dir, REVIEW_WORK);
	p->ovl.mnt = path_join(dir, REVIEW_MNT);
	return 0;
}

/* --fs review: the workspace's protected paths are not watched (the jail cannot write the
 * workspace: a change there is the user's own, never to be moved aside); they are what
 * `apply` holds back instead, with git's hooks directory */
static void review_protection(struct bw_plan *p, const struct hostfacts *hf,
			      const struct policy *pol)
{
	size_t w = 0;
	for (size_t i = 0; i < p->watch.n; i++) {
		const char *rel = path_below(p->watch.v[i], pol->workspace);
		if (!rel) {
			p->watch.v[w++] = p->watch.v[i];
			continue;
		}
		/* a git dir itself is judged name by name (review_guard: objects and refs go,
		 * hooks and config never) */
		bool gitdir = !strcasecmp(path_basename(p->watch.v[i]), ".git");
		if (rel[0] && !gitdir && !strv_contains(&p->review_named, rel))
			strv_push(&p->review_named, rel);
		free(p->watch.v[i]);
	}
	p->watch.n = w;
	if (p->watch.v)
		p->watch.v[w] = NULL;
	/* what the jail could not write there either: --ro and --hide inside the workspace */
	const struct strv *narrow[] = {&pol->ro, &pol->hide};
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < narrow[k]->n; i++) {
			const char *rel = path_below(narrow[k]->v[i], pol->workspace);
			if (rel && rel[0] && !strv_contains(&p->review_named, rel))
				strv_push(&p->review_named, rel);
		}
	const char *hooks = hf->hooks_path ? path_below(hf->hooks_path, pol->workspace) : NULL;
	if (hooks && hooks[0])
		strv_push(&p->review_never, hooks);
}

/* --home persist needs a state directory to keep the home in, and a $HOME apart from the
 * workspace (one inside it is the real home, which a jail is never given as its own). */
static int check_persist(const struct policy *pol, const struct hostfacts *hf, struct err *e)
{
	const char *home = hf->home;
	if (!hf->state_dir || hf->state_dir[0] != '/') {
		err_set(e, 0, "--home persist", "a persisted home is kept in agentjail's state "
					 "directory, and there is none here");
		err_hint(e, "set AGENTJAIL_STATE_DIR (or state_dir in ~/.config/agentjail/"
			    "config.toml), or run with --home tmp");
		return -1;
	}
	if (!home || home[0] != '/' || !strcmp(home, "/") || path_is_under(home, pol->workspace)) {
		err_set(e, 0, home ? home : "$HOME",
			"--home persist: $HOME is unset, / or inside the workspace, so the jail's "
			"home would be the real one, never a persisted jail home");
		err_hint(e, "pick a project directory below $HOME as the workspace, or drop "
			    "--home persist");
		return -1;
	}
	return 0;
}

int bwrap_build(const struct policy *pol, struct hostfacts *hf, const struct strv *cmd,
		struct bw_plan *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	out->next_fd = BW_FD_BIND0;
	if (pol->fs == FS_DANGER_FULL) {
		err_set(e, 0, "danger-full-access", "this policy runs without a jail: there is no "
						    "bwrap argv to build");
		return -1;
	}
	if (check_binds(&pol->rw, "--rw", hf, e) < 0 || check_binds(&pol->ro, "--ro", hf, e) < 0)
		return -1;
	if (check_devices(pol, hf, e) < 0)
		return -1;
	if (hf->git_refused) {
		*e = *hf->git_refused;
		return -1;
	}
	if (hf_type(hf, pol->workspace) != HF_DIR) {
		err_set(e, 0, pol->workspace, "the workspace is not a directory");
		return -1;
	}
	if (pol->fs == FS_REVIEW && plan_review(out, hf, pol, e) < 0)
		return -1;
	if (pol->home == HOME_PERSIST && check_persist(pol, hf, e) < 0)
		return -1;
	plan_limits(out, pol, hf);
	add_always(out, pol);
	add_system(out, hf);
	add_tree_masks(out, hf, pol);
	add_etc_masks(out, hf);
	add_proc_dev(out, hf, pol);
	add_tmpfs(out);
	add_resolv(out, hf, pol);
	add_bundle(out, hf);
	struct strv agent_roots = STRV_INIT;
	struct tools_memo tools = {.cache_root = toolcache_root(hf->state_dir, pol->workspace,
								 pol->cache)};
	bool home_own = add_home(out, hf, pol, cmd, &agent_roots, &tools);
	if (add_agents(out, hf, pol, home_own, e) < 0) {
		free(tools.cache_root);
		if (tools.done)
			toolmgr_plan_free(&tools.tm);
		strv_free(&tools.private_late);
		strv_free(&agent_roots);
		return -1;
	}
	struct strv writable = STRV_INIT;
	add_workspace(out, hf, pol, &writable);
	add_protection(out, hf, &writable, &agent_roots, pol,
		       pol->fs == FS_WORKSPACE_WRITE || pol->fs == FS_REVIEW ? pol->workspace
									       : NULL);
	if (pol->fs == FS_REVIEW)
		review_protection(out, hf, pol);
	add_private_late(out, hf, pol, &tools);
	add_git_scan(out, hf, pol);
	struct strv visible = STRV_INIT;
	strv_push(&visible, pol->workspace);
	strv_copy(&visible, &pol->rw);
	strv_copy(&visible, &pol->ro);
	add_masks(out, hf, pol, &visible, &writable);
	strv_free(&visible);
	add_env(out, hf, pol, &tools, home_own);
	if (tools.done)
		toolmgr_plan_free(&tools.tm);
	free(tools.cache_root);
	strv_free(&tools.private_late);
	add_self(out, hf, cmd);

	/* last of the mounts: bwrap's own root tmpfs (where mount points were created) becomes
	 * read-only, so / is never writable and nothing written outside the mounts piles up */
	op(out, "the jail's root, read-only: / is never writable", 2, "--remount-ro", "/");
	dedupe_mounts(out);
	add_parent_dirs(out);

	const char *cwd = hf->cwd && path_is_under(hf->cwd, pol->workspace) ? hf->cwd
									       : pol->workspace;
	out->chdir = xstrdup(cwd);
	out->state_dir = hf->state_dir ? xstrdup(hf->state_dir) : NULL;
	op(out, "start in the workspace", 2, "--chdir", cwd);

	strv_push(&out->cmd, BW_INIT_PATH);
	/* Landlock in init mirrors the writable view: the writable roots and the private tmpfs
	 * mounts (home included, when it is the jail's own: a tmpfs or the persisted home) */
	/* --net allow: init captures the command's direct connections for the proxy to decide
	 * (doc/design.md §4, capture) */
	struct init_args ia = {.ctl = BW_FD_CONTROL, .scope = true, .capture = out->net_allow};
	strv_copy(&ia.writable, &writable);
	static const char *const scratch[] = {"/tmp", "/var/tmp", "/run", "/dev/shm", NULL};
	for (size_t i = 0; scratch[i]; i++)
		strv_push(&ia.writable, scratch[i]);
	if (home_own)
		strv_push(&ia.writable, hf->home);
	strv_copy(&ia.writable, &agent_roots);
	strv_copy(&ia.deny_read, &out->deny_read);
	add_rlimits(out, &ia);
	/* ~/.gitconfig bound read-only (add_home): `git config --global` fails with EBUSY there,
	 * and init tells the host when git tried, for a hint after the run */
	_cleanup_free_ char *gitconfig = home_own ? path_join(hf->home, ".gitconfig") : NULL;
	if (gitconfig && hf_type(hf, gitconfig) == HF_FILE)
		ia.note_lock = gitconfig;
	add_publish(out, pol, &ia);
	initargs_build(&ia, &out->cmd);
	initargs_free(&ia);
	for (size_t i = 0; i < cmd->n; i++)
		strv_push(&out->cmd, cmd->v[i]);
	strv_free(&writable);
	strv_free(&agent_roots);
	return 0;
}

/* The view at `path` by the deepest op over it: shown as the host has it (an identity bind,
 * or a symlink recreated from the host's), or not. */
static bool op_shows(const struct bw_plan *p, const char *path)
{
	const struct bw_op *deepest = NULL;
	size_t dlen = 0;
	for (size_t i = 0; i < p->nops; i++) {
		const char *d = made_dest(&p->ops[i]);
		if (d && path_is_under(path, d) && (!deepest || strlen(d) >= dlen)) {
			deepest = &p->ops[i];
			dlen = strlen(d);
		}
	}
	if (!deepest)
		return false; /* bwrap's root holds only what the plan made */
	const char *verb = op_verb(deepest);
	const char *dest = deepest->args.v[deepest->args.n - 1];
	if (!strcmp(verb, "--symlink"))
		return true; /* the host's own link; where it leads is judged by the real path */
	if (deepest->src) /* --bind-fd, --ro-bind-fd */
		return !strcmp(deepest->src, dest);
	if (!strcmp(verb, "--ro-bind") || !strcmp(verb, "--bind"))
		return strcmp(deepest->args.v[deepest->args.n - 2], "/dev/null") != 0 &&
		       !strcmp(deepest->args.v[deepest->args.n - 2], dest);
	return false; /* a tmpfs, a directory of the plan, /proc, /dev, data */
}

bool bw_plan_shows(const struct bw_plan *p, struct hostfacts *hf, const char *path)
{
	if (!op_shows(p, path))
		return false;
	_cleanup_free_ char *real = hf_realpath(hf, path, NULL);
	return !real || !strcmp(real, path) || op_shows(p, real);
}

void bw_plan_free(struct bw_plan *p)
{
	for (size_t i = 0; i < p->nops; i++)
		op_free(&p->ops[i]);
	free(p->ops);
	strv_free(&p->skipped);
	strv_free(&p->watch);
	strv_free(&p->deny_read);
	strv_free(&p->git_roots);
	strv_free(&p->git_dirs);
	strv_free(&p->git_known);
	strv_free(&p->cmd);
	free(p->chdir);
	free(p->state_dir);
	free(p->limits.cgroup_parent);
	free(p->limits.why);
	free(p->ovl.dir);
	free(p->ovl.lower);
	free(p->ovl.upper);
	free(p->ovl.work);
	free(p->ovl.mnt);
	strv_free(&p->review_named);
	strv_free(&p->review_never);
	memset(p, 0, sizeof *p);
}

void bw_plan_argv_redacted(const struct bw_plan *p, const char *bwrap_path, struct strv *out)
{
	strv_push(out, bwrap_path);
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		for (size_t k = 0; k < o->args.n; k++)
			strv_push(out, o->secret && k + 1 == o->args.n ? "<redacted>" : o->args.v[k]);
	}
	strv_push(out, "--");
	for (size_t i = 0; i < p->cmd.n; i++)
		strv_push(out, p->cmd.v[i]);
}

void bw_plan_argv(const struct bw_plan *p, struct strv *out)
{
	for (size_t i = 0; i < p->nops; i++)
		strv_copy(out, &p->ops[i].args);
}

char *bw_plan_render(const struct bw_plan *p, const char *bwrap_path)
{
	struct strbuf b = STRBUF_INIT;
	if (p->ovl.lower)
		sb_addf(&b, "# review: agentjail's namespace holder mounts an overlay at %s before "
			    "bwrap runs: lower %s (never written), upper %s (the change set), work "
			    "%s; each fd marked \"overlay\" is opened in it\n",
			p->ovl.mnt, p->ovl.lower, p->ovl.upper, p->ovl.work);
	sb_addf(&b, "# %s --args %d -- COMMAND, where fd %d holds:\n",
		bwrap_path ? bwrap_path : "bwrap", BW_FD_ARGS, BW_FD_ARGS);
	for (size_t i = 0; i < p->nops; i++) {
		const struct bw_op *o = &p->ops[i];
		struct strbuf line = STRBUF_INIT;
		for (size_t a = 0; a < o->args.n; a++) {
			if (a)
				sb_addc(&line, ' ');
			if (o->secret && a == o->args.n - 1)
				sb_add(&line, "'<redacted>'");
			else
				sb_add_shquoted(&line, o->args.v[a]);
		}
		sb_add(&b, sb_str(&line));
		size_t w = line.len;
		sb_free(&line);
		if (o->comment || o->src) {
			for (; w < 44; w++)
				sb_addc(&b, ' ');
			sb_add(&b, "  # ");
			if (o->ovl_rel)
				sb_addf(&b, "fd %d = the overlay's %s: ", o->fd,
					o->ovl_rel[0] ? o->ovl_rel : "top");
			else if (o->src && o->args.n == 3 && strcmp(o->src, o->args.v[2]) != 0)
				sb_addf(&b, "fd %d = %s: ", o->fd, o->src);
			sb_add(&b, o->comment ? o->comment : "");
		}
		sb_addc(&b, '\n');
	}
	sb_add(&b, "# COMMAND (on bwrap's command line):\n--");
	for (size_t i = 0; i < p->cmd.n; i++) {
		sb_addc(&b, ' ');
		sb_add_shquoted(&b, p->cmd.v[i]);
	}
	sb_add(&b, "\n");
	for (size_t i = 0; i < p->skipped.n; i++)
		sb_addf(&b, "# skipped: %s\n", p->skipped.v[i]);
	for (size_t i = 0; i < p->watch.n; i++)
		sb_addf(&b, "# watched: %s\n", p->watch.v[i]);
	for (size_t i = 0; i < p->review_named.n; i++)
		sb_addf(&b, "# review: apply holds back unless named: %s\n", p->review_named.v[i]);
	for (size_t i = 0; i < p->review_never.n; i++)
		sb_addf(&b, "# review: apply never writes: %s\n", p->review_never.v[i]);
	return sb_steal(&b);
}
