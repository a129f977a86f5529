/* The translation of a failed jail start into a cause and a fix. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "core/host/userns_diag.h"

static struct userns_facts healthy(void)
{
	return (struct userns_facts){.uid = 1000,
				     .apparmor_restrict = -1,
				     .max_user_ns = 15000,
				     .unpriv_clone = -1,
				     .in_container = false,
				     .proc_masked = false,
				     .userns_works = false};
}

static void expect(struct userns_facts f, const char *cause, const char *fix)
{
	struct userns_cause c = userns_diagnose(&f);
	if (!strstr(c.cause, cause))
		fail_msg("cause `%s` lacks `%s`", c.cause, cause);
	if (!strstr(c.fix, fix))
		fail_msg("fix `%s` lacks `%s`", c.fix, fix);
}

static void causes(void **state)
{
	(void)state;
	struct userns_facts f = healthy();
	f.apparmor_restrict = 1;
	expect(f, "apparmor_restrict_unprivileged_userns", "apparmor_parser -r");
	f.uid = 0; /* root is not subject to the AppArmor userns restriction */
	struct userns_cause c = userns_diagnose(&f);
	assert_null(strstr(c.cause, "AppArmor"));

	f = healthy();
	f.max_user_ns = 0;
	expect(f, "max_user_namespaces = 0", "sysctl -w user.max_user_namespaces=");
	f = healthy();
	f.unpriv_clone = 0;
	expect(f, "unprivileged_userns_clone", "sysctl -w kernel.unprivileged_userns_clone=1");
	f = healthy();
	f.in_container = true;
	expect(f, "container", "run agentjail on the host");
	f = healthy();
	f.proc_masked = true;
	expect(f, "/proc/sys is masked", "container");
	/* when a user namespace can be made right now, none of the above is the cause */
	f = healthy();
	f.in_container = true;
	f.userns_works = true;
	expect(f, "bubblewrap refused", "--dry-run");
	f = healthy();
	expect(f, "bubblewrap could not set up", "agentjail doctor");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(causes)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
