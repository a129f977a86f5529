#!/bin/bash
# agentjail tui, driven for real in tmux (send-keys / capture-pane), as root and as the
# unprivileged user (each with a tmux server of its own, socket in its test directory): the list
# shows what `agentjail run` recorded and refreshes when another process adds a session; a session
# made in the New Session dialog runs jailed with the chosen policy (checked in the store); the
# filter and delete; the Sandboxed switch disabled with the reason when bwrap is missing; resize;
# q and SIGTERM give the terminal back as it was (stty, the alternate screen left); a --fs review
# session's change set shown (v) and applied (a, then y).
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed (scripts/deps.sh installs it)"
	exit 0
fi
aj_setup

# tm ARGS… — tmux on WHO's own server, as WHO
tm() { aj_tmux "$@"; }

screen() { tm capture-pane -p -t tui 2>/dev/null; }

# wait_for ERE [SECONDS] — until the pane shows it (default 10 s); SCREEN holds the last capture
wait_for() { aj_tmux_wait tui "$@"; }

# start_tui [NAME=VALUE…] — agentjail tui in a fresh 80x24 tmux session "tui", in WHO's
# workspace; the pane records `stty -a` before and after, and the exit status (TUI-EXIT=, said
# once stty.after is written: the test reads it when it sees that)
start_tui() {
	tm kill-server 2>/dev/null
	# a server of its own each time: a killed server removes its socket when it is done
	# exiting, which on a loaded machine came after the next one had made it (the new server
	# then vanished mid-test: "no server running")
	TUI_N=$((${TUI_N:-0} + 1))
	export AJ_TMUX_SOCK=$AJ_TMP/$AJ_WHO/tmux-$TUI_N.sock
	local d=$AJ_TMP/$AJ_WHO q
	rm -f "$d/stty.before" "$d/stty.after" "$d/tui.rc"
	q=$(printf '%q ' env -i -C "$WS" PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME" \
		LANG=C.UTF-8 TERM=screen AGENTJAIL_STATE_DIR="$STATE" "$@" sh -c \
		'stty -a >"$0/stty.before"; "$1" tui; echo $? >"$0/tui.rc"; stty -a >"$0/stty.after"; echo "TUI-EXIT=$(cat "$0/tui.rc")"; exec sleep 600' \
		"$d" "$AJ_BIN/agentjail")
	tm -f /dev/null new-session -d -s tui -x 80 -y 24 "$q"
	AJ_PIDS+=("$(tm display-message -p '#{pid}')") # the server, killed at the end
}

# to_command — the dialog's agent field moved to "command…" (Left from the agent it starts on,
# which is the first installed one: whatever the host has)
to_command() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		screen | grep -Eq '< command(…|\.\.\.) >' && return 0
		tm send-keys -t tui Left
		sleep 0.1
	done
	diag "the dialog's agent field never showed command…"
	return 1
}

# new_command CMD — a New Session dialog for the command CMD (not yet started: Enter does)
new_command() {
	tm send-keys -t tui n
	wait_for 'New session'
	to_command
	tm send-keys -t tui Down
	tm send-keys -t tui -l "$1"
}

# the terminal as it was: same stty, the alternate screen left
restored() { # DESC
	local d=$AJ_TMP/$AJ_WHO
	wait_for 'TUI-EXIT=' 5 || { ok 1 "$1"; return; }
	# the size may differ (a resize): every mode and control character must not
	local size='s/rows [0-9]+; columns [0-9]+;//'
	[ "$(sed -E "$size" "$d/stty.before")" = "$(sed -E "$size" "$d/stty.after")" ]
	ok $? "$1: stty -a the same as before (but for the size)" ||
		diff "$d/stty.before" "$d/stty.after" >&2
	is "$(tm display-message -p -t tui '#{alternate_on}')" 0 "$1: the alternate screen is left"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_run "$who" -- run -- sh -c 'exit 3'
	rc_is 3 "$who: a session recorded by agentjail run"
	aj_run "$who" -- sessions --json
	first=$(py "d[0]['id']")

	start_tui
	wait_for 'agentjail sessions \(1\)' && wait_for 'exited 3 .* sh -c'
	ok $? "$who: the list shows the session agentjail run recorded"
	like "$SCREEN" 'session +[0-9a-f-]{36}' "$who: the detail pane shows the selected session"
	like "$SCREEN" 'bwrap +\[' "$who: ... with its bwrap argv"
	like "$(sed -n 24p <<<"$SCREEN")" 'q quit' "$who: the key line is on the 24th line of 80x24"
	tm capture-pane -e -p -t tui | grep -Eq $'\e\\[([0-9;]*;)?[34][0-7]m'
	ok $? "$who: colors without NO_COLOR"

	aj_run "$who" -- run -- true
	wait_for 'agentjail sessions \(2\)'
	ok $? "$who: the list refreshes when another process adds a session"

	# New Session: "command…" (Left from the first agent), read-only, network off
	tm send-keys -t tui n
	wait_for 'New session' && wait_for 'Sandboxed +\[x\] on'
	ok $? "$who: n opens the New Session dialog, sandboxed by default"
	like "$SCREEN" 'Allow-list +[a-z.*]+anthropic' \
		"$who: ... the first agent's allow-list pre-filled from its profile"
	to_command
	tm send-keys -t tui Down
	tm send-keys -t tui -l "sh -c 'echo jailed >tui-file; exit 7'"
	tm send-keys -t tui Down Down Down Space Down
	wait_for '\(\*\) Read-only' && wait_for '\(\*\) Off'
	ok $? "$who: the dialog shows read-only and network off"
	tm send-keys -t tui Enter
	wait_for 'exit status 7; press Enter' 20
	ok $? "$who: the session ran on the terminal and its failure stays on screen until Enter"
	tm send-keys -t tui Enter
	wait_for 'agentjail sessions \(3\)'
	ok $? "$who: back in the list, with the new session"
	aj_run "$who" -- sessions --json
	id=$(py "d[0]['id']")
	aj_run "$who" -- show "$id" --json
	is "$(py "(d['argv'], d['policy']['fs'], d['policy']['net'], d['status'], d['exit_status'])")" \
		"(['sh', '-c', 'echo jailed >tui-file; exit 7'], 'read-only', 'off', 'exited', 7)" \
		"$who: the store has the dialog's session with the chosen policy"
	is "$(py "d['bwrap_argv'] is not None and '--unshare-all' in d['bwrap_argv']")" True \
		"$who: ... run in a jail (its bwrap argv recorded)"
	[ ! -e "$WS/tui-file" ]
	ok $? "$who: ... whose read-only workspace kept the command from writing"

	# a session whose agentjail is killed (its terminal left raw): the TUI comes back; the
	# terminal's modes are checked at the end (q)
	new_command "sleep 30"
	tm send-keys -t tui Enter
	for i in $(seq 1 200); do
		pid=$(pgrep -U "$RUN_UID" -f -x "agentjail run --workspace $WS .*-- sleep 30" | head -1)
		[ -n "$pid" ] && break
		sleep 0.05
	done
	sleep 0.3 # in raw mode by now
	kill -KILL "$pid"
	wait_for 'exit status 137; press Enter'
	ok $? "$who: a session whose agentjail was killed gives the terminal back to the TUI"
	tm send-keys -t tui Enter
	wait_for 'agentjail sessions \(4\)' && wait_for 'lost +- +rw.off .*sleep 30'
	ok $? "$who: ... and lists that session as lost"

	# filter, then delete with a confirmation
	tm send-keys -t tui /
	tm send-keys -t tui -l 'tui-file'
	tm send-keys -t tui Enter
	wait_for '1 of 4, filter: tui-file'
	ok $? "$who: / filters the list"
	tm send-keys -t tui d
	wait_for 'Delete session'
	tm send-keys -t tui n
	wait_for 'not deleted'
	ok $? "$who: d asks first; n keeps the session"
	tm send-keys -t tui d
	wait_for 'Delete session' && tm send-keys -t tui y
	wait_for "removed $id"
	ok $? "$who: d then y removes it (as agentjail rm)"
	tm send-keys -t tui Escape
	wait_for 'agentjail sessions \(3\)'
	aj_run "$who" -- show "$id"
	rc_is 2 "$who: the deleted session is gone from the store"

	# Enter resumes the selected session (as agentjail resume), l shows its log
	tm send-keys -t tui End Enter
	wait_for 'exit status 3; press Enter' 20
	ok $? "$who: Enter resumes the selected session on the terminal"
	tm send-keys -t tui Enter
	wait_for 'resume finished: exit status 3'
	aj_run "$who" -- show "$first" --json
	is "$(py "d['attempts']")" 2 "$who: ... recorded as its second attempt"
	tm send-keys -t tui l
	wait_for 'network log of' && wait_for 'no network decisions|nothing recorded'
	ok $? "$who: l shows the session's network log"
	tm send-keys -t tui q
	wait_for 'agentjail sessions \(3\)'

	# resize
	tm resize-window -t tui -x 120 -y 30
	wait_for 'agentjail sessions \(3\)'
	is "$(screen | wc -l)" 30 "$who: resized to 120x30, the TUI redraws to the new size"
	like "$(screen | sed -n 30p)" 'q quit' "$who: ... the key line on the new last line"

	tm send-keys -t tui q
	restored "$who: q"
	is "$(cat "$AJ_TMP/$who/tui.rc")" 0 "$who: q exits 0"

	# SIGTERM: the terminal is given back too
	start_tui
	wait_for 'agentjail sessions'
	pid=$(pgrep -f -U "$RUN_UID" -x "$AJ_BIN/agentjail tui" | head -1)
	kill -TERM "$pid"
	restored "$who: SIGTERM"
	is "$(cat "$AJ_TMP/$who/tui.rc")" 143 "$who: SIGTERM exits 143"

	# bwrap unavailable: the switch disabled, the reason, doctor
	start_tui AGENTJAIL_BWRAP=/nonexistent/bwrap NO_COLOR=1
	wait_for 'agentjail sessions'
	! tm capture-pane -e -p -t tui | grep -Eq $'\e\\[([0-9;]*;)?[34][0-7]m'
	ok $? "$who: NO_COLOR: no colors"
	tm send-keys -t tui n
	wait_for 'disabled: sandboxing does not work here' && wait_for 'agentjail doctor'
	ok $? "$who: with bwrap missing the Sandboxed switch is disabled, with the reason and doctor"
	like "$SCREEN" '/nonexistent/bwrap' "$who: ... the reason names the missing bwrap"
	tm send-keys -t tui Down Down Down Space
	sleep 0.2
	unlike "$(screen)" 'Run WITHOUT a sandbox' "$who: ... it cannot be turned off"
	tm send-keys -t tui Escape q
	restored "$who: q after the dialog"

	# --- issue 26 item 7: a session that succeeds keeps its output on screen until Enter, and
	# is the one selected afterwards (l showed the previous row's log) -------------------------
	start_tui
	wait_for 'agentjail sessions \(3\)'
	new_command "sh -c 'echo tui-said-this'"
	tm send-keys -t tui Enter
	wait_for 'tui-said-this' 20 && wait_for 'exit status 0; press Enter'
	ok $? "$who: a session that exits 0 stays on screen until Enter"
	tm send-keys -t tui Enter
	wait_for 'agentjail sessions \(4\)'
	aj_run "$who" -- sessions --json
	new=$(py "d[0]['id']")
	wait_for "session +$new"
	ok $? "$who: … then the list selects the session just started"
	tm send-keys -t tui l
	wait_for "network log of ${new:0:8}"
	ok $? "$who: … so l shows its log, not the previous row's"
	tm send-keys -t tui q q
	restored "$who: q after a session"

	# --- issue 26 item 22: a POSIX locale gets ASCII, not "~@" for … and ·; the dialog starts on
	# an installed agent and marks the others -----------------------------------------------------
	fb=$AJ_TMP/$who-tuibin
	mkdir -p "$fb"
	for c in sh stty cat sleep; do ln -sf "$(command -v "$c")" "$fb/$c"; done
	printf '#!/bin/sh\necho codex-cli 0.0.1\n' >"$fb/codex"
	chmod 0755 "$fb" "$fb/codex"
	start_tui LANG=C PATH="$fb"
	wait_for 'agentjail sessions \(4\)'
	ok $? "$who: LANG=C: the TUI starts"
	like "$SCREEN" 'rw\.off' "$who: … the policy column in ASCII (rw.off)"
	like "$SCREEN" ' \.\.\.[^ ]*/ws ' "$who: … a long workspace cut with ... at its start"
	unlike "$SCREEN" '~@|M-' "$who: … and no multibyte character shown as ~@"
	tm send-keys -t tui n
	wait_for '< codex >'
	ok $? "$who: the dialog starts on codex, the one agent installed"
	tm send-keys -t tui Left
	wait_for '< claude \(not installed\) >'
	ok $? "$who: … and marks an agent that is not installed"
	tm send-keys -t tui Escape q
	restored "$who: q in a POSIX locale"

	# --- issue 30: a --fs review session's change set: its size, v diff, a apply ---------------
	aj_run "$who" -- run --fs review -- sh -c 'echo from-review > rv-file'
	start_tui
	wait_for 'agentjail sessions \(5\)' && wait_for 'review +1 entry pending'
	ok $? "$who: the detail pane shows a review session's pending change set"
	like "$SCREEN" 'v diff +a apply +x discard' "$who: … and its keys"
	tm send-keys -t tui v
	wait_for 'change set of' && wait_for '\+from-review'
	ok $? "$who: v shows its diff"
	# the change set rewritten after v showed it (as a jail still running could): a applies
	# nothing (apply --expect the digest v showed); v again, then a applies what it shows
	rvid=$(aj_run "$who" -- sessions --json >/dev/null; py 'd[0]["id"]')
	aj_host sh -c "echo from-review-later > '$STATE/review/$rvid/upper/rv-file'"
	tm send-keys -t tui q a
	wait_for 'Apply the change set of'
	ok $? "$who: a asks first"
	tm send-keys -t tui y
	wait_for 'not the one the diff showed'
	ok $? "$who: … and after v, applies nothing when the change set changed since"
	[ ! -e "$WS/rv-file" ]
	ok $? "$who: … nothing written"
	tm send-keys -t tui q v
	wait_for '\+from-review-later'
	tm send-keys -t tui q a
	wait_for 'Apply the change set of'
	tm send-keys -t tui y
	wait_for '1 change applied'
	ok $? "$who: y applies it"
	is "$(cat "$WS/rv-file" 2>/dev/null)" "from-review-later" "$who: … into the workspace, as v showed it"
	tm send-keys -t tui q q
	restored "$who: q after apply"
	tm kill-server 2>/dev/null
done
done_testing
