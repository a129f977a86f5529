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
