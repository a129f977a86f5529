#!/bin/bash
# Why a request did not get through, said where the user looks (issue 26, items 2 and 3):
# - a denied host's reason and fix are on the line at the end of the run (the first two hosts
#   whole, then "and N more" with the log to read), e.g. an allowed name that resolves to a
#   refused address names --map-host; `agentjail log` on a narrow terminal (tmux) shows the
#   reason whole, on lines of its own;
# - allowed requests whose upstream failed (the name did not resolve, the connect failed) are
#   counted apart, not "ok": the end line, `sessions` (NET), `show`, `log` (FAIL, "failed" in
#   JSON) and the TUI's detail pane.
# Injected events (test builds) check the formatting and the store; real runs through the proxy
# (curl) check what the proxy records. As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

EV=$AJ_TMP/events-fail.jsonl
cat >"$EV" <<'JSON'
{"proto":"connect","host":"api.example.com","port":443,"allowed":true,"rule":"*.example.com","addr":"203.0.113.7","bytes_up":1,"bytes_down":2,"dur_ms":4}
{"proto":"connect","host":"pypi.org","port":443,"allowed":true,"failed":true,"rule":"pypi.org","error":"could not resolve: Domain name not found"}
{"proto":"connect","host":"pypi.org","port":443,"allowed":true,"failed":true,"rule":"pypi.org","error":"could not resolve: Domain name not found"}
{"proto":"http","host":"files.example","port":80,"allowed":true,"failed":true,"rule":"files.example","error":"connect: Connection refused"}
{"proto":"dns","host":"pypi.org","port":0,"allowed":true,"failed":true,"rule":"pypi.org","error":"could not resolve: Domain name not found"}
{"proto":"connect","host":"registry.npmjs.org","port":443,"allowed":false,"rule":"registry.npmjs.org:443 resolves to 10.9.8.7 (private), which is refused (add --map-host registry.npmjs.org=ADDR to allow that address)"}
JSON
chmod 0644 "$EV"
NL=$'\n'
REASON='registry\.npmjs\.org:443 resolves to 10\.9\.8\.7 \(private\), which is refused \(add --map-host registry\.npmjs\.org=ADDR to allow that address\)'

HAVE_TMUX=
command -v tmux >/dev/null 2>&1 && HAVE_TMUX=1
HAVE_CURL=
command -v curl >/dev/null 2>&1 && HAVE_CURL=1
# tm ARGS… — tmux on WHO's own server, as WHO
tm() { aj_tmux "$@"; }
# in_tmux NAME WIDTH HEIGHT ERE CMD… — CMD in a fresh WIDTHxHEIGHT pane (WHO's workspace and
# state), until the pane shows ERE (10 s at most); SCREEN holds the last capture
in_tmux() {
	local name=$1 width=$2 height=$3 want=$4 q i; shift 4
	q=$(printf '%q ' env -i -C "$WS" PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME" \
		LANG=C.UTF-8 TERM=screen AGENTJAIL_STATE_DIR="$STATE" "$@")
	tm kill-session -t "$name" 2>/dev/null
	tm -f /dev/null new-session -d -s "$name" -x "$width" -y "$height" "$q; exec sleep 600"
	AJ_PIDS+=("$(tm display-message -p '#{pid}')")
	for ((i = 0; i < 200; i++)); do
		SCREEN=$(tm capture-pane -p -t "$name" 2>/dev/null)
		grep -Eq -- "$want" <<<"$SCREEN" && return 0
		sleep 0.05
	done
	return 1
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# --- the end of the run -----------------------------------------------------------------
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NET_EVENTS="$EV" -- run -- true
	rc_is 0 "$who: a run with failed and denied requests exits 0"
	like "$ERR" "(^|$NL)agentjail: denied 1 connection: $REASON($NL|\$)" \
		"$who: the denied line carries the reason and the fix (--map-host)"
	like "$ERR" "(^|$NL)agentjail: 5 allowed, 4 failed upstream: pypi\\.org:443 ×2 could not resolve: Domain name not found; files\\.example:80 connect: Connection refused; and 1 more \\(agentjail log [0-9a-f]{8}\\)" \
		"$who: allowed requests whose upstream failed are counted apart, the first two with why"

	# --- sessions, show, log ------------------------------------------------------------------
	aj_run "$who" -- sessions --json
	ID=$(py "d[0]['id']")
	is "$(py "(d[0]['net_allowed'], d[0]['net_failed'], d[0]['net_denied'])")" "(5, 4, 1)" \
		"$who: sessions --json: allowed, failed, denied"
	aj_run "$who" -e COLUMNS=200 -- sessions
	like "$OUT" '1 ok, 4 failed, 1 denied +- +true' "$who: sessions: NET says failed, not ok"
	aj_run "$who" -- show "$ID"
	like "$OUT" $'\nnetwork +5 allowed, 4 failed upstream \\(pypi\\.org:443 ×2 could not resolve: Domain name not found; files\\.example:80 connect: Connection refused; pypi\\.org \\(dns\\) could not resolve: Domain name not found\\), 1 denied \\(registry\\.npmjs\\.org:443\\)' \
		"$who: show: the failed requests apart, with their errors"
	aj_run "$who" -- show "$ID" --json
	is "$(py "(d['net_failed'], d['net_failed_by_host'][0], d['net_denied_by_host'][0]['reason'].endswith('=ADDR to allow that address)'))")" \
		"(4, {'host': 'pypi.org', 'port': 443, 'count': 2, 'reason': 'could not resolve: Domain name not found'}, True)" \
		"$who: show --json: failed by host with the error, denied with the reason"
	aj_run "$who" -- log "$ID"
	is "$(grep -c ' FAIL ' <<<"$OUT")" 4 "$who: log: FAIL for each failed request"
	like "$OUT" 'connect +FAIL +pypi\.org:443 +- .*error: could not resolve: Domain name not found' \
		"$who: ... with the error"
	like "$OUT" 'connect +ALLOW +api\.example\.com:443' "$who: ... ALLOW for the one that went through"
	aj_run "$who" -- log "$ID" --json
	is "$(pyl "[x['failed'] for x in d]")" "[False, True, True, True, True, False]" \
		"$who: log --json: failed true for those only"
	is "$(pyl "[x['action'] for x in d]")" "['allow', 'allow', 'allow', 'allow', 'allow', 'deny']" \
		"$who: ... and they stay allowed"

	# --- a narrow terminal: log cuts no reason; the TUI shows failed apart ----------------------
	if [ -z "$HAVE_TMUX" ]; then
		skip "$who: log in an 80-column terminal keeps the reason whole" "tmux is not installed"
		skip "$who: the TUI's detail pane" "tmux is not installed"
	else
		in_tmux log 80 40 'LOG-DONE' sh -c "\"$AJ_BIN/agentjail\" log $ID; echo LOG-DONE"
		joined=$(grep -v '^$' <<<"$SCREEN" | sed 's/^ *//' | tr '\n' ' ')
		like "$joined" "$REASON" "$who: log in an 80-column terminal keeps the reason and fix whole" ||
			diag "$SCREEN"
		wide=0
		while IFS= read -r l; do [ ${#l} -gt 80 ] && wide=1; done <<<"$SCREEN"
		is "$wide" 0 "$who: ... every line within the 80 columns"
		tm kill-session -t log 2>/dev/null
		in_tmux tui 80 24 'network +5 allowed, 4 failed upstream' "$AJ_BIN/agentjail" tui
		ok $? "$who: the TUI's detail pane says 5 allowed, 4 failed upstream" || diag "$SCREEN"
		tm send-keys -t tui q
		tm kill-server 2>/dev/null
	fi

	# --- through the real proxy -------------------------------------------------------------
	if [ -z "$HAVE_CURL" ]; then
		skip "$who: real requests through the proxy" "curl is not installed"
	else
		# an allowed name the host resolves to loopback (/etc/hosts): denied after the lookup
		aj_run "$who" -- run --allow-domain localhost -- \
			curl -sS -m 10 -o /dev/null --noproxy '' -x http://127.0.0.1:3128 https://localhost/
		like "$ERR" "(^|$NL)agentjail: denied 1 connection: localhost:443 resolves to 127\.0\.0\.1 \(loopback\), which is refused \(add --map-host localhost=ADDR to allow that address\)($NL|\$)" \
			"$who: an allowed name resolving to loopback: the end line says why and --map-host"
		# an allowed name that does not resolve (.invalid never does): failed upstream
		aj_run "$who" -- run --allow-domain nonexistent.invalid -- \
			curl -sS -m 20 -o /dev/null https://nonexistent.invalid/
		like "$ERR" "(^|$NL)agentjail: 1 allowed, 1 failed upstream: nonexistent\.invalid:443 (could not resolve: |timeout resolving the name)" \
			"$who: an allowed name that does not resolve: counted as failed upstream, with why"
		aj_run "$who" -- sessions --json
		is "$(py "(d[0]['net_allowed'], d[0]['net_failed'], d[0]['net_denied'])")" "(1, 1, 0)" \
			"$who: ... and recorded so"
	fi
done
aj_skip_missing_whos "failed and denied requests"
done_testing
