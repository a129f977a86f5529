/* capinit: the jail's init's side of the capture channel (core/plan/capwire.h, doc/design.md §4):
 * a Unix socket of the command is connected here, in the jail's namespaces and with its
 * credentials, to the address agentjail read once from the command, so a path means what it
 * means to the jail and nothing the command changes afterwards is used. */
#pragma once

/* Serve one request waiting on chan: 1 served (or a malformed one dropped), 0 when the channel
 * is closed. Never blocks on a connect (a listener's full backlog answers EAGAIN). */
int capinit_serve(int chan);
