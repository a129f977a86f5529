#!/usr/bin/env bash
# The names inside a captured connection (doc/design.md §4, capture; issue 25 item 2): a client
# that knows of no proxy (every proxy variable unset) and connects by itself to an allowed name
# on a port that carries TLS (443, or a port an allow entry names: NAME:PORT/tls) must send a
# ClientHello naming that name, and on a port that carries HTTP (80, NAME:PORT/http) a request
# whose Host is that name; otherwise it is refused (a TLS access_denied alert, a 403) and the
# denial is logged with both names. Such a connection is relayed by agentjail (its socket leads
# to agentjail's listener on the host's loopback, which takes only the connections agentjail
# made); other ports stay direct (tests/sh/88-capture.t). Real clients in the jail: python's ssl
# (its hello in one write, or in 1-byte writes of 7-byte records), node's fetch and tls,
# python's http.client, curl, a static program (tests/helpers/capclient.c); and the real ports
# 443 and 80, on a loopback address of their own, when this test can bind them (root). As root
# and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

. "$(dirname "$0")/netlib.sh"
CAPC=$AJ_BUILD/tests/helpers/capclient
[ -x "$CAPC" ] || bail "missing $CAPC (make builds it)"

srv secure http --name secure --cert "$SRV/crt.pem" --key "$SRV/key.pem"
srv one http --name one
srv canary canary --bind 0.0.0.0
HOSTIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub(/\/.*/, "", $4); print $4; exit}')
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
CLOSED=$(free_port) # an allowed port of secure.test and one.test, judged, where nothing listens
SQUAT=$(free_port)  # a host port a handed-over socket must not be bound to

# Ports 443 and 80 themselves, on a loopback address of this run's own (other runs may hold
# 127.0.0.1's): root can bind them.
REAL=127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1)).$((RANDOM % 250 + 1))
REAL_OK=
if aj_is_root; then
	python3 "$H/netsrv.py" http --name real443 --cert "$SRV/crt.pem" --key "$SRV/key.pem" \
		--bind "$REAL" --port 443 >"$SRV/real443.out" 2>&1 &
	AJ_PIDS+=($!)
	python3 "$H/netsrv.py" http --name real80 --bind "$REAL" --port 80 >"$SRV/real80.out" 2>&1 &
	AJ_PIDS+=($!)
	for i in $(seq 1 250); do
		grep -q '^ready' "$SRV/real443.out" && grep -q '^ready' "$SRV/real80.out" && break
		sleep 0.02
	done
	grep -q '^ready 443' "$SRV/real443.out" && grep -q '^ready 80' "$SRV/real80.out" && REAL_OK=1
fi
REAL_WHY="ports 443 and 80 of $REAL could not be bound here ($(aj_is_root && cat "$SRV/real443.out" "$SRV/real80.out" | tail -n1 || echo 'not root'))"
diag "servers: secure (https) $PORT_secure, one (http) $PORT_one, closed $CLOSED; real: $([ -n "$REAL_OK" ] && echo "$REAL:443 and :80" || echo "$REAL_WHY")"

NOPROXY='for v in $(env | sed -n "s/^\([A-Za-z_]*[Pp][Rr][Oo][Xx][Yy][A-Za-z_]*\)=.*/\1/p") GIT_SSH_COMMAND; do unset $v; done; '
# jail WHO SCRIPT — sh -c SCRIPT in a --net allow jail, every proxy variable unset
jail() {
	aj_run "$1" -- run --net allow \
		--map-host secure.test=127.0.0.1 --allow-domain "secure.test:$PORT_secure/tls" \
		--allow-domain "secure.test:$CLOSED/tls" \
		--map-host one.test=127.0.0.1 --allow-domain "one.test:$PORT_one/http" \
		--allow-domain "one.test:$CLOSED/http" \
		--map-host real.test="$REAL" --allow-domain real.test \
		-- sh -c "$NOPROXY$2"
}
NL=$'\n'
DENIED='alert access denied|ALERT_ACCESS_DENIED'
T="python3 netclient.py --direct tls"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	cp "$SRV/crt.pem" "$H/netclient.py" "$WS/"
	install -m 0755 "$CAPC" "$WS/capclient"
	aj_chown "$WS/crt.pem" "$WS/netclient.py" "$WS/capclient"

	# --- python's ssl, connecting by itself: names, none, a hello in 1-byte writes ----------
	jail "$who" "env | grep -ci proxy; for a in 'secure.test 0 0 any' 'evil.test 0 0 any' '- 0 0 any' 'SECURE.test. 1 7 1.2' 'evil.test 1 7 1.3' 'secure.test 1 0 1.3'; do set -- \$a; echo \"[\$*] \$($T secure.test $PORT_secure \$1 \$2 \$3 \$4 crt.pem 2>&1)\"; done"
	like "$OUT" "^0${NL}" "$who: no proxy variable in the jail's environment"
	like "$OUT" "\[secure.test 0 0 any\] tls ok TLSv1.3: hello from secure host=secure.test:$PORT_secure path=/tls" \
		"$who: python ssl connecting by itself to an allowed name, that name as SNI: the handshake and a request pass, data both ways"
	like "$OUT" "\[evil.test 0 0 any\] tls failed: .*($DENIED)" \
		"$who: … a foreign SNI to an allowed name: refused with a TLS alert"
	like "$OUT" "\[- 0 0 any\] tls failed: .*($DENIED)" "$who: … no SNI: refused"
	like "$OUT" "\[SECURE.test. 1 7 1.2\] tls ok TLSv1.2: hello" \
		"$who: … SNI in capitals with a trailing dot, the hello in 7-byte records sent a byte a write: passes"
	like "$OUT" "\[evil.test 1 7 1.3\] tls failed: .*($DENIED)" \
		"$who: … a foreign SNI in 1-byte writes: refused"
	like "$OUT" "\[secure.test 1 0 1.3\] tls ok TLSv1.3: hello" "$who: … the right SNI in 1-byte writes: passes"
	aj_run "$who" -- log --last
	like "$OUT" "tcp +DENY +secure\.test:$PORT_secure .*TLS server name evil\.test does not match secure\.test:$PORT_secure" \
		"$who: agentjail log: the refused captured connection, with the name sent and the name allowed"
	like "$OUT" "tcp +DENY +secure\.test:$PORT_secure .*no TLS server name sent" "$who: … and the one without a name"
	like "$OUT" "tcp +ALLOW +secure\.test:$PORT_secure +127\.0\.0\.1 +[1-9][0-9.]*K? +[1-9][0-9.]*K? " \
		"$who: … the allowed ones, with the bytes each way (relayed: agentjail counts them)"

	# --- node: fetch (the right name), tls.connect with a foreign name ----------------------
	if command -v node >/dev/null 2>&1; then
		jail "$who" "NODE_EXTRA_CA_CERTS=crt.pem node -e '
fetch(\"https://secure.test:$PORT_secure/node\").then(r => r.text()).then(t => process.stdout.write(\"fetch: \" + t), e => console.log(\"fetch failed:\", e.cause ? e.cause.code || e.cause.message : e.message)).then(() => {
  const s = require(\"tls\").connect({host: \"secure.test\", port: $PORT_secure, servername: \"evil.test\", ca: require(\"fs\").readFileSync(\"crt.pem\")}, () => console.log(\"tls: connected\"));
  s.on(\"error\", e => console.log(\"tls failed:\", e.code || e.message));
})'"
		like "$OUT" "^fetch: hello from secure host=secure.test:$PORT_secure path=/node" \
			"$who: node $(node --version) fetch, without the proxy, to an allowed name on a port that carries TLS: passes"
		like "$OUT" "tls failed: .*(ALERT_ACCESS_DENIED|access denied)" \
			"$who: node tls.connect to that name with a foreign SNI: refused"
	else
		skip "$who: node fetch and tls without the proxy" "node is not installed"
	fi

	# --- plain HTTP on a port that carries HTTP: Host ---------------------------------------
	jail "$who" "./capclient get one.test $PORT_one /static
python3 -c '
import http.client
for h in (\"evil.test\", \"one.test:$PORT_one\"):
    c = http.client.HTTPConnection(\"one.test\", $PORT_one, timeout=10)
    c.request(\"GET\", \"/py\", headers={\"Host\": h}); r = c.getresponse()
    print(\"py\", h, r.status, r.read().decode().strip())'
curl -sS -m 10 --noproxy '*' -H 'Host: evil.test' -w '\ncode=%{http_code}\n' http://one.test:$PORT_one/curl"
	like "$OUT" "^hello from one host=one.test path=/static${NL}peer 127\.0\.0\.1 [0-9]+" \
		"$who: a static program's GET with the allowed Host passes (its peer: agentjail's relay on 127.0.0.1)"
	like "$OUT" "py evil.test 403 HTTP Host evil.test does not match one.test:$PORT_one, the name this connection was allowed for" \
		"$who: python http.client with Host: evil.test: 403 naming both names"
	like "$OUT" "py one.test:$PORT_one 200 hello from one host=one.test:$PORT_one path=/py" "$who: … with its own Host: passes"
	like "$OUT" "HTTP Host evil.test does not match one.test:$PORT_one.*${NL}code=403" \
		"$who: curl --noproxy with Host: evil.test: 403"
	aj_run "$who" -- log --last
	like "$OUT" "tcp +DENY +one\.test:$PORT_one .*HTTP Host evil\.test does not match one\.test:$PORT_one" \
		"$who: agentjail log: the Host mismatch with both names"

	# --- the real ports 443 and 80 ------------------------------------------------------------
	if [ -n "$REAL_OK" ]; then
		jail "$who" "for s in real.test evil.test -; do echo \"[\$s] \$($T real.test 443 \$s 0 0 any crt.pem 2>&1)\"; done
./capclient get real.test 80 /static
python3 -c '
import http.client
c = http.client.HTTPConnection(\"real.test\", 80, timeout=10)
c.request(\"GET\", \"/py\", headers={\"Host\": \"evil.test\"}); r = c.getresponse()
print(\"py\", r.status, r.read().decode().strip())'"
		like "$OUT" "\[real.test\] tls ok TLSv1.3: hello from real443" "$who: port 443, the allowed name as SNI: passes"
		like "$OUT" "\[evil.test\] tls failed: .*($DENIED)" "$who: port 443 (no entry names it TLS), a foreign SNI: refused"
		like "$OUT" "\[-\] tls failed: .*($DENIED)" "$who: port 443, no SNI: refused"
		like "$OUT" "hello from real80 host=real.test path=/static" "$who: port 80 with the allowed Host: passes"
		like "$OUT" "py 403 HTTP Host evil.test does not match real.test:80" "$who: port 80 with Host: evil.test: 403"
	else
		skip "$who: the real ports 443 and 80" "$REAL_WHY"
	fi

	# --- the upstream's failure, as the client expects it ------------------------------------
	jail "$who" "./capclient get secure.test $CLOSED /; ./capclient nonblock secure.test $CLOSED /"
	like "$OUT" "^fail ECONNREFUSED ms=[0-9]+${NL}" \
		"$who: a blocking connect to an allowed TLS port where nothing listens: ECONNREFUSED, as without agentjail"
	like "$OUT" "${NL}einprogress${NL}fail (ECONNRESET|ECONNREFUSED) ms=[0-9]+$" \
		"$who: … a non-blocking one: EINPROGRESS, then its connection reset"

	# --- a relayed socket keeps the capture's hardening ------------------------------------
	jail "$who" "./capclient hijack one.test $PORT_one $CLOSED ${HOSTIP:-127.0.0.1} $PORT_canary 200 $SQUAT"
	like "$OUT" "^hijack get=ok failed=(connected|ECONNRESET) bind=EINVAL listen=EINVAL tried=[0-9]+ connected=0 fastopen=EOPNOTSUPP" \
		"$who: a relayed socket whose upstream failed can be neither bound to another port of the host, nor made to listen, nor connected elsewhere, even by a thread racing its address"
	diag "$who: $OUT"
	grep -q '^accept' "$SRV/canary.out"
	ok $((!$?)) "$who: … the canary on every address of the host was never reached"

	# --- agentjail's listener takes only its own connections ---------------------------------
	# The jail learns the listener's port (its socket's peer), and cannot reach it: its 127.0.0.1
	# is its own, and a literal of the host is refused. The host's other processes can connect,
	# but they get no relay: closed at once (a relayed one would finish the TLS handshake).
	rm -f "$WS"/relay.*
	(
		for i in $(seq 1 600); do [ -e "$WS/relay.ready" ] && break; sleep 0.1; done
		port=$(cat "$WS/relay.port" 2>/dev/null)
		python3 - "$port" "$SRV/crt.pem" >"$AJ_TMP/relay.host" 2>&1 <<-'EOF'
			import socket, ssl, sys
			try:
			    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
			    ctx = ssl.create_default_context(cafile=sys.argv[2])
			    ctx.check_hostname = False
			    t = ctx.wrap_socket(s, server_hostname="secure.test")
			    t.sendall(b"GET /from-host HTTP/1.1\r\nHost: secure.test\r\n\r\n")
			    print("host: relayed", t.recv(4096))
			except Exception as e:
			    print("host: no relay:", type(e).__name__, e)
		EOF
		touch "$WS/relay.go"
	) &
	HOSTJOB=$!
	jail "$who" "python3 -c '
import socket
s = socket.create_connection((\"secure.test\", $PORT_secure), timeout=10)
port = s.getpeername()[1]
open(\"relay.port\", \"w\").write(str(port))
for a in (\"127.0.0.1\", \"::ffff:127.0.0.1\", \"${HOSTIP:-192.0.2.1}\"):
    try:
        socket.create_connection((a, port), timeout=5); print(\"jail:\", a, \"connected\")
    except OSError as e:
        print(\"jail:\", a, e.strerror)
p = socket.create_connection((\"127.0.0.1\", 3128), timeout=5)
p.sendall(b\"CONNECT 127.0.0.1:%d HTTP/1.1\\r\\n\\r\\n\" % port)
print(\"jail: proxy\", p.recv(4096).split(b\"\\r\\n\")[0].decode())
'; python3 netclient.py sync . relay; echo jail-done"
	wait "$HOSTJOB"
	like "$OUT" "jail: 127.0.0.1 Connection refused${NL}jail: ::ffff:127.0.0.1 Connection refused${NL}jail: ${HOSTIP:-192.0.2.1} Connection refused${NL}jail: proxy HTTP/1.1 403 Forbidden${NL}jail-done" \
		"$who: the jail cannot connect to agentjail's relay listener: its 127.0.0.1 is its own, the host's address and the proxy refuse it"
	aj_run "$who" -- log --last
	like "$OUT" "tcp +DENY +${HOSTIP:-192.0.2.1}:[0-9]+ .*not on the allow list" "$who: … the captured connect to the host's address, refused by the capture"
	like "$(cat "$AJ_TMP/relay.host")" "^host: no relay:" \
		"$who: another process of the host that connects to the relay's listener gets no relay ($(cat "$AJ_TMP/relay.host"))"
done
aj_skip_missing_whos "TLS names and HTTP Host inside captured connections"
done_testing
