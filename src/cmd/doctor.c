/* agentjail doctor [--json]: what works on this host, what does not, and the exact fix. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/diag/doctor.h"
#include "util/cleanup.h"

static const char usage[] =
        "usage: agentjail doctor [--json]\n"
        "  checks bwrap, user namespaces, the jail itself (run on /bin/true), seccomp, Landlock,\n"
        "  pseudo-terminals, the state and config directories, the /etc scan cache (root) and the\n"
        "  installed agents, the tool managers behind PATH (what a jail shows of them) and the\n"
        "  private package caches; prints one line per check with the fix for each warn and fail.\n"
        "  --json   the same as one JSON document (schema: doc/doctor-json.md)\n"
        "exit: 0 when a sandboxed run works here, 1 when it cannot, 2 on a usage error\n"
        "example: agentjail doctor --json\n";

int cmd_doctor(int argc, char **argv)
{
	bool json = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(usage, stdout);
			return 0;
		} else {
			static const char *const known[] = {"--json", "--help", NULL};
			return cmd_unknown("doctor", "argument", argv[i], known);
		}
	}
	/* the checks start programs: nothing of ours may be pending in stdio buffers then */
	(void)fflush(NULL);
	struct doctor_report r = {0};
	doctor_run(&r);
	char *out = json ? doctor_render_json(&r) : doctor_render_text(&r, cmd_colour(STDOUT_FILENO));
	fputs(out, stdout);
	free(out);
	int rc = doctor_report_ok(&r) ? 0 : 1;
	doctor_report_free(&r);
	if (fflush(stdout) != 0) {
		cmd_warn("doctor: cannot write the report");
		return 1;
	}
	return rc;
}

int cmd_version(void)
{
	printf("agentjail %s\n", AGENTJAIL_VERSION);
	struct doctor_report r = {0};
	char *bwrap = doctor_check_bwrap(&r);
	/* one line: "bwrap: bubblewrap 0.8.0 (/usr/bin/bwrap)" when both checks are ok, else the
	 * first check that is not, with its fix */
	const struct doctor_check *bad = NULL;
	for (size_t i = 0; i < r.n && !bad; i++)
		if (r.v[i].status != DOCTOR_OK)
			bad = &r.v[i];
	if (!bad && r.n == 2) {
		const char *v = r.v[1].detail; /* "bubblewrap 0.8.0 (>= 0.8.0 needed)" */
		const char *end = strstr(v, " (");
		printf("bwrap: %.*s (%s)\n", end ? (int)(end - v) : (int)strlen(v), v, bwrap);
	} else if (bad) {
		printf("bwrap: %s; fix: %s\n", bad->detail, bad->fix);
	}
	free(bwrap);
	doctor_report_free(&r);
	return 0;
}

int cmd_osb_doctor(int argc, char **argv)
{
	(void)argv;
	if (argc) {
		cmd_warn("__doctor-opensandbox takes no arguments (agentjail doctor runs it)");
		return EXIT_USAGE;
	}
	/* the configuration read as doctor reads it; its own "config" check is agentjail's */
	struct doctor_report all = {0}, only = {0};
	doctor_check_config(&all);
	for (size_t i = 0; i < all.n; i++)
		if (!strcmp(all.v[i].id, "opensandbox"))
			doctor_add(&only, all.v[i].id, all.v[i].status, all.v[i].fix, "%s",
				   all.v[i].detail);
	_cleanup_free_ char *j = doctor_render_json(&only);
	fputs(j, stdout);
	doctor_report_free(&all);
	doctor_report_free(&only);
	return fflush(stdout) == 0 ? 0 : EXIT_JAIL;
}
