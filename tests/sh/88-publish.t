#!/usr/bin/env bash
# --publish [HOSTPORT:]PORT (doc/design.md §4, "Dev servers"): `python3 -m http.server` in the
# jail is fetched from the host on 127.0.0.1:HOSTPORT, under --net off and --net allow, over the
# jail's 127.0.0.1 or ::1; the jail's other loopback ports (and PORT itself, when HOSTPORT
# differs) are not reachable from the host; each connection is a `publish` net event; a
# HOSTPORT already in use stops the run (exit 2, naming it) before anything starts; --net on
# with --publish is refused; the landlock backend refuses it. As root and as an unprivileged
# user.
#
# AJ_PUBLISH_UNDER_TEST=on runs the same checks with --net on instead of --publish: the jail's
# other ports are then reachable from the host, which the reachability checks must catch (that
# is how they were first seen to fail).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || bail "python3 is missing (scripts/deps.sh installs it)"
command -v curl >/dev/null 2>&1 || bail "curl is missing (scripts/deps.sh installs it)"
aj_setup
UNDER=${AJ_PUBLISH_UNDER_TEST:-publish}

# free_port — a TCP port nothing on the host's loopback listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# get URL — the body, or "FAILED rc=N" (curl's exit status: 7 = refused)
get() { curl -sS -m 5 "$1" 2>/dev/null || echo "FAILED rc=$?"; }

# serve WHO NETMODE BIND HP P1 P2 — a jail running two http.servers (P1 published on HP, P2 not)
# in the background until $WS/stop appears; waits until HP answers (sets JAILPID)
serve() {
	local who=$1 net=$2 bind=$3 hp=$4 p1=$5 p2=$6 i
	rm -f "$WS/stop"
	local flags=(--net "$net" --publish "$hp:$p1")
	[ "$UNDER" = on ] && flags=(--net on)
	aj_cmd "$who" -- run "${flags[@]}" -- sh -c \
		"python3 -m http.server $p1 --bind $bind >/dev/null 2>&1 & a=\$!; python3 -m http.server $p2 --bind $bind >/dev/null 2>&1 & b=\$!; while [ ! -e stop ]; do sleep 0.1; done; kill \$a \$b"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/serve.out" 2>"$AJ_TMP/serve.err" &
	JAILPID=$!
	AJ_PIDS+=("$JAILPID")
	local probe=http://127.0.0.1:$hp/page.html
	[ "$UNDER" = on ] && probe=http://127.0.0.1:$p1/page.html
	for i in $(seq 1 150); do
		[ "$(get "$probe")" = "published page" ] && return 0
		kill -0 "$JAILPID" 2>/dev/null || break
		sleep 0.1
	done
	diag "the jail's server never answered: $(cat "$AJ_TMP/serve.err")"
	return 1
}

stop_serving() {
	touch "$WS/stop"
	aj_chown "$WS/stop"
	wait "$JAILPID"
	RC=$?
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	echo "published page" >"$WS/page.html"
	aj_chown "$WS/page.html"

	for net in off allow; do
		for bind in 127.0.0.1 ::1; do
			hp=$(free_port) p1=$(free_port) p2=$(free_port)
			what="$who, --net $net, a server on the jail's $bind"
			serve "$who" "$net" "$bind" "$hp" "$p1" "$p2"
			ok $? "$what: it is fetched from the host on 127.0.0.1:HOSTPORT"
			is "$(get "http://127.0.0.1:$hp/page.html")" "published page" \
				"$what: ... again (a second connection)"
			like "$(get "http://127.0.0.1:$p2/page.html")" '^FAILED rc=7' \
				"$what: the jail's other loopback port is not reachable from the host"
			like "$(get "http://127.0.0.1:$p1/page.html")" '^FAILED rc=7' \
				"$what: nor the published port itself, but on HOSTPORT"
			stop_serving
			is "$RC" 0 "$what: the run ends as its command did"
		done
	done
	[ "$UNDER" = on ] && continue

	aj_run "$who" -- log --last --json
	like "$OUT" "\"proto\": ?\"publish\"" "$who: each connection is a net event of proto publish"
	like "$OUT" "\"rule\": ?\"$hp:$p1\"" "$who: ... naming the entry"
	like "$OUT" '"addr": ?"127\.0\.0\.1:[0-9]+"' "$who: ... and the host's client"

	# a host port in use: nothing runs
	busy=$(free_port)
	python3 -c "import socket, time; s = socket.socket(); s.bind(('127.0.0.1', $busy)); s.listen(); time.sleep(30)" &
	AJ_PIDS+=($!)
	for i in $(seq 1 50); do
		[ "$(get "http://127.0.0.1:$busy/" | head -c 6)" = FAILED ] || break
		python3 -c "import socket; s = socket.socket(); s.connect(('127.0.0.1', $busy))" 2>/dev/null && break
		sleep 0.05
	done
	rm -f "$WS/ran"
	aj_run "$who" -- run --publish "$busy:3000" -- touch ran
	rc_is 2 "$who: a HOSTPORT in use stops the run (exit 2)"
	like "$ERR" "127\.0\.0\.1:$busy.*in use|127\.0\.0\.1:$busy.*Address already in use" \
		"$who: ... naming the port"
	[ ! -e "$WS/ran" ]
	ok $? "$who: ... before the command ran"

	aj_run "$who" -- run --net on --publish 3000 -- true
	rc_is 2 "$who: --net on with --publish is refused"
	like "$ERR" "shares the host's network" "$who: ... saying why"
	aj_run "$who" -- run --publish 0 -- true
	rc_is 2 "$who: a port 0 is refused"
	aj_run "$who" -- run --publish 3000 --publish 3000:3001 -- true
	rc_is 2 "$who: the same host port twice is refused"
	aj_run "$who" -- run --backend landlock --publish 3000 -- true
	rc_is 2 "$who: the landlock backend refuses --publish"
	like "$ERR" "no network of its own" "$who: ... saying why"
done
aj_skip_missing_whos "--publish"
done_testing
