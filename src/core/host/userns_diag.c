#include "core/host/userns_diag.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

static long read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return dflt;
	long v = dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	(void)fclose(f);
	return v;
}

static bool file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	(void)fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* In a fresh child: a user namespace must be creatable AND usable. Ubuntu's AppArmor
 * restriction lets unshare succeed and refuses the uid map, which is where bwrap fails. */
static int userns_child_test(void)
{
	char map[64];
	int n = snprintf(map, sizeof map, "0 %u 1\n", (unsigned)getuid());
	if (unshare(CLONE_NEWUSER) != 0)
		return 1;
	int fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return 1;
	bool ok = write(fd, map, (size_t)n) == n;
	(void)close(fd);
	return ok ? 0 : 1;
}

int userns_aa_loaded(const char *list, const char *name)
{
	if (!list)
		return -1;
	size_t n = strlen(name);
	/* one profile a line: "NAME (MODE)" */
	for (const char *l = list; *l;) {
		if (!strncmp(l, name, n) && l[n] == ' ' && l[n + 1] == '(')
			return 1;
		const char *nl = strchr(l, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	return 0;
}

void userns_facts_note_bwrap(struct userns_facts *f, const char *bwrap_msg)
{
	f->container_refused = bwrap_msg && (strstr(bwrap_msg, "Can't mount proc") != NULL ||
					     (f->in_container && f->userns_works &&
					      strstr(bwrap_msg, "bwrap: ") != NULL));
}

const char *userns_aa_fix(const struct userns_facts *f)
{
	static const char agentjail[] =
		"agentjail's profile: `sudo make install` from the source tree installs and loads "
		"/etc/apparmor.d/agentjail (or `sudo apparmor_parser -r /etc/apparmor.d/agentjail`)";
	static const char bwrap[] =
		"bwrap's profile: `sudo aa-enforce /etc/apparmor.d/bwrap-userns-restrict` where "
		"Ubuntu ships it (24.04+), else write /etc/apparmor.d/bwrap with `abi <abi/4.0>, "
		"include <tunables/global> profile bwrap /usr/bin/bwrap flags=(unconfined) { userns, "
		"include if exists <local/bwrap> }` and run `sudo apparmor_parser -r "
		"/etc/apparmor.d/bwrap`";
	static const char both[] =
		"load two AppArmor profiles that grant `userns`: agentjail's (`sudo make install` "
		"from the source tree installs and loads /etc/apparmor.d/agentjail) and bwrap's (`sudo "
		"aa-enforce /etc/apparmor.d/bwrap-userns-restrict` where Ubuntu ships it, 24.04+; else "
		"a /etc/apparmor.d/bwrap with `abi <abi/4.0>, include <tunables/global> profile bwrap "
		"/usr/bin/bwrap flags=(unconfined) { userns, include if exists <local/bwrap> }` and "
		"`sudo apparmor_parser -r /etc/apparmor.d/bwrap`); or, less safely, `sudo sysctl -w "
		"kernel.apparmor_restrict_unprivileged_userns=0`";
	if (f->aa_agentjail == 1 && f->aa_bwrap != 1)
		return bwrap;
	if (f->aa_bwrap == 1 && f->aa_agentjail != 1)
		return agentjail;
	return both;
}

/* The text of AppArmor's list of loaded profiles, or NULL. malloc'd. */
static char *aa_profiles(void)
{
	FILE *f = fopen("/sys/kernel/security/apparmor/profiles", "re");
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *b2 = realloc(buf, cap * 2 + 1);
			if (!b2)
				break;
			buf = b2;
			cap *= 2;
		}
	}
	(void)fclose(f);
	if (buf)
		buf[n] = '\0';
	return buf;
}

void userns_facts_read(struct userns_facts *f)
{
	memset(f, 0, sizeof *f);
	f->uid = (int)getuid();
	f->apparmor_restrict =
		(int)read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", -1);
	f->max_user_ns = read_long("/proc/sys/user/max_user_namespaces", -1);
	f->unpriv_clone = (int)read_long("/proc/sys/kernel/unprivileged_userns_clone", -1);
	const char *c = getenv("container");
	f->in_container = access("/.dockerenv", F_OK) == 0 ||
			  access("/run/.containerenv", F_OK) == 0 || (c && *c) ||
			  file_has("/proc/1/cgroup", "docker") || file_has("/proc/1/cgroup", "lxc") ||
			  file_has("/proc/1/cgroup", "kubepods");
	f->proc_masked = access("/proc/sys/kernel", R_OK) != 0;
	char *aa = aa_profiles();
	f->aa_agentjail = userns_aa_loaded(aa, "agentjail");
	f->aa_bwrap = userns_aa_loaded(aa, "bwrap");
	free(aa);
	/* the one live test: can a child of ours make a user namespace? (only run after a
	 * failure, never on the normal start path) */
	pid_t pid = fork();
	if (pid == 0)
		_exit(userns_child_test());
	int ws = 0;
	f->userns_works = pid > 0 && waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) &&
			  WEXITSTATUS(ws) == 0;
}

struct userns_cause userns_diagnose(const struct userns_facts *f)
{
	if (f->container_refused)
		return (struct userns_cause){
			"this is a container whose engine refuses bubblewrap's setup in a new namespace "
			"(a new /proc over the paths it masks, a hostname, mounts)",
			"use the Landlock backend here: `--backend landlock`, or backend = \"auto\" in "
			"~/.config/agentjail/config.toml (the bwrap jail where it can be built, else "
			"Landlock); or start the container with /proc unmasked (podman: --security-opt "
			"unmask=ALL; docker: --security-opt systempaths=unconfined)"};
	if (f->userns_works)
		return (struct userns_cause){
			"bubblewrap refused the jail's setup (its message is above); user "
			"namespaces work on this host",
			"check the paths named in bwrap's message; `agentjail run --dry-run ...` "
			"prints the exact jail"};
	if (f->max_user_ns == 0)
		return (struct userns_cause){
			"user namespaces are disabled on this host (user.max_user_namespaces = 0)",
			"as root: sysctl -w user.max_user_namespaces=15000, and make it permanent "
			"in /etc/sysctl.d/90-userns.conf"};
	if (f->uid != 0 && f->apparmor_restrict == 1)
		return (struct userns_cause){
			"AppArmor blocks unprivileged user namespaces "
			"(kernel.apparmor_restrict_unprivileged_userns = 1, Ubuntu 24.04+)",
			userns_aa_fix(f)};
	if (f->uid != 0 && f->unpriv_clone == 0)
		return (struct userns_cause){
			"unprivileged user namespaces are disabled "
			"(kernel.unprivileged_userns_clone = 0)",
			"as root: sysctl -w kernel.unprivileged_userns_clone=1, and make it "
			"permanent in /etc/sysctl.d/90-userns.conf"};
	if (f->proc_masked)
		return (struct userns_cause){
			"/proc/sys is masked or unreadable: this looks like a restricted container",
			"run the container with user namespaces allowed (docker: --security-opt "
			"seccomp=unconfined --security-opt apparmor=unconfined, or podman "
			"--userns=auto), or run agentjail on the host"};
	if (f->in_container)
		return (struct userns_cause){
			"this is a container that does not allow new namespaces",
			"start the container with namespace creation allowed (docker: --security-opt "
			"seccomp=unconfined --security-opt apparmor=unconfined; podman: "
			"--security-opt seccomp=unconfined), or run agentjail on the host"};
	return (struct userns_cause){
		"bubblewrap could not set up the jail (see its message above)",
		"run `agentjail doctor` for a full check of this host"};
}
