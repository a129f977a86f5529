/* The violations report's pure parts: bwrap's own setup errors (a table of real messages, as
 * bubblewrap 0.8.0 to 0.11 print them) → cause and fix; the protected-path and not-in-view
 * lines (core/backend/bwrap/bwrapmsg.h, core/backend/bwrap/denial.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend/bwrap/bwrapmsg.h"
#include "core/backend/bwrap/denial.h"

static const struct {
	const char *line;
	enum bwrapmsg_kind kind;
	const char *cause; /* a part of the cause */
	const char *fix;   /* a part of the fix */
} table[] = {
	{"bwrap: Can't find source path /home/u/gone: No such file or directory\n", BWM_SOURCE,
	 "/home/u/gone, which the jail binds, cannot be reached (No such file or directory)",
	 "check that /home/u/gone exists"},
	{"bwrap: Creating new namespace failed: Operation not permitted", BWM_USERNS,
	 "namespaces: Operation not permitted", "agentjail doctor"},
	{"bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces "
	 "exceeded (ENOSPC)",
	 BWM_USERNS, "max_user_namespaces", "sysctl -w user.max_user_namespaces="},
	{"bwrap: setting up uid map: Permission denied", BWM_USERNS,
	 "map the jail's user id: Permission denied", "agentjail doctor"},
	{"bwrap: No permissions to creating new namespace, likely because the kernel does not "
	 "allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl "
	 "kernel.unprivileged_userns_clone=1'.",
	 BWM_USERNS, "user namespace", "agentjail doctor"},
	{"bwrap: No permissions to create a new namespace, likely because the kernel does not "
	 "allow non-privileged user namespaces.",
	 BWM_USERNS, "user namespace", "agentjail doctor"},
	{"bwrap: Can't mount proc on /newroot/proc: Operation not permitted", BWM_MOUNT,
	 "fresh /proc for the jail (Operation not permitted)", "systempaths=unconfined"},
	{"bwrap: Failed to make / slave: Permission denied", BWM_MOUNT,
	 "mount namespace (Permission denied)", "run agentjail on the host"},
	{"bwrap: Can't mount tmpfs on /newroot/tmp: Operation not permitted", BWM_MOUNT,
	 "tmpfs at /tmp in the jail", "run agentjail on the host"},
	{"bwrap: Can't bind mount /oldroot/usr on /newroot/usr: Unable to mount source on "
	 "destination: Permission denied",
	 BWM_MOUNT, "bind mount into the jail: Can't bind mount /oldroot/usr", "container"},
	{"bwrap: Can't mkdir parents for /newroot/usr/nope/x: Read-only file system", BWM_DEST,
	 "mount point /usr/nope/x inside the jail (Read-only file system)", "--rw, --ro"},
	{"bwrap: Can't create file at /newroot/etc/x: Read-only file system", BWM_DEST,
	 "mount point /etc/x", "create it on the host first"},
	{"bwrap: execvp /run/agentjail/init: No such file or directory", BWM_EXEC,
	 "init /run/agentjail/init in the jail (No such file or directory)", "reinstall"},
	{"bwrap: Unable to set up system call filtering as requested: prctl(PR_SET_SECCOMP) "
	 "reported EINVAL. Perhaps the kernel lacks CONFIG_SECCOMP_FILTER?",
	 BWM_SECCOMP, "seccomp filter", "CONFIG_SECCOMP_FILTER"},
	{"bwrap: Unknown option --disable-userns", BWM_OPTION,
	 "too old for the jail: Unknown option --disable-userns", "bubblewrap 0.8.0 or newer"},
	{"bwrap: Can't chdir to /home/u/p: No such file or directory", BWM_DEST,
	 "no directory /home/u/p to start in", "--workspace"},
	{"bwrap: pivot_root: Invalid argument", BWM_MOUNT, "(Invalid argument)", "container"},
	/* no reason after the path: the whole path is kept */
	{"bwrap: Can't find source path /a/bc", BWM_SOURCE,
	 "/a/bc, which the jail binds, cannot be reached (no reason given)", "check that /a/bc "},
	{"bwrap: Something new: Bad thing", BWM_OTHER,
	 "bwrap failed while building the jail: Something new: Bad thing", "agentjail doctor"},
	/* not bwrap's words: never translated */
	{"Permission denied", BWM_NONE, "", ""},
	{"cat: /nonexistent: No such file or directory", BWM_NONE, "", ""},
	{"sh: 1: cannot create /etc/x: Read-only file system", BWM_NONE, "", ""},
	{"xbwrap: Can't find source path /a: x", BWM_NONE, "", ""},
};

static void bwrap_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		struct bwrapmsg m;
		bwrapmsg_translate(table[i].line, strlen(table[i].line), &m);
		if (m.kind != table[i].kind)
			fail_msg("`%s`: kind %d, expected %d", table[i].line, m.kind, table[i].kind);
		if (!strstr(m.cause, table[i].cause))
			fail_msg("`%s`: cause `%s` lacks `%s`", table[i].line, m.cause,
				 table[i].cause);
		if (!strstr(m.fix, table[i].fix))
			fail_msg("`%s`: fix `%s` lacks `%s`", table[i].line, m.fix, table[i].fix);
		/* one line each, no nested parentheses */
		assert_null(strchr(m.cause, '\n'));
		assert_null(strchr(m.fix, '\n'));
	}
}

static void find_line(void **state)
{
	(void)state;
	size_t len;
	const char *t = "bwrap: Warning: something harmless\n"
			"agentjail: jail init: x\n"
			"bwrap: Can't find source path /a: No such file or directory\n";
	const char *l = bwrapmsg_find(t, &len);
	assert_non_null(l);
	assert_int_equal(strncmp(l, "bwrap: Can't find", 17), 0);
	assert_int_equal(l[len], '\n');
	assert_null(bwrapmsg_find("hello\nworld\n", &len));
	assert_null(bwrapmsg_find("bwrap: Warning: only a warning", &len));
	assert_null(bwrapmsg_find("", &len));
}

static void protected_why(void **state)
{
	(void)state;
	assert_non_null(strstr(denial_protected_why("/w/.git/hooks"), "hooks on the host"));
	assert_non_null(strstr(denial_protected_why("/w/.git/config"), "core.fsmonitor"));
	assert_non_null(strstr(denial_protected_why("/w/.envrc"), "direnv"));
	assert_non_null(strstr(denial_protected_why("/w/.bashrc"), "shell"));
	/* the home's files that run code: their own reasons (bw_home_code) */
	assert_non_null(strstr(denial_protected_why("/h/.ssh/config"), "ProxyCommand"));
	assert_non_null(strstr(denial_protected_why("/h/.config/git/config"), "fsmonitor"));
	assert_non_null(strstr(denial_protected_why("/h/.local/bin"), "PATH"));
	assert_non_null(strstr(denial_protected_why("/h/.config/systemd/user"), "services"));
	assert_non_null(strstr(denial_protected_why("/w/.agentjail.toml"), "agentjail trust"));
	assert_non_null(strstr(denial_protected_why("/w/.claude/settings.json"), "agent"));
	assert_non_null(denial_protected_why("/w/something-else"));
	/* a name must match whole components */
	assert_null(strstr(denial_protected_why("/w/my.envrc"), "direnv"));

	const char *one[] = {"/w/.envrc"};
	char *l = denial_moved_line(one, 1);
	assert_non_null(strstr(l, "protected path /w/.envrc that it wrote: direnv"));
	assert_non_null(strstr(l, "change it outside one"));
	free(l);
	const char *two[] = {"/w/.agentjail.toml", "/w/.bashrc"};
	l = denial_moved_line(two, 2);
	assert_non_null(strstr(l, "/w/.agentjail.toml that it wrote and 1 more listed above: "));
	assert_non_null(strstr(l, "agentjail trust"));
	assert_null(strstr(l, "change it outside one"));
	free(l);
	assert_null(denial_moved_line(one, 0));
}

static void not_in_view(void **state)
{
	(void)state;
	char *l = denial_not_in_view("tool", "/dev/shm/tool", "/dev/shm", NULL, NULL);
	assert_string_equal(l, "tool is not in the jail's view: on the host it is /dev/shm/tool; "
			       "--ro /dev/shm brings it in");
	free(l);
	l = denial_not_in_view("s", "/srv/s", "/srv", "/venv/bin/python", "/venv/bin");
	assert_non_null(strstr(l, "its interpreter /venv/bin/python"));
	assert_non_null(strstr(l, "--ro /srv --ro /venv/bin bring them in"));
	free(l);
}

/* bwrap's failure on a path the plan masks, which the host changed under it: built again */
static void host_race(void **state)
{
	(void)state;
	const char *masked[] = {"/etc/gshadow", "/usr/local/etc/app/key", "/etc/ssh/host_key"};
	struct {
		const char *text, *want;
	} c[] = {
		{"bwrap: Can't bind mount /oldroot/dev/null on /newroot/etc/gshadow: No such file or "
		 "directory\n",
		 "/etc/gshadow"},
		{"bwrap: Can't bind mount /oldroot/dev/null on /newroot/etc/gshadow: Unable to remount "
		 "destination \"/newroot/etc/gshadow\" with correct flags: Invalid argument\n",
		 "/etc/gshadow"},
		{"bwrap: Can't mkdir /usr/local/etc/app: Read-only file system\n", "/usr/local/etc/app"},
		{"bwrap: Can't create file at /etc/gshadow: Read-only file system\n", "/etc/gshadow"},
		{"bwrap: Can't mkdir /newroot/etc/ssh/host_key: Read-only file system\n",
		 "/etc/ssh/host_key"},
		/* not a masked path, or not this failure: said as it is */
		{"bwrap: Can't bind mount /oldroot/dev/null on /newroot/etc/passwd: No such file or "
		 "directory\n",
		 NULL},
		{"bwrap: Can't bind mount /oldroot/dev/null on /newroot/etc/gshadow-: No such file\n",
		 NULL},
		{"bwrap: Can't mkdir /usr/local/et: Read-only file system\n", NULL},
		{"bwrap: Can't find source path /etc/gshadow: No such file or directory\n", NULL},
		{"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n", NULL},
		{"not bwrap's\n", NULL},
		{NULL, NULL},
	};
	for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
		char *got = bwrapmsg_host_race(c[i].text, masked, 3);
		if (!c[i].want)
			assert_null(got);
		else
			assert_string_equal(got, c[i].want);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bwrap_table),
		cmocka_unit_test(find_line),
		cmocka_unit_test(protected_why),
		cmocka_unit_test(not_in_view), cmocka_unit_test(host_race),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
