/* userns_diag: why bubblewrap could not build a jail here, and the exact fix (pure part plus
 * a gatherer that reads the few host knobs involved). */
#pragma once
#include <stdbool.h>

struct userns_facts {
	int uid;
	int apparmor_restrict;  /* kernel.apparmor_restrict_unprivileged_userns, -1 if absent */
	long max_user_ns;       /* user.max_user_namespaces, -1 if absent */
	int unpriv_clone;       /* kernel.unprivileged_userns_clone (Debian < 11), -1 if absent */
	bool in_container;      /* docker/podman/lxc markers */
	bool proc_masked;       /* /proc/sys unreadable */
	bool userns_works;      /* a child could create a user namespace just now */
	/* bwrap's setup was refused as a container engine refuses it (userns_facts_note_bwrap):
	 * it said it cannot mount /proc (the engine masks paths of its /proc, and the kernel then
	 * refuses a new one in a user namespace), or, in a container, anything else */
	bool container_refused;
	/* AppArmor profiles loaded for agentjail and for bwrap (/sys/kernel/security/apparmor/
	 * profiles): 1 loaded, 0 not, -1 unknown (no AppArmor, or the list is unreadable) */
	int aa_agentjail, aa_bwrap;
};

struct userns_cause {
	const char *cause;      /* one line */
	const char *fix;        /* the exact commands or steps */
};

void userns_facts_read(struct userns_facts *f);
/* Whether AppArmor's list of loaded profiles (its text) names a profile `name`: 1, 0, or -1
 * when list is NULL (unreadable). */
int userns_aa_loaded(const char *list, const char *name);
/* What bwrap said when it failed (NULL: nothing): sets container_refused. */
void userns_facts_note_bwrap(struct userns_facts *f, const char *bwrap_msg);
/* The exact fix for AppArmor's restriction: agentjail's profile and bwrap's, as far as each
 * is missing (f's aa_ fields). A static string. */
const char *userns_aa_fix(const struct userns_facts *f);
/* The most likely cause given the facts; a generic cause when nothing specific is seen. */
struct userns_cause userns_diagnose(const struct userns_facts *f);
