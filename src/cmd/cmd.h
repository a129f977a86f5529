/* The command layer: the only code that prints to the user or decides exit codes. */
#pragma once
#include "util/err.h"

enum {
	EXIT_USAGE = 2,     /* rejected before touching the system */
	EXIT_JAIL = 125,    /* building or starting the jail failed */
	EXIT_NOEXEC = 126,
	EXIT_NOTFOUND = 127,
};

void cmd_print_err(const struct err *e);
void cmd_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

int cmd_run(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_verify(int argc, char **argv);
/* in-jail probe battery entry point (agentjail __probe) */
int cmd_probe(int argc, char **argv);
