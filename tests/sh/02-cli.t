#!/usr/bin/env bash
# The command line: --dry-run, policy contradictions, refused workspaces, cwd inside the jail,
# forbidden variables and devices.
. "$(dirname "$0")/lib.sh"
aj_setup

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# --- --dry-run ---------------------------------------------------------------------------
	rm -f "$WS/dry-run-marker"
	aj_run "$who" -- run --dry-run --env AJ_DRY_SECRET=dry-run-secret-value-$$ -- "$P" write "$WS/dry-run-marker"
	rc_is 0 "$who: --dry-run exits 0"
	check "$who: --dry-run runs nothing" test ! -e "$WS/dry-run-marker"
	like "$OUT" '--unshare-all' "$who: --dry-run argv has --unshare-all"
	like "$OUT" "--unshare-user" "$who: --dry-run argv has --unshare-user"
	like "$OUT" "--cap-drop'?[[:space:]]+'?ALL" "$who: --dry-run argv has --cap-drop ALL"
	like "$OUT" '--seccomp' "$who: --dry-run argv has --seccomp"
	like "$OUT" '--disable-userns' "$who: --dry-run argv has --disable-userns"
	like "$OUT" '--die-with-parent' "$who: --dry-run argv has --die-with-parent"
	like "$OUT" '--clearenv' "$who: --dry-run argv has --clearenv"
	unlike "$OUT" "--(ro-)?bind'?[[:space:]]+'?/'?[[:space:]]+'?/'?([[:space:]]|$)" \
		"$who: --dry-run argv never binds / onto /"
	unlike "$OUT$ERR" "dry-run-secret-value-$$" "$who: --dry-run redacts the value of --env NAME=VALUE"
	like "$OUT$ERR" 'AJ_DRY_SECRET' "$who: --dry-run still names the variable"

	aj_run "$who" -e AJ_PASS_SECRET=passthrough-secret-value-$$ -- run --dry-run --env AJ_PASS_SECRET -- "$P" exit 0
	rc_is 0 "$who: --dry-run --env NAME exits 0"
	unlike "$OUT$ERR" "passthrough-secret-value-$$" "$who: --dry-run redacts the value of a passed-through variable"
	aj_run "$who" -- run --dry-run --ro /nonexistent/agentjail-test -- "$P" exit 0
	like "$OUT$ERR" '/nonexistent/agentjail-test' "$who: --dry-run names a missing --ro source"

	# --- contradictions and bad usage: exit 2 -------------------------------------------------
	aj_run "$who" -- run --rw / -- "$P" exit 0
	rc_is 2 "$who: --rw / is refused with 2 (/ is never writable)"
	aj_run "$who" -- run --ro /nonexistent/agentjail-test --rw /nonexistent/agentjail-test2 -- "$P" exit 0
	rc_is 2 "$who: a missing --ro/--rw source is refused with 2 (a typo would mean no access)"
	aj_run "$who" -- run --fs danger-full-access --net off -- "$P" exit 0
	rc_is 2 "$who: --fs danger-full-access --net off exits 2"
	like "$ERR" 'agentjail: ' "$who: … with a message prefixed 'agentjail: '"
	aj_run "$who" -- run --fs full --net off -- "$P" exit 0
	rc_is 2 "$who: --fs full --net off exits 2"
	aj_run "$who" -- run --fs bogus -- "$P" exit 0
	rc_is 2 "$who: --fs bogus exits 2"
	aj_run "$who" -- run --net bogus -- "$P" exit 0
	rc_is 2 "$who: --net bogus exits 2"
	aj_run "$who" -- run --no-such-option -- "$P" exit 0
	rc_is 2 "$who: an unknown option exits 2"
	aj_run "$who" -- run
	rc_is 2 "$who: run without a command exits 2"
	aj_run "$who" -- run --env LD_PRELOAD=/tmp/evil.so -- "$P" exit 0
	rc_is 2 "$who: --env LD_PRELOAD=… is refused with 2"
	aj_run "$who" -- run --env BASH_ENV=/tmp/evil -- "$P" exit 0
	rc_is 2 "$who: --env BASH_ENV=… is refused with 2"
	aj_run "$who" -e AGENTJAIL_FS=bogus -- run -- "$P" exit 0
	rc_is 2 "$who: AGENTJAIL_FS=bogus exits 2"

	blk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -n1)
	if [ -n "$blk" ]; then
		aj_run "$who" -- run --dev "$blk" -- "$P" exit 0
		rc_is 2 "$who: --dev $blk (a block device) is refused with 2"
	else
		skip "$who: --dev of a block device is refused" "no block device in /dev"
	fi
	aj_run "$who" -- run --dev /dev/null -- "$P" exit 0
	rc_is 0 "$who: --dev /dev/null (a character device) is accepted"

	# --- danger-full-access: no sandbox, said on stderr ---------------------------------------
	rm -f "$EXTRA/full-access"
	aj_run "$who" -- run --fs danger-full-access --net on -- "$P" write "$EXTRA/full-access"
	probe_ok "$who: --fs danger-full-access --net on runs unsandboxed (writes outside the workspace)"
	like "$ERR" 'agentjail: .*([Uu]nsandboxed|[Nn]ot sandboxed|[Nn]o sandbox|without|danger)' \
		"$who: … and says so on stderr"
	rm -f "$EXTRA/full-access"
	aj_run "$who" -- run --fs danger-full-access -- "$P" write "$EXTRA/full-access"
	probe_ok "$who: --fs danger-full-access alone implies --net on (doc/design.md §1) and runs"
	rm -f "$EXTRA/full-access"

	# --- refused workspaces: /, $HOME, an ancestor of $HOME (unless explicit) -----------------
	aj_run "$who" -C / -- run -- /bin/true
	rc_is 2 "$who: cwd / as the implicit workspace is refused with 2"
	like "$ERR" 'agentjail: ' "$who: … with a message prefixed 'agentjail: '"
	aj_run "$who" -C "$HOMEDIR" -- run -- /bin/true
	rc_is 2 "$who: cwd \$HOME as the implicit workspace is refused with 2"
	aj_run "$who" -C "$(dirname "$HOMEDIR")" -- run -- /bin/true
	rc_is 2 "$who: an ancestor of \$HOME as the implicit workspace is refused with 2"
	ln -sfn "$HOMEDIR" "$EXTRA/home-link"
	aj_run "$who" -C "$EXTRA/home-link" -- run -- /bin/true
	rc_is 2 "$who: a cwd that is \$HOME through a symlink is refused with 2"
	rm -f "$EXTRA/home-link"
	aj_run "$who" -C / -- run --workspace "$HOMEDIR" -- /bin/true
	rc_is 0 "$who: --workspace \$HOME given explicitly is accepted"
	aj_run "$who" -- run --workspace /nonexistent/agentjail-test -- /bin/true
	rc_is 2 "$who: a --workspace that does not exist is refused with 2"
	aj_run "$who" -- run --workspace "$P" -- /bin/true
	rc_is 2 "$who: a --workspace that is a file is refused with 2"

	# --- the cwd inside the jail ---------------------------------------------------------------
	aj_run "$who" -C / -- run --workspace "$WS" -- /bin/pwd
	is "$OUT" "$WS" "$who: cwd outside the workspace → the jail starts in the workspace"
	mkdir -p "$WS/sub/dir"
	aj_chown "$WS/sub"
	aj_run "$who" -C "$WS/sub/dir" -- run --workspace "$WS" -- /bin/pwd
	is "$OUT" "$WS/sub/dir" "$who: cwd inside the workspace is kept"
	aj_run "$who" -C "$WS/sub/dir" -- run --workspace "$WS" -- "$P" write "$WS/sub/written"
	probe_ok "$who: … and the whole workspace is writable from there"
	rm -rf "$WS/sub"
	aj_run "$who" -C "$WS" -- run --workspace "$WS/../ws/" -- /bin/pwd
	is "$OUT" "$WS" "$who: --workspace is canonicalized (.., trailing slash)"
	ln -s "$WS" "$EXTRA/ws-link"
	aj_run "$who" -C "$EXTRA" -- run --workspace "$EXTRA/ws-link" -- /bin/pwd
	is "$OUT" "$WS" "$who: a --workspace symlink typed by the user is followed to the canonical path"
	rm -f "$EXTRA/ws-link"
done
aj_skip_missing_whos "command line"

done_testing
