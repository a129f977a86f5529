/* agentjail-init: the jail's own small binary (doc/design.md §2, §7), mounted read-only at
 * /run/agentjail/init. `__init` is the jail's PID 1 (core/jail/init.c); `__connect` is ssh's
 * ProxyCommand inside a --net allow jail (cmd/connect.c); `__unwatch`, on the host, holds the
 * live watch's inotify fd for agentjail (core/jail/guard.h). It links none of SQLite, jansson,
 * libseccomp, c-ares or libidn2, and is linked statically: it is exec'd on every run. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "core/jail/init.h"
#include "core/plan/initargs.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AJ_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AJ_ASAN 1
#endif

#ifdef AJ_ASAN
/* LeakSanitizer stops the world with ptrace, which the jail's seccomp filter refuses, and this
 * program runs only in jails: a sanitizer build of it does no leak check (agentjail, on the
 * host, keeps its own). */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return 1; }
#endif

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], INIT_VERB))
		return init_main(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "__connect"))
		return cmd_connect(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "__unwatch")) {
		/* fd 1 is the inotify fd, fd 0 a pipe agentjail closes once its own reference is
		 * gone: the last close, at our exit, waits for the kernel in agentjail's place */
		char c;
		for (ssize_t r; (r = read(0, &c, 1)) != 0 && (r > 0 || errno == EINTR);)
			;
		return 0;
	}
	fputs("usage: agentjail-init __init [OPTION]... -- CMD [ARG]...   (the jail's PID 1)\n"
	      "       agentjail-init __connect HOST PORT   (ssh's ProxyCommand in a jail)\n"
	      "agentjail starts this itself, inside a jail; it is not run by hand.\n",
	      stderr);
	return EXIT_USAGE;
}
