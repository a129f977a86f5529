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
ll_abi=$("$PROBE" landlock-abi 2>/dev/null)
[[ $ll_abi =~ ^[0-9]+$ ]] || ll_abi=0
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

	# --- --quiet: no allow-list banner either (issue 26, item 16) -------------------------
	pd "quiet-allow-$who" 'expect:^inside\n' wait -- "$W" run --quiet --net allow \
		--allow-domain example.org -- sh -c 'echo inside'
	pd_exit_is 0 "$who: --quiet --net allow runs the command"
	ok "$(grep -q '^agentjail:' "$PD_TR"; [ $? = 1 ]; echo $?)" \
		"$who: … and prints no network banner"
	pd "allow-$who" 'expect:^inside\n' wait -- "$W" run --net allow --allow-domain example.org \
		-- sh -c 'echo inside'
	pd_text_like '^agentjail: network: allow-list \(1 domain: example.org\)' \
		"$who: … which it prints without --quiet"

	# --- the landlock backend: the same two lines, saying what it is (issue 26, item 16) --
	if [ "$ll_abi" -ge 3 ]; then
		pd "ll-$who" 'expect:^inside\n' wait -- "$W" run --backend landlock -- sh -c 'echo inside; exit 4'
		pd_exit_is 4 "$who: --backend landlock on a terminal keeps the status"
		pd_text_like "^agentjail: landlock sandbox fs workspace-write, net off, workspace $WS, session $SID_RE; /tmp is private and discarded, ~ out of reach\$" \
			"$who: … a start line names the backend, the policy, the workspace and the session"
		pd_text_like "^agentjail: end: exited 4, session $SID_RE\$" "$who: … an end line"
		pd "ll-quiet-$who" 'expect:^inside\n' wait -- "$W" run --backend landlock --quiet -- sh -c 'echo inside'
		ok "$(grep -q '^agentjail:' "$PD_TR"; [ $? = 1 ]; echo $?)" "$who: … neither with --quiet"
	else
		skip "$who: --backend landlock's start and end lines" "the kernel's Landlock ABI is $ll_abi (3 or later needed)"
	fi

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
