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
};

struct userns_cause {
	const char *cause;      /* one line */
	const char *fix;        /* the exact commands or steps */
};

void userns_facts_read(struct userns_facts *f);
/* The most likely cause given the facts; a generic cause when nothing specific is seen. */
struct userns_cause userns_diagnose(const struct userns_facts *f);
