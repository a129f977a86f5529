#!/usr/bin/env bash
# Kernel attack surface: capabilities are zero and no_new_privs is set (even as root); nested
# user namespaces, TIOCSTI and foreign socket families fail — and each seccomp rule is shown by
# itself with the test build, whose filter returns a distinctive errno.
. "$(dirname "$0")/lib.sh"
aj_setup

TEST_ERRNO=4000
have_script=
command -v script >/dev/null 2>&1 && have_script=1
note "dev.tty.legacy_tiocsti = $(cat /proc/sys/dev/tty/legacy_tiocsti 2>/dev/null || echo n/a)"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	aj_run "$who" -- run -- "$P" caps
	rc_is 0 "$who: every capability set is zero inside"
	diag "$who: $OUT"
	aj_run "$who" -- run -- "$P" nnp
	probe_ok "$who: no_new_privs is set inside"
	aj_run "$who" -- run -- sh -c 'cat /proc/self/uid_map'
	diag "$who: uid_map inside: $OUT"

	# --- namespaces: host processes are out of sight and out of reach --------------------------
	sleep 30 &
	host_pid=$!
	AJ_PIDS+=("$host_pid")
	aj_run "$who" -- run -- sh -c "kill -0 $host_pid 2>/dev/null && echo reachable; ls /proc | grep -c '^[0-9]'"
	unlike "$OUT" reachable "$who: a host process cannot be signalled (pid namespace)"
	n=$(printf '%s' "$OUT" | tail -n1)
	ok $(( n > 0 && n <= 6 ? 0 : 1 )) "$who: only the jail's own processes are in /proc ($n)"
	kill "$host_pid" 2>/dev/null

	# --- the real build -----------------------------------------------------------------------
	aj_run "$who" -- run -- "$P" unshare-user
	probe_denied "$who: unshare(CLONE_NEWUSER) fails"
	aj_run "$who" -- run -- "$P" clone-newuser
	probe_denied "$who: clone(CLONE_NEWUSER) fails"
	aj_run "$who" -- run -- sh -c 'unshare -U true 2>/dev/null || unshare -r true 2>/dev/null'
	isnt "$RC" 0 "$who: the unshare(1) tool cannot create a user namespace"
	if [ -n "$have_script" ]; then
		aj_run "$who" -t -- run --quiet -- "$P" tiocsti
		probe_denied "$who: ioctl(TIOCSTI) on the terminal fails"
	else
		skip "$who: ioctl(TIOCSTI) fails" "script(1) is not installed (needs a terminal)"
	fi

	# --- the test build: each rule by itself -------------------------------------------------
	tb=(-b agentjail-testbuild -e "AGENTJAIL_TEST_SECCOMP_ERRNO=$TEST_ERRNO")
	aj_run "$who" "${tb[@]}" -- run -- "$P" exit 0
	rc_is 0 "$who: the test build runs a command"
	aj_run "$who" "${tb[@]}" -- run -- "$P" unshare-user
	probe_denied "$who: seccomp rule: unshare(CLONE_NEWUSER) → errno $TEST_ERRNO" $TEST_ERRNO
	aj_run "$who" "${tb[@]}" -- run -- "$P" clone-newuser
	probe_denied "$who: seccomp rule: clone(CLONE_NEWUSER) → errno $TEST_ERRNO" $TEST_ERRNO
	if [ -n "$have_script" ]; then
		aj_run "$who" -t "${tb[@]}" -- run --quiet -- "$P" tiocsti
		probe_denied "$who: seccomp rule: ioctl(TIOCSTI) → errno $TEST_ERRNO" $TEST_ERRNO
	else
		skip "$who: seccomp rule: ioctl(TIOCSTI)" "script(1) is not installed (needs a terminal)"
	fi
	for fam in 40 17 44 38 31; do
		aj_run "$who" "${tb[@]}" -- run -- "$P" socket $fam
		probe_denied "$who: seccomp rule: socket($fam) → errno $TEST_ERRNO" $TEST_ERRNO
	done
	for fam in 1 2 10 16; do
		aj_run "$who" "${tb[@]}" -- run -- "$P" socket $fam
		probe_ok "$who: seccomp: socket($fam) is allowed"
	done
	aj_run "$who" "${tb[@]}" -- run -- "$P" write "$WS/tb-write"
	probe_ok "$who: seccomp: ordinary file writes are unaffected"
	rm -f "$WS/tb-write"
done
aj_skip_missing_whos "capabilities and seccomp"

done_testing
