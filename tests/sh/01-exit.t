#!/usr/bin/env bash
# Exit codes: the command's own status, 128+N on signal N, 126/127, 125 when the jail cannot
# start (including an untrusted bwrap), output passed through.
. "$(dirname "$0")/lib.sh"
aj_setup

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	for n in 0 1 42; do
		aj_run "$who" -- run -- "$P" exit "$n"
		rc_is "$n" "$who: run -- probe exit $n exits $n"
	done

	aj_run "$who" -- run -- "$P" exit 255
	rc_is 255 "$who: run -- probe exit 255 exits 255"
	printf 'from-stdin\n' >"$AJ_TMP/stdin.txt"
	aj_run "$who" -i "$AJ_TMP/stdin.txt" -- run -- cat
	is "$OUT" from-stdin "$who: stdin is passed through"

	aj_run "$who" -- run -- sh -c 'echo to-stdout; echo to-stderr >&2; exit 3'
	rc_is 3 "$who: sh -c '… exit 3' exits 3"
	is "$OUT" to-stdout "$who: the command's stdout is passed through"
	like "$ERR" 'to-stderr' "$who: the command's stderr is passed through"

	aj_run "$who" -- run -- /nonexistent/command
	rc_is 127 "$who: a missing command path exits 127"
	aj_run "$who" -- run -- agentjail-no-such-command-$$
	rc_is 127 "$who: a command not found on PATH exits 127"

	printf 'not a program\n' >"$WS/not-executable"
	chmod 0644 "$WS/not-executable"
	aj_chown "$WS/not-executable"
	aj_run "$who" -- run -- ./not-executable
	rc_is 126 "$who: a file without the execute bit exits 126"
	aj_run "$who" -- run -- "$WS"
	rc_is 126 "$who: a directory as the command exits 126"
	rm -f "$WS/not-executable"

	aj_run "$who" -- run -- "$P" kill-self 15
	rc_is 143 "$who: a command killed by SIGTERM exits 143"
	aj_run "$who" -- run -- "$P" kill-self 9
	rc_is 137 "$who: a command killed by SIGKILL exits 137"
	aj_run "$who" -- run -- sh -c 'kill -s USR1 $$'
	rc_is 138 "$who: a shell killed by SIGUSR1 exits 138"
done
aj_skip_missing_whos "exit codes"

# --- bwrap failures map to 125; an untrusted bwrap is refused without being run ---------------
mkdir -m 1777 "$AJ_TMP/markers"
if aj_is_root; then
	STUBDIR=$(mktemp -d /run/agentjail-test-bwrap.XXXXXX)
	AJ_CLEAN+=("$STUBDIR")
	chmod 0755 "$STUBDIR"
	printf '#!/bin/sh\n: > %s/trusted-stub-ran\nexit 1\n' "$AJ_TMP/markers" >"$STUBDIR/bwrap"
	chmod 0755 "$STUBDIR/bwrap"
	# Same stub, owned by the unprivileged user: not trusted.
	if [ -n "$AJ_USER" ] && [ "$AJ_USER" != root ]; then
		cp "$STUBDIR/bwrap" "$STUBDIR/bwrap-user-owned"
		sed -i 's/trusted-stub-ran/user-owned-stub-ran/' "$STUBDIR/bwrap-user-owned"
		chown "$AJ_USER:" "$STUBDIR/bwrap-user-owned"
	fi
fi
mkdir -m 0777 "$AJ_TMP/world-writable"
printf '#!/bin/sh\n: > %s/untrusted-stub-ran\nexit 0\n' "$AJ_TMP/markers" >"$AJ_TMP/world-writable/bwrap"
chmod 0755 "$AJ_TMP/world-writable/bwrap"

for who in root user; do
	if ! [[ " ${AJ_WHOS[*]} " == *" $who "* ]]; then
		skip "$who: bwrap failures exit 125" "${AJ_USER_SKIP:-not running as root}"
		continue
	fi
	aj_use "$who"
	if aj_is_root; then
		aj_run "$who" -e AGENTJAIL_BWRAP="$STUBDIR/bwrap" -- run -- "$P" exit 0
		rc_is 125 "$who: a (trusted) bwrap that fails without running the command exits 125"
		like "$ERR" '(^|'$'\n'')agentjail: ' "$who: … with a message prefixed 'agentjail: '"
		if [ -e "$STUBDIR/bwrap-user-owned" ]; then
			rm -f "$AJ_TMP/markers/user-owned-stub-ran"
			aj_run "$who" -e AGENTJAIL_BWRAP="$STUBDIR/bwrap-user-owned" -- run -- "$P" exit 0
			rc_is 125 "$who: a bwrap owned by a non-root user is refused with 125"
			like "$ERR" '[Tt]rust|[Oo]wned|[Ww]ritable' "$who: … saying why it is not trusted"
			check "$who: … and it is never run" test ! -e "$AJ_TMP/markers/user-owned-stub-ran"
		fi
	else
		skip "$who: a (trusted) failing bwrap exits 125" "needs root to create a root-owned stub"
	fi

	rm -f "$AJ_TMP/markers/untrusted-stub-ran"
	aj_run "$who" -e AGENTJAIL_BWRAP="$AJ_TMP/world-writable/bwrap" -- run -- "$P" exit 0
	rc_is 125 "$who: a bwrap in a world-writable directory is refused with 125"
	like "$ERR" '[Tt]rust|[Ww]ritable' "$who: … with a message saying it is not trusted"
	check "$who: … and it is never run" test ! -e "$AJ_TMP/markers/untrusted-stub-ran"

	aj_run "$who" -e AGENTJAIL_BWRAP=/nonexistent/bwrap -- run -- "$P" exit 0
	rc_is 125 "$who: a missing bwrap exits 125"
	like "$ERR" 'agentjail: ' "$who: … with a message prefixed 'agentjail: '"
done

done_testing
