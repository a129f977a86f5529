#!/usr/bin/env bash
# Protected paths that are symlinks (their targets are read-only too, and a change through them is
# reported), missing protected paths watched live during the run (moved aside the moment they
# appear, reported at once), move aside that survives chmod tricks, and one that cannot succeed
# ending the run non-zero.
. "$(dirname "$0")/lib.sh"
aj_setup

GIT_ID=(-c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main)

# Start a jail in the background: sets BG_PID, BG_ERR (its stderr file).
bg_run() { # WHO -- AGENTJAIL-ARGS…
	aj_cmd "$@"
	BG_ERR=$AJ_TMP/bg-err
	: >"$BG_ERR"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg-out" 2>"$BG_ERR" &
	BG_PID=$!
}

# Wait (up to N tenths of a second) until FILE matches ERE.
wait_for() { # FILE ERE N
	local i
	for ((i = 0; i < $3; i++)); do
		grep -Eq "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

for who in "${AJ_WHOS[@]}"; do
	# --- a protected directory that is a symlink into the workspace ---------------------------
	aj_fresh_ws "$who"
	mkdir -p "$WS/config/vscode"
	printf 'original\n' >"$WS/config/vscode/settings.json"
	ln -s config/vscode "$WS/.vscode"
	aj_chown "$WS"
	aj_run "$who" -- run -- "$P" write "$WS/.vscode/settings.json" planted
	probe_denied "$who: .vscode -> config/vscode: writing through the link fails"
	aj_run "$who" -- run -- "$P" write "$WS/config/vscode/settings.json" planted
	probe_denied "$who: … writing to the target fails"
	aj_run "$who" -- run -- "$P" write "$WS/config/vscode/tasks.json" planted
	probe_denied "$who: … adding a file to the target fails"
	is "$(cat "$WS/config/vscode/settings.json")" original "$who: … the target is unchanged on the host"
	aj_run "$who" -- run -- "$P" rename "$WS/config" "$WS/config-old"
	probe_denied "$who: … the directory above the target cannot be renamed" '(1|13|16|18|30)'
	[ -e "$WS/config-old" ] && mv "$WS/config-old" "$WS/config"

	# --- a hook that is a symlink into the workspace -----------------------------------------
	aj_fresh_ws "$who"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	mkdir -p "$WS/scripts"
	printf '#!/bin/sh\nexit 0\n' >"$WS/scripts/pre-commit"
	chmod 755 "$WS/scripts/pre-commit"
	ln -s ../../scripts/pre-commit "$WS/.git/hooks/pre-commit"
	aj_chown "$WS"
	aj_run "$who" -- run -- "$P" write "$WS/scripts/pre-commit" 'touch /tmp/pwned'
	probe_denied "$who: .git/hooks/pre-commit -> ../../scripts/pre-commit: the target is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/.git/hooks/pre-commit" 'touch /tmp/pwned'
	probe_denied "$who: … writing through the hook link fails"
	is "$(cat "$WS/scripts/pre-commit")" $'#!/bin/sh\nexit 0' "$who: … the target is unchanged on the host"
	aj_run "$who" -- run -- sh -c 'echo fine > scripts/other.sh'
	check "$who: … the rest of scripts/ stays writable" test -e "$WS/scripts/other.sh"

	# The target changes anyway (here: on the host, during the run): reported, moved aside.
	rm -rf "${STATE:?}"/quarantine
	bg_run "$who" -- run -- sleep 2
	sleep 1
	printf '#!/bin/sh\ntouch /tmp/pwned\n' >"$WS/scripts/pre-commit"
	wait "$BG_PID"
	RC=$?
	ERR=$(tr -d '\r' <"$BG_ERR")
	like "$ERR" "violation: .*scripts/pre-commit" "$who: a changed hook target is reported"
	check "$who: … and moved aside" test ! -e "$WS/scripts/pre-commit"
	found=$(find "$STATE/quarantine" -path '*scripts/pre-commit' 2>/dev/null | head -n1)
	isnt "$found" "" "$who: … into the state directory (never deleted)"

	# --- a repository without .git/hooks: hooks/ is made empty on the host first (as git init
	# does) and bound read-only; what else appears is moved aside at once, while the run goes on
	aj_fresh_ws "$who"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	rm -rf "$WS/.git/hooks"
	printf 'x\n' >"$WS/file"
	aj_chown "$WS"
	aj_host git -C "$WS" add file
	rm -rf "${STATE:?}"/quarantine
	hook="mkdir -p .git/hooks; printf '#!/bin/sh\\ntouch $WS/hook-ran\\n' > .git/hooks/pre-commit; chmod 755 .git/hooks/pre-commit; echo 'touch $WS/envrc-ran' > .envrc; sleep 4"
	bg_run "$who" -- run -- sh -c "$hook"
	wait_for "$BG_ERR" 'violation: .*\.envrc' 30
	ok $? "$who: the report line appears while the command still runs"
	check "$who: … the jail is still running then" kill -0 "$BG_PID"
	check "$who: … .envrc is gone from the workspace already" test ! -e "$WS/.envrc"
	aj_host git -C "$WS" "${GIT_ID[@]}" commit -qm during-the-run >/dev/null 2>&1
	check "$who: … a host git commit during the run does not run a planted hook" test ! -e "$WS/hook-ran"
	wait "$BG_PID"
	RC=$?
	ERR=$(tr -d '\r' <"$BG_ERR")
	is "$RC" 0 "$who: … the run ends with the command's status"
	is "$(ls -A "$WS/.git/hooks" 2>&1)" "" "$who: … .git/hooks was made empty on the host and stayed so"
	found=$(find "$STATE/quarantine" -name .envrc 2>/dev/null | head -n1)
	isnt "$found" "" "$who: … .envrc was moved into the state directory"
	unlike "$ERR" 'could not move' "$who: … without a failed move"

	# --- chmod tricks do not stop the move aside ---------------------------------------------
	# Live: a directory made unwritable, then renamed into place in one step (moving it out of
	# its parent needs write permission on it).
	aj_fresh_ws "$who"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	rm -rf "$WS/.git/info"
	aj_chown "$WS"
	rm -rf "${STATE:?}"/quarantine
	aj_run "$who" -- run -- sh -c 'mkdir v && echo {} > v/tasks.json && chmod 555 v && mv v .vscode &&
		mkdir .git/h && echo x > .git/h/attributes && chmod 555 .git/h && mv .git/h .git/info && sleep 0.5'
	is "$RC" 0 "$who: chmod 555, then renamed into place during the run: the command ran through"
	check "$who: … .vscode is moved aside anyway" test ! -e "$WS/.vscode"
	check "$who: … .git/info too" test ! -e "$WS/.git/info"
	unlike "$ERR" 'could not' "$who: … no move failed"
	n=$(find "$STATE/quarantine" \( -name .vscode -o -name info \) 2>/dev/null | wc -l)
	is "$n" 2 "$who: … both are in the state directory"

	# After the run (the test build's live watch off): chmod 555 on the item and on the workspace.
	aj_fresh_ws "$who"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	rm -rf "$WS/.git/info"
	aj_chown "$WS"
	rm -rf "${STATE:?}"/quarantine
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NO_WATCH=1 -- run -- sh -c \
		'mkdir .vscode .git/info && echo {} > .vscode/tasks.json && echo x > .git/info/attributes &&
		chmod 555 .vscode .git/info .git/info/attributes && echo x > .envrc && chmod 555 .'
	chmod u+w "$WS"
	is "$RC" 0 "$who: chmod 555 .vscode, .git/info and the workspace, checked after the run: exit 0"
	check "$who: … .vscode is moved aside" test ! -e "$WS/.vscode"
	check "$who: … .git/info too" test ! -e "$WS/.git/info"
	check "$who: … and .envrc" test ! -e "$WS/.envrc"
	unlike "$ERR" 'could not' "$who: … no move failed"
	n=$(find "$STATE/quarantine" \( -name .vscode -o -name info -o -name .envrc \) 2>/dev/null | wc -l)
	is "$n" 3 "$who: … all three are in the state directory"

	# On a terminal (raw mode): the live line stands on a line of its own, before the command ends.
	aj_fresh_ws "$who"
	aj_run "$who" -t -- run -- sh -c 'printf partial; echo x > .envrc; sleep 0.5; echo; echo command-done'
	first=$(printf '%s\n' "$OUT" | grep -n -m1 '^agentjail: violation: .*\.envrc.* during the run; moved aside at once' | cut -d: -f1)
	done_at=$(printf '%s\n' "$OUT" | grep -n -m1 '^command-done' | cut -d: -f1)
	ok $(( ${first:-0} > 0 && ${done_at:-0} > ${first:-0} ? 0 : 1 )) \
		"$who: on a terminal the live report is a line of its own, before the command ends"

	# --- a move aside that cannot succeed: loud, and the run fails ---------------------------
	aj_fresh_ws "$who"
	rm -rf "${STATE:?}"/quarantine
	mkdir -p "$STATE"
	touch "$STATE/quarantine" # the quarantine cannot be made: nothing can be moved into it
	aj_chown "$STATE"
	aj_run "$who" -- run -- sh -c 'echo x > .envrc'
	is "$RC" 125 "$who: a violation that cannot be moved aside: exit 125 though the command exited 0"
	like "$ERR" 'could not undo a violation.*\.envrc' "$who: … stderr says so and names the path"
	like "$ERR" 'Not a directory' "$who: … with the error"
	rm -f "$STATE/quarantine"
done

done_testing
