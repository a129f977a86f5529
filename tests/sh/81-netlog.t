#!/bin/bash
# Network decisions in the session store (doc/design.md §4, §5): `agentjail log` (text, --json,
# --last, --follow), the network line of `show`, the NET column of `sessions`, and the line of
# denied connections at the end of a run. The proxy's events are injected through the sink it
# calls (test builds: AGENTJAIL_TEST_NET_EVENTS at the start of the run, ..._END just before it
# ends), so these tests see the store and the commands, not the proxy.
. "$(dirname "$0")/lib.sh"
aj_setup

EV=$AJ_TMP/events.jsonl
cat >"$EV" <<'JSON'
{"proto":"connect","host":"api.example.com","port":443,"allowed":true,"rule":"*.example.com","addr":"203.0.113.7","bytes_up":1234,"bytes_down":56789,"dur_ms":420}
{"proto":"connect","host":"evil.example","port":443,"allowed":false,"rule":"evil.example:443 is not on the allow list (add --allow-domain evil.example)"}
{"proto":"http","host":"evil.example","port":443,"allowed":false,"rule":"evil.example:443 is not allowed"}
{"proto":"dns","host":"leak.example","port":0,"allowed":false,"rule":"leak.example:443 is not on the allow list (add --allow-domain leak.example)"}
{"proto":"socks","host":"x\u001b]0;pwned\u0007.example","port":80,"allowed":false,"rule":"\u001b[31mred\r\nforged line"}
JSON
EV_END=$AJ_TMP/events-end.jsonl
printf '%s\n' '{"proto":"connect","host":"late.example","port":8443,"allowed":false,"rule":"late"}' >"$EV_END"
chmod 0644 "$EV" "$EV_END"

tb() { aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NET_EVENTS="$EV" "$@"; }

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	tb -- run -- true
	rc_is 0 "$who: a run with network decisions exits 0"
	like "$ERR" '(^|\n)agentjail: denied 3 connections and 1 name lookup: evil\.example:443 ×2 is not on the allow list \(add --allow-domain evil\.example\); ' \
		"$who: the end of the run names what was denied, most frequent first, with the reason and fix"
	like "$ERR" '; leak\.example \(dns\) is not on the allow list \(add --allow-domain leak\.example\); and 1 more \(agentjail log [0-9a-f]{8}\)' \
		"$who: ... the denied lookup too, then the rest counted and where to see them"
	unlike "$ERR" $'\e' "$who: ... a hostile host name reaches the terminal cleaned"
	is "$(grep -c 'denied' <<<"$ERR")" 1 "$who: ... on one line"
	aj_run "$who" -- sessions --json
	ID=$(py "d[0]['id']")
	is "$(py "(d[0]['net_allowed'], d[0]['net_denied'])")" "(1, 4)" \
		"$who: sessions --json: the counts"

	# log: text
	aj_run "$who" -- log "${ID:0:8}"
	rc_is 0 "$who: log ID-PREFIX"
	like "$OUT" '^TIME +PROTO +ACTION +HOST +ADDR +UP +DOWN +TOOK +RULE / REASON' "$who: ... a header"
	is "$(grep -c 'ALLOW\|DENY' <<<"$OUT")" 5 "$who: ... a line per decision"
	like "$OUT" 'connect +ALLOW +api\.example\.com:443 +203\.0\.113\.7 +1\.2K +55K +0\.4s +\*\.example\.com' \
		"$who: ... allowed: host:port, address, bytes, duration, rule"
	like "$OUT" 'dns +DENY +leak\.example \(dns\) +- .*leak\.example:443 is not on the allow list' \
		"$who: ... denied: the reason"
	unlike "$OUT" $'\e' "$who: ... no escape sequence from the jail reaches the terminal"
	is "$(grep -c 'forged line' <<<"$OUT")" 1 "$who: ... a CR LF in a reason does not forge a line"
	like "$(grep 'forged line' <<<"$OUT")" 'socks +DENY' "$who: ... it stays on its own line"

	# log --json: JSON lines with stable keys
	aj_run "$who" -- log "$ID" --json
	rc_is 0 "$who: log --json"
	is "$(pyl 'len(d)')" 5 "$who: ... one object per line"
	is "$(pyl "sorted(d[0].keys())")" \
		"['action', 'addr', 'at_ms', 'attempt', 'bytes_down', 'bytes_up', 'dur_ms', 'error', 'failed', 'host', 'port', 'proto', 'rule', 'seq', 'session', 'type']" \
		"$who: ... the keys"
	is "$(pyl "(d[0]['type'], d[0]['session'] == '$ID', d[0]['action'], d[0]['bytes_down'], d[1]['action'], d[3]['proto'], d[3]['port'])")" \
		"('net', True, 'allow', 56789, 'deny', 'dns', 0)" "$who: ... the values"
	is "$(pyl "d[4]['host']")" "$(printf 'x\e]0;pwned\a.example')" \
		"$who: ... JSON keeps the host exactly (escaped by JSON, not altered)"

	# --last and the default: the newest session of this workspace
	aj_run "$who" -- log --last --json
	is "$(pyl "d[0]['session']")" "$ID" "$who: log --last: the newest session"
	aj_run "$who" -- log
	like "$OUT" 'api\.example\.com:443' "$who: log without ID: the newest session"

	# show and sessions
	aj_run "$who" -- show "$ID"
	like "$OUT" $'\nnetwork +1 allowed, 4 denied \\(evil\\.example:443 ×2, ' "$who: show: the network line"
	aj_run "$who" -- show "$ID" --json
	is "$(py "(d['net_allowed'], d['net_denied'], d['net_denied_by_host'][0])")" \
		"(1, 4, {'host': 'evil.example', 'port': 443, 'count': 2, 'reason': 'evil.example:443 is not on the allow list (add --allow-domain evil.example)'})" \
		"$who: show --json: counts, denied by host with the first reason"
	aj_run "$who" -e COLUMNS=120 -- sessions
	like "$OUT" $'^ID +STARTED +TOOK +STATUS +POLICY +NET +PROFILE +COMMAND\n' "$who: sessions: a NET column"
	like "$OUT" '1 ok, 4 denied +- +true' "$who: ... with the counts"

	# a session without decisions: said, and no NET column when none has any
	aj_run "$who" -C "$EXTRA" -- run -- true
	aj_run "$who" -C "$EXTRA" -- log --last
	rc_is 0 "$who: log of a session without decisions"
	like "$OUT" 'no network decisions or violations recorded' "$who: ... says so"
	aj_run "$who" -C "$EXTRA" -- sessions
	unlike "$OUT" 'NET' "$who: sessions: no NET column when no session has decisions"
	aj_run "$who" -C "$EXTRA" -- show "$(aj_run "$who" -C "$EXTRA" -- sessions --json; py "d[0]['id']")"
	unlike "$OUT" $'\nnetwork ' "$who: show: no network line without decisions"

	# violations are listed with the decisions
	tb -- run -- sh -c 'echo x > .envrc'
	aj_run "$who" -- log --last
	like "$OUT" "VIOL +- +- +- +- +- +violation\.protected_path $WS/\.envrc: appeared" \
		"$who: log: a violation, in order, its text under RULE / REASON (not HOST)"
	aj_run "$who" -- log --last --json
	is "$(pyl "[x['type'] for x in d]")" "['net', 'net', 'net', 'net', 'net', 'violation']" \
		"$who: log --json: the violation after the decisions"
	is "$(pyl "d[5]['detail']['path']")" "$WS/.envrc" "$who: ... with its detail"

	# --follow: prints as the session goes on, stops when it ends, with the last events. The
	# session lasts until the test has looked (a stop file, 30 s at most): a fixed 3 s ended
	# before log --follow was even started when other test files kept the machine busy
	STOP=$WS/.netlog-stop
	rm -f "$STOP"
	aj_cmd "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NET_EVENTS="$EV" \
		-e AGENTJAIL_TEST_NET_EVENTS_END="$EV_END" -- run -- \
		sh -c 'i=0; while [ ! -e "$1" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done' sh "$STOP"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/run.out" 2>"$AJ_TMP/run.err" &
	RUN_PID=$!
	AJ_PIDS+=("$RUN_PID")
	for _ in $(seq 1 250); do
		aj_run "$who" -- sessions --json
		[ "$(py "d[0]['status']")" = running ] && break
		sleep 0.04
	done
	FID=$(py "d[0]['id']")
	aj_cmd "$who" -- log "$FID" --follow --json
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/follow.out" 2>"$AJ_TMP/follow.err" &
	FOLLOW_PID=$!
	AJ_PIDS+=("$FOLLOW_PID")
	# what was recorded so far comes while the session runs, however busy the machine (a
	# fixed second was too short beside other test files)
	for _ in $(seq 1 100); do
		sleep 0.1
		OUT=$(cat "$AJ_TMP/follow.out")
		[ "$(pyl 'len(d)')" = 5 ] && break
	done
	check "$who: log --follow is still waiting while the session runs" kill -0 "$FOLLOW_PID"
	OUT=$(cat "$AJ_TMP/follow.out")
	is "$(pyl 'len(d)')" 5 "$who: ... having printed what was recorded so far"
	aj_host touch "$STOP"
	wait "$RUN_PID"
	for _ in $(seq 1 50); do kill -0 "$FOLLOW_PID" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$FOLLOW_PID" 2>/dev/null; then
		ok 1 "$who: log --follow ends within 5 s of the session"
		kill "$FOLLOW_PID"
	else
		ok 0 "$who: log --follow ends within 5 s of the session"
	fi
	wait "$FOLLOW_PID"
	is "$?" 0 "$who: ... with status 0"
	OUT=$(cat "$AJ_TMP/follow.out")
	is "$(pyl "(len(d), d[-1]['host'], d[-1]['port'])")" "(6, 'late.example', 8443)" \
		"$who: ... having printed the events written just before the end"
	like "$(cat "$AJ_TMP/run.err")" 'denied 4 connections and 1 name lookup' \
		"$who: the run's denied line counts the last events too"
	aj_run "$who" -- log "$FID" --follow
	rc_is 0 "$who: log --follow of an ended session prints it and ends"
	is "$(grep -c 'ALLOW\|DENY' <<<"$OUT")" 6 "$who: ... all of it"

	# a flood is counted, not all recorded: the store cannot be used to fill the host's disk
	FLOOD=$AJ_TMP/flood.jsonl
	[ -e "$FLOOD" ] || python3 -c 'import json
for i in range(100500):
    print(json.dumps({"proto": "dns", "host": "f%d.example" % (i % 300), "port": 0, "allowed": False, "rule": "no"}))' >"$FLOOD"
	chmod 0644 "$FLOOD"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NET_EVENTS="$FLOOD" -- run -- true
	rc_is 0 "$who: a run with 100500 denied lookups exits 0"
	is "$(grep -c 'more than 100000 network decisions in this run: the rest are counted, not recorded' <<<"$ERR")" 1 \
		"$who: ... one warning that the rest are not recorded"
	like "$ERR" 'denied 100500 name lookups: f[0-9]+\.example \(dns\) ×[0-9]+ no; f[0-9]+\.example \(dns\) ×[0-9]+ no; and [0-9]+ more' \
		"$who: ... the denied line counts them all"
	aj_run "$who" -- sessions --json
	is "$(py "d[0]['net_denied']")" 100000 "$who: ... 100000 are recorded"

	# errors
	aj_run "$who" -- log --help
	rc_is 0 "$who: log --help"
	like "$OUT" '^usage: agentjail log \[ID \| --last\] \[--json\] \[--follow\]' "$who: ... the usage"
	aj_run "$who" -- log ffffffff-0000
	rc_is 2 "$who: log of an unknown id"
	like "$ERR" 'no such session: ffffffff-0000' "$who: ... names the id"
	aj_run "$who" -- log "$ID" --last
	rc_is 2 "$who: log ID --last is a usage error"
	aj_run "$who" -- log --bogus
	rc_is 2 "$who: log with an unknown option"
	like "$ERR" 'unexpected argument --bogus' "$who: ... names it"
	aj_run "$who" -C "$HOMEDIR" -- log --last
	rc_is 2 "$who: log --last where no session ran"
	like "$ERR" 'no session in this workspace' "$who: ... says so"
done
aj_skip_missing_whos "network log"
done_testing
