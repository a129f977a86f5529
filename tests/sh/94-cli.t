#!/usr/bin/env bash
# The command line as a new user meets it (issue 16): every command's --help, the wording of
# usage errors.
. "$(dirname "$0")/lib.sh"
aj_setup

# Nested parentheses: a "(" opened before the previous one closed.
nested() { awk '{ d = 0; for (i = 1; i <= length($0); i++) { c = substr($0, i, 1);
	if (c == "(") { if (d) { print "nested"; exit } d++ } else if (c == ")" && d) d-- } }'; }
# Repeated words: a word said twice in a row, or an option or path named twice.
repeated() { awk '{ n = split($0, w, /[ \t:;,()]+/); delete seen
	for (i = 1; i <= n; i++) { if (w[i] == "") continue
		if (i > 1 && w[i] == w[i - 1]) { print "twice: " w[i]; exit }
		if (w[i] ~ /^[-\/]/ && seen[w[i]]++) { print "again: " w[i]; exit } } }'; }

py() { printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>&1; }

# the commands of src/main.c's table (the __internal ones are not the user's)
mapfile -t CMDS < <(sed -n '/^} commands\[\] = {/,/^};/p' "$AJ_SRC/src/main.c" |
	grep -o '{"[a-z][a-z_-]*"' | tr -d '{"')
check "the command table of src/main.c is found" test "${#CMDS[@]}" -gt 10

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	# --- every command: --help prints usage, options and an example to stdout, exits 0 -------
	for c in "${CMDS[@]}"; do
		for h in --help -h; do
			aj_run "$who" -- "$c" "$h"
			rc_is 0 "$who: $c $h exits 0"
			like "$OUT" "^usage: " "$who: $c $h prints its usage to stdout"
			like "$OUT" "agentjail $c( |$)" "$who: $c $h names the command"
			like "$OUT" 'example' "$who: $c $h shows an example"
			is "$ERR" "" "$who: $c $h prints nothing on stderr"
		done
	done

	# --- a missing --rw/--ro path is an error naming it; a missing --hide path a warning -------
	for o in --rw --ro; do
		aj_run "$who" -- run "$o" /nonexistent/aj-typo$o -- "$P" exit 0
		rc_is 2 "$who: a missing $o path exits 2"
		like "$ERR" "^agentjail: .*/nonexistent/aj-typo$o" "$who: … naming the path"
		aj_run "$who" -- run --dry-run "$o" /nonexistent/aj-typo$o -- "$P" exit 0
		rc_is 2 "$who: … with --dry-run too"
	done
	aj_run "$who" -- run --hide /nonexistent/aj-typo-hide -- "$P" exit 0
	rc_is 0 "$who: a missing --hide path is not fatal"
	like "$ERR" '^agentjail: .*/nonexistent/aj-typo-hide' "$who: … but warned about, naming the path"
	aj_run "$who" -- run --hide "$WS" -- "$P" exit 0
	unlike "$ERR" 'hide' "$who: an existing --hide path is not warned about"

	# --- show lists the session's events with time, kind and detail --------------------------
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c 'echo x > .envrc'
	aj_run "$who" -- sessions --json
	SID=$(py "d[0]['id']")
	aj_run "$who" -- show "$SID"
	rc_is 0 "$who: show of a session with a violation"
	like "$OUT" "[0-9]{2}:[0-9]{2}:[0-9]{2} .*violation\.protected_path $WS/\.envrc: appeared" \
		"$who: show lists the violation with its time, kind and path"
	like "$OUT" "agentjail log $SID" "$who: … and points to agentjail log for the rest"
	aj_run "$who" -- show "$SID" --json
	is "$(py "d['events_detail'][0]['kind']")" "violation.protected_path" "$who: show --json: the events"
	is "$(py "d['events_detail'][0]['detail']['path']")" "$WS/.envrc" "$who: … with their detail"

	# --- quarantine: list what was moved aside, restore it (confirmed, never overwriting) -----
	MOVED=$(py "d['events_detail'][0]['detail']['moved_to']")
	aj_run "$who" -- quarantine
	rc_is 0 "$who: quarantine lists"
	like "$OUT" "$WS/\.envrc" "$who: … the original path"
	like "$OUT" "$MOVED" "$who: … and where it lies now"
	aj_run "$who" -- quarantine "$SID"
	like "$OUT" "$MOVED" "$who: quarantine ID lists that session's"
	aj_run "$who" -- quarantine restore "$MOVED"
	rc_is 2 "$who: restore without a terminal or --yes is refused"
	check "$who: … and restores nothing" test ! -e "$WS/.envrc"
	aj_run "$who" -- quarantine restore /etc/passwd --yes
	rc_is 2 "$who: restore of a path outside the quarantine is refused"
	aj_run "$who" -- run -- sh -c 'echo y > .envrc'
	aj_run "$who" -- sessions --json
	SID2=$(py "d[0]['id']")
	aj_run "$who" -- show "$SID2" --json
	MOVED2=$(py "d['events_detail'][0]['detail']['moved_to']")
	aj_run "$who" -- quarantine restore "$MOVED2" --yes
	rc_is 0 "$who: restore --yes"
	is "$(cat "$WS/.envrc" 2>&1)" "y" "$who: … puts the file back"
	check "$who: … and it is no longer in the quarantine" test ! -e "$MOVED2"
	aj_run "$who" -- quarantine restore "$MOVED" --yes
	rc_is 1 "$who: restore onto an existing path is refused"
	like "$ERR" "$WS/\.envrc" "$who: … naming it"
	is "$(cat "$WS/.envrc")" "y" "$who: … and the existing file is untouched"
	check "$who: … and the item stays in the quarantine" test -e "$MOVED"

	# --- small edges (stumble 11) -------------------------------------------------------------
	aj_run "$who" -- shim remove --dir "$AJ_TMP/no-shims-$who"
	rc_is 0 "$who: shim remove with nothing to remove"
	like "$OUT" 'no shim' "$who: … says so"
	aj_run "$who" -e AGENTJAIL_STATE_DIR=relative/state -- run -- "$P" exit 0
	rc_is 2 "$who: a relative AGENTJAIL_STATE_DIR is refused"
	like "$ERR" 'AGENTJAIL_STATE_DIR.*relative/state' "$who: … naming it"
	check "$who: … and nothing is made there" test ! -e "$WS/relative"
	aj_run "$who" -- resume "$SID"
	aj_run "$who" -- show "$SID"
	rows=$(printf '%s\n' "$OUT" | grep '^attempt ')
	is "$(printf '%s\n' "$rows" | awk '{ print index($0, " exited") }' | sort -u | wc -l)" 1 \
		"$who: show's attempt rows are aligned"

	# --- usage errors: one line each, worded once ----------------------------------------------
	while IFS= read -r args; do
		read -ra a <<<"$args"
		aj_run "$who" -- "${a[@]}"
		rc_is 2 "$who: $args exits 2"
		like "$ERR" '^agentjail: ' "$who: $args says why"
		is "$(printf '%s\n' "$ERR" | nested)" "" "$who: $args: no nested parentheses"
		is "$(printf '%s\n' "$ERR" | grep -c -e '((' -e ') (')" 0 "$who: $args: no '((' or ') ('"
		is "$(printf '%s\n' "$ERR" | repeated)" "" "$who: $args: no word repeated"
	done <<'LIST'
run --fs
run --net off
run --bogus-option -- true
run --workspace / -- true
run --dev /tmp -- true
run --rw /nonexistent/aj-typo -- true
run --fs nonsense -- true
show no-such-session-id
LIST

	# --- verify proves a local jail only ------------------------------------------------------
	aj_run "$who" -- verify --backend opensandbox
	rc_is 2 "$who: verify --backend opensandbox exits 2"
	like "$ERR" 'runs only in a local jail' "$who: … saying the battery proves a local jail only"

	# --- --version names the bubblewrap it would run and that one's version -----------------
	aj_run "$who" -- --version
	rc_is 0 "$who: --version exits 0"
	like "$OUT" '^agentjail [0-9]' "$who: --version names agentjail's version first"
	bv=$(bwrap --version 2>/dev/null)
	is "$(printf '%s\n' "$OUT" | grep -c -F "bwrap: $bv ($(command -v bwrap))")" 1 \
		"$who: --version names the bwrap found and its version ($bv)"
done
done_testing
