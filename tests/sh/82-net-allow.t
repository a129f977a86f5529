#!/usr/bin/env bash
# --net allow, end to end (doc/design.md §4): real clients inside the jail — curl, git over
# https, python3's urllib, node — reach local test servers (tests/helpers/netsrv.py) through the
# jail's proxy on 127.0.0.1:3128 by CONNECT, plain HTTP and SOCKS5, the names pinned with
# --map-host; denied names get a 403 naming the flag that would allow them and are logged
# (`agentjail log`, the end-of-run line); wildcard, deny and port rules decide before any
# lookup (an allowed name that does not resolve gets a 502, a refused one a 403); a loopback
# server is reachable only through a mapped name or an allowed literal; the DNS stub answers
# only allowed names; raw TCP to an address fails at once; one connection cannot switch hosts;
# 1,000 tunnels at once complete; hostile clients leave no fds or memory behind in the
# agentjail process. As root and as an unprivileged user.
#
# AJ_NET_UNDER_TEST=on runs the security checks against `--net on` instead (they must fail
# there: that is how they were first seen to fail).
. "$(dirname "$0")/lib.sh"
aj_setup

# ---- the servers (on the host's 127.0.0.1, as root) -------------------------------------------
. "$(dirname "$0")/netlib.sh" git
aj_git_repo "$SRV" "cloned through the proxy"

srv one http --name one
srv two http --name two
srv secure http --name secure --cert "$SRV/crt.pem" --key "$SRV/key.pem" --git-root "$SRV"
srv echo echo
diag "servers: one $PORT_one, two $PORT_two, secure (https, git) $PORT_secure, echo $PORT_echo"

NETFLAGS=(--net allow
	--map-host one.test=127.0.0.1 --allow-domain "one.test:$PORT_one"
	--map-host two.test=127.0.0.1 --allow-domain "two.test:$PORT_two"
	--map-host secure.test=127.0.0.1 --allow-domain "secure.test:$PORT_secure"
	--map-host echo.test=127.0.0.1 --allow-domain "echo.test:$PORT_echo"
	--allow-domain '*.wild.test' --deny-domain bad.wild.test --allow-domain port.test:8443)
UNDER=${AJ_NET_UNDER_TEST:-allow}
[ "$UNDER" = on ] && NETFLAGS=(--net on)
diag "network under test: $UNDER"

# jail WHO SCRIPT [EXTRA-AGENTJAIL-FLAGS…] — run `sh -c SCRIPT` in a --net allow jail
jail() {
	local who=$1 script=$2; shift 2
	[ "$UNDER" = on ] && set --
	aj_run "$who" -- run "${NETFLAGS[@]}" "$@" -- sh -c "$script"
}
NL=$'\n'
# curl printing the body, then a line "TAG code=HTTP-STATUS connect=CONNECT-STATUS"
cw() { echo "curl -sS -m 10 -w '\\n$1 code=%{http_code} connect=%{http_connect}\\n'"; }
# Milliseconds an in-jail command took: `ms CMD…` prints "rc=N ms=M" after CMD's output.
MS='ms() { s=$(date +%s%N); "$@"; r=$?; echo; echo "rc=$r ms=$(( ($(date +%s%N) - s) / 1000000 ))"; }'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	cp "$SRV/crt.pem" "$H/netclient.py" "$WS/"
	aj_chown "$WS/crt.pem" "$WS/netclient.py"

	# --- allowed: CONNECT, plain HTTP, SOCKS5 -----------------------------------------------
	jail "$who" "curl -sS -m 10 --cacert crt.pem https://secure.test:$PORT_secure/via-connect"
	like "$OUT" "^hello from secure host=secure.test:$PORT_secure path=/via-connect" \
		"$who: curl https through CONNECT reaches an allowed, mapped name"
	jail "$who" "curl -sS -m 10 http://one.test:$PORT_one/via-http"
	like "$OUT" "^hello from one host=one.test:$PORT_one path=/via-http" \
		"$who: curl http through the plain-HTTP proxy reaches an allowed name"
	jail "$who" "curl -sS -m 10 --socks5-hostname $PROXY http://two.test:$PORT_two/via-socks"
	like "$OUT" "^hello from two host=two.test:$PORT_two path=/via-socks" \
		"$who: curl --socks5-hostname reaches an allowed name through SOCKS5"
	jail "$who" "env | grep -i -E '^(https?|all|no)_proxy=' | sort"
	like "$OUT" "(^|$NL)HTTPS_PROXY=http://$PROXY($NL|$)" "$who: HTTPS_PROXY points at the jail's proxy"
	like "$OUT" "(^|$NL)NO_PROXY=localhost,127.0.0.1,::1($NL|$)" "$who: NO_PROXY is the jail's own loopback"
	aj_run "$who" -e HTTPS_PROXY=http://attacker.invalid:1 -e https_proxy=http://attacker.invalid:1 \
		-- run "${NETFLAGS[@]}" -- sh -c 'env | grep -i attacker'
	is "$OUT" "" "$who: inherited proxy variables are cleared"

	# --- real clients -----------------------------------------------------------------------
	rm -rf "$WS/clone"
	jail "$who" "git -c http.sslCAInfo=\$PWD/crt.pem clone -q https://secure.test:$PORT_secure/git/repo.git clone && cat clone/README"
	like "$OUT" "cloned through the proxy" "$who: git clone over https through the proxy"
	jail "$who" "python3 -c 'import ssl, urllib.request as u
c = ssl.create_default_context(cafile=\"crt.pem\")
print(u.urlopen(\"https://secure.test:$PORT_secure/py-https\", context=c, timeout=10).read().decode(), end=\"\")
print(u.urlopen(\"http://one.test:$PORT_one/py-http\", timeout=10).read().decode(), end=\"\")'"
	like "$OUT" "hello from secure .*path=/py-https"$'\n'"hello from one .*path=/py-http" \
		"$who: python3 urllib reaches https and http through the proxy variables"
	if command -v node >/dev/null 2>&1; then
		nodev=$(node -p 'process.versions.node')
		jail "$who" "$MS; ms node -e 'fetch(\"http://one.test:$PORT_one/node-fetch\").then(r => r.text()).then(t => process.stdout.write(t), e => { console.log(\"fetch failed:\", e.cause ? e.cause.code : e.message); process.exit(3); })'"
		# NODE_USE_ENV_PROXY exists from node 24.5 and 22.21; older nodes ignore it and
		# connect directly: the capture (88-capture.t) takes that connection instead
		like "$OUT" "hello from one .*path=/node-fetch" \
			"$who: node $nodev fetch reaches an allowed name (through the proxy with NODE_USE_ENV_PROXY, else captured)"
		jail "$who" "node -e 'require(\"http\").get({host: \"127.0.0.1\", port: 3128, path: \"http://one.test:$PORT_one/node-http\", headers: {host: \"one.test:$PORT_one\"}}, r => r.pipe(process.stdout))'"
		like "$OUT" "hello from one .*path=/node-http" "$who: node's http module through the proxy (absolute URI)"
	else
		skip "$who: node fetch through the proxy" "node is not installed"
	fi

	# --- denied: 403 with the reason, logged ---------------------------------------------------
	jail "$who" "curl -sS -m 10 -o /dev/null http://one.test:$PORT_one/allowed-and-logged; $(cw http) http://evil.test/steal; $(cw socks) --socks5-hostname $PROXY http://evil.test/; $(cw connect) https://evil.test/"
	like "$OUT" "${NL}connect code=000 connect=403" "$who: CONNECT to a name not on the list is answered 403"
	like "$OUT" "${NL}http code=403 " "$who: plain HTTP to a name not on the list: 403"
	like "$OUT" "evil\.test:80.*--allow-domain evil\.test" \
		"$who: … the reason names the host and the flag that would allow it"
	unlike "$OUT" 'hello from' "$who: … nothing reached a server"
	like "$ERR" "SOCKS5 connection to evil\.test\. \(2\)" "$who: SOCKS5 to a name not on the list is refused (reply 2)"
	like "$ERR" "agentjail: denied [0-9]+ connections?: .*evil\.test:(80|443)" \
		"$who: the end-of-run line names the denied host"
	aj_run "$who" -- log --last
	like "$OUT" "DENY +evil\.test:443 " "$who: agentjail log --last shows the denied host"
	like "$OUT" "ALLOW +one\.test:$PORT_one +127\.0\.0\.1 " "$who: … and the allowed one of the same run, with the address"
	aj_run "$who" -- log --last --json
	python3 -c 'import json, sys
ev = [json.loads(l) for l in sys.stdin.read().splitlines() if l.strip()]
net = [e for e in ev if e.get("type") == "net"]
bad = [e for e in net if e["host"] == "evil.test" and e["action"] == "deny" and "--allow-domain" in e["rule"]]
good = [e for e in net if e["host"] == "one.test" and e["action"] == "allow" and e["addr"] == "127.0.0.1" and e["bytes_down"] > 0]
sys.exit(0 if len(bad) >= 3 and good else 1)' <<<"$OUT"
	ok $? "$who: log --json: the three denials (host, action, reason) and the allowed request (address, bytes)" || diag "$OUT"

	# --- wildcard, deny and port rules (decided before any lookup) --------------------------
	# An allowed name that does not resolve on the host: 502/504; a refused one: 403 at once.
	jail "$who" "for u in https://a.wild.test/ https://deep.a.wild.test/ https://wild.test/ https://bad.wild.test/ https://a.wild.test:81/ https://port.test:8443/ https://port.test/; do curl -sS -m 10 -o /dev/null -w \"\$u %{http_connect}\n\" \$u 2>/dev/null; done"
	like "$OUT" "a.wild.test/ 50[24]" "$who: *.wild.test allows a.wild.test (lookup tried: 502)"
	like "$OUT" "deep.a.wild.test/ 50[24]" "$who: … and deeper subdomains"
	like "$OUT" "//wild.test/ 403" "$who: *.wild.test does not allow wild.test itself"
	like "$OUT" "bad.wild.test/ 403" "$who: --deny-domain wins over a wildcard allow"
	like "$OUT" "a.wild.test:81/ 403" "$who: a rule without a port allows only 80 and 443"
	like "$OUT" "port.test:8443/ 50[24]" "$who: port.test:8443 allows that port"
	like "$OUT" "port.test/ 403" "$who: … and not 443"

	# --- loopback: only through a mapping or an allowed literal -----------------------------
	jail "$who" "$(cw literal) --noproxy '' -x http://$PROXY http://127.0.0.1:$PORT_one/literal; $(cw localhost) --noproxy '' -x http://$PROXY http://localhost:$PORT_one/localhost; curl -sS -m 5 http://127.0.0.1:$PORT_one/direct 2>&1" \
		--allow-domain "localhost:$PORT_one"
	like "$OUT" "${NL}literal code=403 " "$who: the same server by the 127.0.0.1 literal is refused"
	like "$OUT" "${NL}localhost code=(403|502) " "$who: an allowed name the host resolves to loopback is refused"
	like "$OUT" "Failed to connect to 127.0.0.1 port $PORT_one" "$who: … and directly the jail's own loopback has nothing there"
	unlike "$OUT" 'hello from' "$who: … the loopback server was reached only through its mapped name"
	jail "$who" "curl -sS -m 10 --noproxy '' -x http://$PROXY http://127.0.0.1:$PORT_one/allowed-literal" \
		--allow-domain "127.0.0.1:$PORT_one"
	like "$OUT" "hello from one .*path=/allowed-literal" "$who: an allowed 127.0.0.1:PORT literal is reachable"

	# --- DNS: only allowed names ------------------------------------------------------------
	rnd=r$RANDOM$RANDOM.example.com
	jail "$who" "$MS; getent hosts one.test; echo one=\$?; getent hosts evil.test; echo evil=\$?; ms getent hosts $rnd; python3 -c 'import socket
for n in (\"one.test\", \"evil.test\"):
    try: print(\"py\", n, socket.getaddrinfo(n, 80)[0][4][0])
    except socket.gaierror as e: print(\"py\", n, \"gaierror\", e.errno)'"
	like "$OUT" "one=0" "$who: getent hosts answers an allowed (mapped) name"
	like "$OUT" "evil=2" "$who: getent hosts: a name not on the list does not resolve"
	like "$OUT" "py evil.test gaierror" "$who: python getaddrinfo: a name not on the list does not resolve"
	ms=$(grep -oE 'rc=[0-9]+ ms=[0-9]+' <<<"$OUT" | tail -n1)
	like "$ms" '^rc=2 ms=([0-9]|[0-9][0-9]|[0-9][0-9][0-9])$' "$who: a random name is NXDOMAIN at once (< 1 s: $ms)"

	# --- malformed DNS requests: logged as what they are, counted apart (issue 24 item 7) ----
	if [ "$UNDER" != on ]; then
		jail "$who" "python3 -c 'import socket, struct
def q(name, qd=1, op=0):
    wire = b\"\".join(bytes([len(l)]) + l.encode() for l in name.split(\".\") if l) + b\"\\0\"
    return struct.pack(\">HBBHHHH\", 7, 1 | op << 3, 0, qd, 0, 0, 0) + wire + b\"\\0\\1\\0\\1\"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for m in (q(\"a.evil.test\"), q(\"one.test\", qd=2), q(\"one.test\", op=2), b\"\\1\\2\\3\", q(\"\")):
    s.sendto(m, (\"127.0.0.1\", 53))
    try: print(\"rcode\", s.recv(512)[3] & 15)
    except socket.timeout: print(\"no answer\")'"
		is "$(grep -E '^(rcode|no answer)' <<<"$OUT" | tr '\n' ' ')" "rcode 3 rcode 1 rcode 4 no answer rcode 3 " \
			"$who: DNS: NXDOMAIN, FORMERR for two questions, NOTIMP for another opcode, nothing for a runt, NXDOMAIN for the root"
		like "$ERR" 'agentjail: denied 2 name lookups and 3 malformed DNS requests: ' \
			"$who: … the end-of-run line counts the malformed requests apart"
		unlike "$ERR" '\? \(dns\)' "$who: … and lists no nameless '? (dns)'"
		aj_run "$who" -- log --last
		like "$OUT" 'dns +DENY +\(malformed DNS request\) .*malformed DNS request: not exactly one question' \
			"$who: log: a malformed request is shown as one, with what is wrong"
		like "$OUT" 'malformed DNS request: not a standard query' "$who: … another opcode"
		like "$OUT" 'malformed DNS request: shorter than a DNS header' "$who: … a runt"
		like "$OUT" 'dns +DENY +\. \(dns\) ' "$who: … the root is \".\""
		unlike "$OUT" '\? \(dns\)' "$who: … and nothing is a nameless '? (dns)'"
	fi

	# --- raw TCP fails at once --------------------------------------------------------------
	jail "$who" "$MS; ms ./probe connect-tcp 1.1.1.1 443; ms ./probe connect-tcp 127.0.0.1 $PORT_echo; ms ./probe connect-tcp 10.0.0.1 80"
	n_ok=$(grep -c '^ok$' <<<"$OUT")
	is "$n_ok" 0 "$who: raw TCP to 1.1.1.1, 10.0.0.1 and the host's 127.0.0.1:$PORT_echo fails"
	slow=$(grep -oE 'ms=[0-9]+' <<<"$OUT" | cut -d= -f2 | awk '$1 >= 1000' | wc -l)
	times=$(grep -oE 'ms=[0-9]+' <<<"$OUT" | tr '\n' ' ')
	is "$slow" 0 "$who: … each at once, < 1 s ($times)"

	# --- keep-alive cannot switch hosts -----------------------------------------------------
	for mode in sequential pipelined; do
		jail "$who" "python3 netclient.py keepalive one.test two.test $PORT_one $mode 2>&1; python3 netclient.py keepalive two.test one.test $PORT_one $mode 2>&1"
		unlike "$OUT" "hello from two" "$who: keep-alive ($mode): a second request for another host never reaches it"
		like "$OUT" "hello from one" "$who: … the first request was answered"
	done

	# --- verify: the --net allow checks ----------------------------------------------------
	aj_run "$who" -- verify --net allow
	rc_is 0 "$who: verify --net allow exits 0"
	unlike "$OUT" $'(^|\n)FAIL ' "$who: … no probe fails"
	for p in net.raw_tcp_fails_fast net.dns_only_allowed net.capture net.sni_tunnel net.sni_capture net.links_routes_fixed net.loopback_tcp net.abstract; do
		like "$OUT" $'(^|\n)PASS  '"$p " "$who: verify --net allow: $p passes"
	done

	# --- 1,000 tunnels at once --------------------------------------------------------------
	jail "$who" "python3 netclient.py tunnels 1000 echo.test $PORT_echo"
	is "$(tail -n1 <<<"$OUT")" "ok 1000" "$who: 1,000 concurrent CONNECT tunnels complete"
done
aj_skip_missing_whos "--net allow end to end"

# ---- hostile clients leave nothing behind in the agentjail process ---------------------------
# Counted from the host: /proc/PID/fd and RssAnon of the agentjail process (the proxy is a thread
# of it), after a warm-up round and after a second round of the same abuse, during which 50
# clients send half a request head and wait: the proxy must close them (its head time limit).
who=${AJ_WHOS[-1]}
aj_use "$who"
SYNC=$WS/sync
rm -rf "$SYNC" && mkdir -m 0755 "$SYNC" && aj_chown "$SYNC"
aj_cmd "$who" -- run "${NETFLAGS[@]}" -- sh -c "
	python3 netclient.py abuse 20 echo.test $PORT_echo nowhere.wild.test >/dev/null &&
	python3 netclient.py tunnels 100 echo.test $PORT_echo >/dev/null &&
	python3 netclient.py sync sync warm &&
	{ python3 netclient.py slowloris 50 20 >sync/slow.out & } &&
	python3 netclient.py abuse 20 echo.test $PORT_echo nowhere.wild.test &&
	wait && python3 netclient.py sync sync after"
"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/abuse.out" 2>"$AJ_TMP/abuse.err" &
AJ_PID=$!
AJ_PIDS+=("$AJ_PID")
# settle: wait for PHASE.ready, then for the fd count to stop falling (≤ 5 s); prints "FDS RSS_KB"
measure() {
	local phase=$1 i fds last=-1
	for i in $(seq 1 600); do
		[ -e "$SYNC/$phase.ready" ] && break
		kill -0 "$AJ_PID" 2>/dev/null || break
		sleep 0.1
	done
	[ -e "$SYNC/$phase.ready" ] || { echo "none none"; return; }
	for i in $(seq 1 25); do
		fds=$(ls "/proc/$AJ_PID/fd" 2>/dev/null | wc -l)
		[ "$fds" = "$last" ] && [ "$i" -gt 3 ] && break
		last=$fds
		sleep 0.2
	done
	echo "$fds $(awk '/^RssAnon:/ {print $2}' "/proc/$AJ_PID/status")"
}
read -r fds1 rss1 < <(measure warm)
comm=$(cat "/proc/$AJ_PID/comm" 2>/dev/null)
: >"$SYNC/warm.go"
read -r fds2 rss2 < <(measure after)
: >"$SYNC/after.go"
wait "$AJ_PID"
abuse_rc=$?
diag "agentjail process ($comm): after warm-up $fds1 fds, RssAnon $rss1 kB; after 20 more rounds $fds2 fds, RssAnon $rss2 kB"
diag "slow clients: $(cat "$SYNC/slow.out" 2>/dev/null)"
is "$abuse_rc:$(tail -n1 "$AJ_TMP/abuse.out")" "0:done 20" "$who: the hostile clients ran to the end in the jail"
[ "$fds1" != none ] && [ "$fds1" = "$fds2" ]
ok $? "$who: malformed, slow and vanishing clients leave no fd behind ($fds1 → $fds2)"
like "$(cat "$SYNC/slow.out" 2>/dev/null)" '^closed 50 of 50 ' \
	"$who: clients that never finish their request are closed by the proxy"
[ "$rss1" != none ] && [ $((rss2 - rss1)) -lt 512 ]
ok $? "$who: … and no memory (RssAnon $rss1 → $rss2 kB, < 512 kB growth)"

done_testing
