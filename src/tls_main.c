/* agentjail-tls: the TLS inspector and ssh-agent filter of agentjail (doc/design.md §4d), a
 * program of its own because it links OpenSSL and agentjail is a static PIE. agentjail runs it;
 * it is not a command for people:
 *   agentjail-tls __serve   fd 3: the control socket (SOCK_SEQPACKET), fd 4 (optional): the
 *                           ssh agent's listening socket; serves one run
 *   agentjail-tls __ca DIR  makes the per-user CA in DIR when it is missing
 *   agentjail-tls __ca-info DIR   one line on that CA, for doctor */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "core/tls/serve.h"

/* Never dumpable (no ptrace by the user's other processes, no core with the secrets), no new
 * privileges. */
static void harden(void)
{
	struct rlimit no = {0, 0};
	(void)setrlimit(RLIMIT_CORE, &no);
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
}

static int is_socket(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode);
}

int main(int argc, char **argv)
{
	harden();
	struct err e = {0};
	char buf[ERR_FMT_MAX];
	if (argc == 3 && !strcmp(argv[1], "__ca")) {
		if (tls_ca_make(argv[2], &e) == 0)
			return 0;
		err_format(&e, buf, sizeof buf);
		fprintf(stderr, "agentjail-tls: %s\n", buf);
		return 1;
	}
	if (argc == 3 && !strcmp(argv[1], "__ca-info")) {
		char line[1024] = "";
		int rc = tls_ca_describe(argv[2], line, sizeof line, &e);
		if (line[0])
			printf("%s\n", line);
		if (rc < 0 && !line[0]) {
			err_format(&e, buf, sizeof buf);
			printf("%s\n", buf);
		}
		return rc < 0 ? 1 : 0;
	}
	if (argc == 2 && !strcmp(argv[1], "__serve") && is_socket(3)) {
		int ssh = is_socket(4) ? 4 : -1;
		if (fcntl(3, F_SETFD, FD_CLOEXEC) < 0 || (ssh >= 0 && fcntl(4, F_SETFD, FD_CLOEXEC) < 0))
			return 1;
		/* the reason also went to agentjail, which says it */
		return tls_run(3, ssh, &e) == 0 ? 0 : 1;
	}
	fprintf(stderr, "agentjail-tls: run by agentjail (doc/design.md §4d), not by hand\n");
	return 2;
}
