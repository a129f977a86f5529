/* init: `agentjail-init __init -- CMD…`, PID 1 of the jail. Checks from inside that the jail holds
 * (no capabilities, no_new_privs), runs the command as its child, forwards signals sent to it,
 * reaps every child, and exits with the command's status (128+N when it died of signal N). */
#pragma once

int init_main(int argc, char **argv);
