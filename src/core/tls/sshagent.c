/* sshagent: the filtered ssh agent of --ssh-agent (doc/design.md §4d). */
#include <stdlib.h>

#include "core/tls/tls_internal.h"

int tls_ssh_load(struct tls_srv *s, struct err *e)
{
	(void)s;
	return err_set(e, 0, "--ssh-agent", "not built yet");
}

void tls_ssh_free(struct tls_ssh *k)
{
	(void)k;
}

void *tls_ssh_thread(void *arg)
{
	struct tls_tunnel_arg *a = arg;
	tls_conn_done(a->s, &a->conn);
	free(a);
	return NULL;
}
