#!/usr/bin/env bash
# --net allow, the namespace holder (doc/design.md §2, §4): the jail runs in a network namespace
# of its own with only lo (127.0.0.1 and ::1) up, the proxy's listeners on 127.0.0.1:3128,
# [::1]:3128 and 127.0.0.1:53 (udp+tcp) inside it, the host's loopback services out of reach,
# links and routes unchangeable, and a namespace that cannot be built is exit 125 with the step
# named and the command never run.
. "$(dirname "$0")/lib.sh"
aj_setup

aj_listen tcp listen-tcp 127.0.0.1 0 && tcp_port=${LISTEN_OUT#ready }
tcp6_port=
aj_listen tcp6 listen-tcp ::1 0 && tcp6_port=${LISTEN_OUT#ready }
have_ip=; command -v ip >/dev/null 2>&1 && have_ip=1

# A stand-in for the proxy on 127.0.0.1:3128 (for `agentjail-init __connect`, run in a network
# namespace of its own): 403 with X-Proxy-Error for denied.example, else 200 with a banner in the
# same packet, then an echo until the client half-closes.
cat >"$AJ_TMP/fakeproxy.py" <<'PY'
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 3128))
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    head = b""
    while b"\r\n\r\n" not in head:
        d = c.recv(1)
        if not d:
            break
        head += d
    target = head.split(b"\r\n")[0].split(b" ")[1]
    if target.startswith(b"denied.example"):
        c.sendall(b"HTTP/1.1 403 Forbidden\r\nX-Proxy-Error: denied.example:22 is not on the "
                  b"allow list (add --allow-domain denied.example:22)\r\n\r\n")
        c.close()
        continue
    c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\nSSH-2.0-fake " + target + b"\n")
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.shutdown(socket.SHUT_WR)
    c.close()
PY
head -c 3000000 /dev/urandom >"$AJ_TMP/big"
chmod 0644 "$AJ_TMP/fakeproxy.py" "$AJ_TMP/big"
have_unshare=; command -v unshare >/dev/null 2>&1 && [ -x /usr/bin/python3 ] && have_unshare=1

# An echo server on the host's loopback (a stand-in for an ssh server reached through a mapping).
cat >"$AJ_TMP/echo.py" <<'PY'
import socket, threading
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
print("ready %d" % s.getsockname()[1], flush=True)
def serve(c):
    c.sendall(b"SSH-2.0-echo\n")
    while True:
        d = c.recv(65536)
        if not d:
            break
        c.sendall(d)
    c.close()
while True:
    c, _ = s.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
PY
echo_port=
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 "$AJ_TMP/echo.py" >"$AJ_TMP/echo.out" 2>&1 &
	AJ_PIDS+=($!)
	for i in $(seq 1 100); do grep -qs '^ready' "$AJ_TMP/echo.out" && break; sleep 0.05; done
	echo_port=$(sed -n 's/^ready //p' "$AJ_TMP/echo.out")
fi

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# --- the view: only lo, up, with 127.0.0.1 and ::1 -----------------------------------------
	aj_run "$who" -- run --net allow -- cat /proc/net/dev
	ifs=$(printf '%s\n' "$OUT" | sed -n 's/^ *\([^:| ]*\):.*/\1/p' | sort | tr '\n' ' ')
	is "$RC/$ifs" "0/lo " "$who: --net allow: the jail's only interface is lo" || _last_run_diag

	aj_run "$who" -- run --net allow -- cat /proc/net/if_inet6
	if [ "$RC" = 0 ] && [ -z "$OUT" ]; then
		skip "$who: ::1 is on lo inside" "no IPv6 on this host"
	else
		like "$OUT" '^0{31}1 .* lo$' "$who: ::1 is on lo inside" || _last_run_diag
	fi

	# --- the listeners the holder opened ------------------------------------------------------
	for hp in "127.0.0.1 3128" "127.0.0.1 53"; do
		# shellcheck disable=SC2086
		aj_run "$who" -- run --net allow -- "$P" connect-tcp $hp
		probe_ok "$who: something listens on ${hp/ /:} (tcp) inside"
	done
	aj_run "$who" -- run --net allow -- cat /proc/net/if_inet6
	if [ -n "$OUT" ]; then
		aj_run "$who" -- run --net allow -- "$P" connect-tcp ::1 3128
		probe_ok "$who: something listens on [::1]:3128 inside"
	else
		skip "$who: something listens on [::1]:3128 inside" "no IPv6 on this host"
	fi
	aj_run "$who" -- run --net allow -- cat /proc/net/udp
	like "$OUT" ' 0100007F:0035 00000000:0000 07 ' "$who: a udp socket is bound to 127.0.0.1:53 inside" ||
		_last_run_diag

	# --- the host's loopback services are out of reach ----------------------------------------
	if [ -n "$tcp_port" ]; then
		aj_host "$PROBE" connect-tcp 127.0.0.1 "$tcp_port" >/dev/null
		ok $? "$who: control: the host's 127.0.0.1:$tcp_port is reachable on the host"
		aj_run "$who" -- run --net allow -- "$P" connect-tcp 127.0.0.1 "$tcp_port"
		probe_denied "$who: --net allow: the host's 127.0.0.1:$tcp_port is unreachable inside" 111
	else
		skip "$who: the host's loopback service is unreachable" "could not start the listener"
	fi
	if [ -n "$tcp6_port" ]; then
		aj_run "$who" -- run --net allow -- "$P" connect-tcp ::1 "$tcp6_port"
		probe_denied "$who: --net allow: the host's [::1]:$tcp6_port is unreachable inside"
	else
		skip "$who: the host's [::1] service is unreachable" "no IPv6 listener on the host"
	fi

	# --- links, routes and sysctls cannot be changed ------------------------------------------
	if [ -n "$have_ip" ]; then
		aj_run "$who" -- run --net allow -- ip link set lo down
		isnt "$RC" 0 "$who: --net allow: ip link set lo down fails inside" || _last_run_diag
		aj_run "$who" -- run --net allow -- ip route add 10.99.0.0/16 dev lo
		isnt "$RC" 0 "$who: --net allow: ip route add fails inside" || _last_run_diag
		aj_run "$who" -- run --net allow -- ip addr add 10.99.0.1/16 dev lo
		isnt "$RC" 0 "$who: --net allow: ip addr add fails inside" || _last_run_diag
		aj_run "$who" -- run --net allow -- cat /proc/net/dev
		like "$OUT" 'lo:' "$who: lo is still there afterwards" || _last_run_diag
	else
		skip "$who: links and routes cannot be changed inside" "ip (iproute2) is not installed"
	fi
	aj_run "$who" -- run --net allow -- "$P" write /proc/sys/kernel/core_pattern x
	probe_denied "$who: --net allow: /proc/sys/kernel/core_pattern cannot be written inside"
	aj_run "$who" -- run --net allow -- "$P" write /proc/sys/net/ipv4/ip_forward 1
	probe_denied "$who: --net allow: /proc/sys/net sysctls cannot be written inside"

	# --- __connect (ssh's ProxyCommand inside a jail) against a stand-in proxy ---------------
	if [ -n "$have_unshare" ]; then
		out=$AJ_TMP/$who/connect.out
		aj_host unshare -rn bash -c '
			ip link set lo up || exit 90
			/usr/bin/python3 "$1/fakeproxy.py" >"$3/fake.out" 2>&1 &
			for i in $(seq 1 100); do grep -qs ready "$3/fake.out" && break; sleep 0.05; done
			printf "hello\n" | "$2" __connect ok.example 22; echo "rc=$?"
			"$2" __connect denied.example 22 </dev/null 2>&1; echo "rc=$?"
			"$2" __connect ::1 2222 <"$1/big" >"$3/back"; echo "rc=$?"
			kill %1' _ "$AJ_TMP" "$AJ_BIN/agentjail-init" "$AJ_TMP/$who" >"$out" 2>&1
		res=$(cat "$out")
		like "$res" $'SSH-2.0-fake ok.example:22\nhello\nrc=0' \
			"$who: __connect: CONNECT ok.example:22, the banner sent with the 200, stdin echoed, exit 0" ||
			diag "$res"
		like "$res" $'refused by the proxy \\(403\\): denied.example:22 is not on the allow list \\(add --allow-domain denied.example:22\\)\nrc=1' \
			"$who: __connect: a 403 prints X-Proxy-Error and exits 1" || diag "$res"
		tail -c 3000000 "$AJ_TMP/$who/back" 2>/dev/null | cmp -s - "$AJ_TMP/big"
		ok $? "$who: __connect: 3 MB through an IPv6 literal's tunnel come back whole (half-close)" ||
			diag "$res"
	else
		skip "$who: __connect through a stand-in proxy" "unshare or /usr/bin/python3 missing"
	fi

	# --- __connect inside the jail, through the real proxy ------------------------------------
	aj_run "$who" -- run --net allow -- /run/agentjail/init __connect denied.example 22
	is "$RC" 1 "$who: --net allow: __connect to a name not on the list exits 1" || _last_run_diag
	like "$ERR" 'denied.example:22 refused by the proxy \(403\): denied.example:22 is not on the allow list \(add --allow-domain denied.example:22\)' \
		"$who: … with the proxy's reason" || _last_run_diag
	like "$ERR" 'agentjail: denied 1 connection: denied.example:22' "$who: … and the run's denied line names it" ||
		_last_run_diag
	aj_run "$who" -- run --net allow --map-host sshhost.test=127.0.0.1 --dry-run -- true
	if [ "$RC" = 2 ]; then
		skip "$who: __connect through the proxy to a mapped host" "--map-host is not parsed by this build"
	elif [ -z "$echo_port" ]; then
		skip "$who: __connect through the proxy to a mapped host" "no echo server (python3)"
	else
		aj_run "$who" -- run --net allow --map-host sshhost.test=127.0.0.1 \
			--allow-domain "sshhost.test:$echo_port" -- \
			sh -c "printf 'ping\\n' | /run/agentjail/init __connect sshhost.test $echo_port"
		is "$RC/$OUT" $'0/SSH-2.0-echo\nping' \
			"$who: __connect reaches a mapped host's service through the proxy, half-closed" ||
			_last_run_diag
	fi

	# --- a namespace that cannot be built: 125, the step named, nothing run -------------------
	for step in "unshare" "write /proc/self/uid_map" "bring lo up" "listen on 127.0.0.1:53"; do
		rm -f "$WS/ran"
		aj_run "$who" -b agentjail-testbuild -e "AGENTJAIL_TEST_NETNS_FAIL=$step" -- \
			run --net allow -- "$P" write "$WS/ran"
		rc_is 125 "$who: the holder failing at '$step' is exit 125"
		like "$ERR" "could not be built: ${step//./\\.}[^ ]* .*failed" \
			"$who: … the step is named" || _last_run_diag
		[ ! -e "$WS/ran" ]
		ok $? "$who: … and the command never ran"
	done
	aj_run "$who" -b agentjail-testbuild -e "AGENTJAIL_TEST_NETNS_FAIL=unshare" -- \
		run --net allow -- "$P" write "$WS/ran"
	unlike "$ERR" 'shares the host' "$who: … and nothing falls back to --net on" || _last_run_diag
done
aj_skip_missing_whos "--net allow namespace holder"
done_testing
