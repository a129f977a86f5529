/* gpgfacts: where the user's gpg-agent and public keyring are, asked of the host's gpgconf
 * (doc/design.md §4d, --gpg-agent): the agent started when it is not running (gpgconf
 * --launch), then its "extra" socket, the one gpg-agent offers for forwarding, and the gpg home. */
#pragma once
#include <stdbool.h>

#include "util/err.h"

/* launch: start the agent first (not for a dry run). *extra_sock and *homedir allocated; -1
 * with e (gpgconf missing, failing, or an agent without an extra socket). */
int gpgfacts_read(bool launch, char **extra_sock, char **homedir, struct err *e) WUR;

/* gpgconf's percent-escaped value ("%3a" is ':') unescaped, allocated; NULL when malformed.
 * Pure. */
char *gpgfacts_unescape(const char *s);
