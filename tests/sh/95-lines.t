#!/usr/bin/env bash
# The start and end lines of a jailed session (issue 16, stumbles 2 and 9): on a terminal, one
# line at the start (policy, workspace, session id, that ~ and /tmp are discarded) and one at the
# end (status, session id), on stderr; none with --quiet, none when stderr is not a terminal (a
# script's captured output stays the command's own). After Ctrl-C the prompt starts on a line
# of its own, with --quiet too.
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/ptylib.sh"

if [ -z "$have_py" ]; then
	skip "terminal tests" "python3 is not installed (needed by tests/helpers/ptydrive.py)"
	done_testing
fi

SID_RE='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_wrapper "$who"

	# --- on a terminal: the two lines ------------------------------------------------------
	pd "lines-$who" 'expect:^inside\n' wait -- "$W" run -- sh -c 'echo inside; exit 3'
	pd_exit_is 3 "$who: the command's status is kept"
	pd_text_like "^agentjail: jail fs workspace-write, net off, workspace $WS, session $SID_RE; ~ and /tmp are private and discarded\$" \
		"$who: a start line names the policy, the workspace and the session id"
	pd_text_like "^agentjail: end: exited 3, session $SID_RE\$" \
		"$who: an end line gives the status and the session id"
	start=$(grep -n '^agentjail: jail' "$PD_TR" | head -n1 | cut -d: -f1)
	inside=$(grep -n '^inside' "$PD_TR" | head -n1 | cut -d: -f1)
	ok "$([ -n "$start" ] && [ -n "$inside" ] && [ "$start" -lt "$inside" ]; echo $?)" \
		"$who: … the start line comes before the command's output"

	# --- --quiet: neither ------------------------------------------------------------------
	pd "quiet-$who" 'expect:^inside\n' wait -- "$W" run --quiet -- sh -c 'echo inside'
	pd_exit_is 0 "$who: --quiet runs the command"
	ok "$(grep -q '^agentjail:' "$PD_TR"; [ $? = 1 ]; echo $?)" \
		"$who: --quiet prints neither line"

	# --- stderr not a terminal: neither (scripts stay quiet) ------------------------------
	aj_run "$who" -- run -- sh -c 'echo out; echo err >&2'
	rc_is 0 "$who: a run with its output captured"
	is "$OUT" "out" "$who: … stdout is the command's own"
	is "$ERR" "err" "$who: … and so is stderr (no start or end line off a terminal)"

	# --- stumble 9: Ctrl-C leaves the prompt on a line of its own --------------------------
	for q in "" --quiet; do
		pd "ctrlc-$who$q" 'expect:^ready\n' 'sleep:0.3' 'send:\x03' wait -- \
			"$W" run $q -- sh -c 'echo ready; sleep 100'
		pd_exit_is 130 "$who${q:+ $q}: Ctrl-C ends the run (130)"
		tailc=$(awk '/\^C/{f=1} f' "$PD_TR" | tail -c 200)
		is "$(tail -c 1 "$PD_TR" | od -An -tx1 | tr -d ' ')" 0a \
			"$who${q:+ $q}: … the terminal's output ends with a newline"
		unlike "$(tr '\n' '~' <"$PD_TR")" '\^C[^~]' \
			"$who${q:+ $q}: … nothing follows the echoed ^C on its line"
		[ -z "$q" ] && like "$tailc" "agentjail: end: killed by SIGINT \\(status 130\\)" \
			"$who: … the end line says it was interrupted"
	done
done

done_testing
