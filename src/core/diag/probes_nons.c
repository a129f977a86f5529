/* probes_nons: the probes that cannot hold without namespaces, skipped (never passed) when
 * `verify --backend landlock` runs the battery (doc/design.md §4c). */
#include "core/diag/probes.h"

const char *const probe_skips_landlock[] = {
	"pid.init=no PID namespace in the landlock backend: the command's PID 1 is the host's",
	"pid.sentinel_hidden=no PID namespace in the landlock backend: the host's processes are "
	"visible in /proc (signals to them are refused by Landlock's scoping, see "
	"pid.sentinel_signal)",
	"fs.mounts_writable=no mount namespace in the landlock backend: the host's mounts are "
	"shown as they are; writes are refused by Landlock (fs.write_*)",
	"fs.mounts_nosuid=no mount namespace in the landlock backend: no_new_privs makes set-id "
	"bits inert instead",
	"fs.mounts_nodev=no mount namespace in the landlock backend: device nodes are reachable "
	"only where Landlock grants them (a few under /dev)",
	"dev.minimal=no private /dev in the landlock backend: only null, zero, full, random, "
	"urandom, tty, pts and ptmx are granted",
	"proc.kernel_info=no private /proc in the landlock backend: /proc/keys and "
	"/proc/timer_list are the host's (no capabilities to read more)",
	"fs.protected=Landlock cannot hold a protected path read-only inside the writable "
	"workspace: the landlock backend's guard moves a change aside and restores the original "
	"(design §4c)",
	"fs.git_metadata=Landlock cannot hold git's config and hooks read-only inside the writable "
	"workspace: the landlock backend's guard moves a change aside and restores the original "
	"(design §4c)",
	"fs.git_rename=Landlock cannot refuse a rename of .git inside the writable workspace "
	"(design §4c)",
	"net.dns_only_allowed=no DNS stub in the landlock backend (no network namespace to put "
	"it in): names are resolved by the proxy, and UDP sockets are refused",
	"net.capture=no capture of direct connections in the landlock backend (design §4c): "
	"Landlock lets TCP connect to the proxy's port only",
	"net.sni_capture=no capture of direct connections in the landlock backend (design §4c): "
	"Landlock lets TCP connect to the proxy's port only",
	NULL};

const char *const probe_skips_landlock_user[] = {
	"priv.caps=an unprivileged process cannot empty its capability bounding set without a user "
	"namespace; the other sets are empty and no_new_privs keeps the bounding set inert (no "
	"exec can gain a capability)",
	NULL};
