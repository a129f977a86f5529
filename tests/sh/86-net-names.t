#!/usr/bin/env bash
# The names inside an approved connection (doc/design.md §4, issue 25): a CONNECT tunnel to an
# allowed name carries a TLS ClientHello whose server name must be that name (folded: case, a
# trailing dot), else the client gets a TLS access_denied alert and the denial is logged with
# both names; no server name is refused too. Real clients in the jail against an HTTPS server
# of tests/helpers/netsrv.py: curl (--connect-to, the domain-fronting shape), openssl s_client
# (TLS 1.2 and 1.3, a foreign name, none), python's ssl with its ClientHello cut into records of
# 7 and 5 bytes and sent a few bytes at a time. Plain HTTP through the proxy with a Host that is
# not the URI's host is refused (403, both names). As root and as an unprivileged user.
#
# AJ_NET_UNDER_TEST=on runs the checks against `--net on`: the refusals must fail there.
. "$(dirname "$0")/lib.sh"
aj_setup

. "$(dirname "$0")/netlib.sh"
srv secure http --name secure --cert "$SRV/crt.pem" --key "$SRV/key.pem"
srv one http --name one
S=secure.test:$PORT_secure

NETFLAGS=(--net allow --map-host secure.test=127.0.0.1 --allow-domain "$S"
	--map-host one.test=127.0.0.1 --allow-domain "one.test:$PORT_one")
UNDER=${AJ_NET_UNDER_TEST:-allow}
[ "$UNDER" = on ] && NETFLAGS=(--net on --map-host secure.test=127.0.0.1 --map-host one.test=127.0.0.1)
diag "network under test: $UNDER; servers: secure (https) $PORT_secure, one (http) $PORT_one"
jail() { local who=$1 script=$2; aj_run "$who" -- run "${NETFLAGS[@]}" -- sh -c "$script"; }
NL=$'\n'
DENIED='alert access denied|ALERT_ACCESS_DENIED'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	cp "$SRV/crt.pem" "$H/netclient.py" "$WS/"
	aj_chown "$WS/crt.pem" "$WS/netclient.py"

	# --- python's ssl: names, none, pieces, versions ----------------------------------------
	T="python3 netclient.py tls secure.test $PORT_secure"
	jail "$who" "for a in 'secure.test 0 0 any' 'evil.test 0 0 any' '- 0 0 any' 'SECURE.test. 1 7 1.2' 'evil.test 3 5 1.3' 'secure.test 2 5 1.3'; do set -- \$a; echo \"[\$*] \$($T \$1 \$2 \$3 \$4 crt.pem 2>&1)\"; done"
	like "$OUT" "\[secure.test 0 0 any\] tls ok TLSv1.3: hello from secure" \
		"$who: python ssl, the allowed name as SNI: the handshake and a request pass"
	like "$OUT" "\[evil.test 0 0 any\] tls failed: .*($DENIED)" \
		"$who: … a foreign SNI in a tunnel to an allowed name: refused with a TLS alert"
	like "$OUT" "\[- 0 0 any\] tls failed: .*($DENIED)" "$who: … no SNI: refused"
	like "$OUT" "\[SECURE.test. 1 7 1.2\] tls ok TLSv1.2: hello" \
		"$who: … TLS 1.2, SNI in capitals with a trailing dot, the hello in 7-byte records sent a byte at a time: passes"
	like "$OUT" "\[evil.test 3 5 1.3\] tls failed: .*($DENIED)" \
		"$who: … a foreign SNI in 5-byte records, 3 bytes at a time: refused"
	like "$OUT" "\[secure.test 2 5 1.3\] tls ok TLSv1.3: hello" "$who: … TLS 1.3 in pieces: passes"
	if [ "$UNDER" != on ]; then
		aj_run "$who" -- log --last
		like "$OUT" "DENY +secure\.test:$PORT_secure .*TLS server name evil\.test does not match secure\.test:$PORT_secure" \
			"$who: agentjail log: the refused tunnel, with the name sent and the name allowed"
		like "$OUT" "DENY +secure\.test:$PORT_secure .*no TLS server name sent" "$who: … and the one without a name"
	fi

	# --- curl and openssl ---------------------------------------------------------------------
	jail "$who" "curl -sS -m 10 --cacert crt.pem --connect-to evil.test:443:$S https://evil.test/fronted 2>&1; echo curl=\$?
for v in -tls1_2 -tls1_3; do
	echo \"== match \$v\"; openssl s_client -proxy $PROXY -connect $S -servername secure.test \$v -CAfile crt.pem -brief </dev/null 2>&1 | head -3
	echo \"== foreign \$v\"; openssl s_client -proxy $PROXY -connect $S -servername evil.test \$v -CAfile crt.pem -brief </dev/null 2>&1 | head -3
done
echo '== none'; openssl s_client -proxy $PROXY -connect $S -noservername -CAfile crt.pem -brief </dev/null 2>&1 | head -3"
	like "$OUT" "curl: \(35\) .*($DENIED).*${NL}curl=35" \
		"$who: curl --connect-to (CONNECT to the allowed name, SNI evil.test): refused"
	for v in tls1_2 tls1_3; do
		like "$OUT" "== match -$v${NL}CONNECTION ESTABLISHED" "$who: openssl s_client -$v with the allowed name connects"
		like "$OUT" "== foreign -$v${NL}[^${NL}]*($DENIED)" "$who: openssl s_client -$v with a foreign name: refused"
	done
	like "$OUT" "== none${NL}[^${NL}]*($DENIED)" "$who: openssl s_client -noservername: refused"

	# --- plain HTTP: Host must be the request's host ---------------------------------------------
	jail "$who" "curl -sS -m 10 -H 'Host: evil.test' -w '\ncode=%{http_code}\n' http://one.test:$PORT_one/host; curl -sS -m 10 -w '\ncode=%{http_code}\n' http://one.test:$PORT_one/same"
	like "$OUT" "^HTTP Host evil.test does not match one.test:$PORT_one, the name this connection was allowed for${NL}+code=403" \
		"$who: plain HTTP with Host: evil.test for an allowed URI: 403 naming both"
	like "$OUT" "hello from one host=one.test:$PORT_one path=/same" "$who: … the same request with its own Host passes"

done
aj_skip_missing_whos "TLS names and HTTP Host inside approved connections"
done_testing
