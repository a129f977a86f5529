/* serve: agentjail-tls's loop (doc/design.md §4d), for src/tls_main.c. */
#pragma once
#include "util/err.h"

/* `__serve`: read the run's configuration from ctl (fd 3), load the CA, set up TLS and, with an
 * ssh listener (fd 4, else -1), the ssh agent's trusted host keys; say ready, or why not
 * (then -1 with e too); serve until agentjail shuts the control socket, the connections ended
 * and their events sent; wipe the secrets' values. */
int tls_run(int ctl, int ssh_listen, struct err *e) WUR;
/* `__ca DIR`: make the CA in DIR when missing. */
int tls_ca_make(const char *dir, struct err *e) WUR;
/* `__ca-info DIR`: one line on the CA (subject, expiry, SHA-256 of the certificate) into out;
 * -1 with e when it cannot be read or has expired (out still says what was seen). */
int tls_ca_describe(const char *dir, char *out, size_t cap, struct err *e) WUR;
