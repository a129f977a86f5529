#!/usr/bin/env bash
# Sockets: host Unix sockets under /run and /tmp, host abstract sockets and loopback services are
# unreachable with the network off; socket families outside unix/inet/inet6/netlink fail.
. "$(dirname "$0")/lib.sh"
aj_setup

if aj_is_root; then
	RUN_SOCK=/run/agentjail-test-$$.sock
else
	RUN_SOCK=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}/agentjail-test-$$.sock
fi
TMP_SOCK=/tmp/agentjail-test-$$.sock
ABS_NAME=agentjail-test-$$-abstract
AJ_CLEAN+=("$RUN_SOCK" "$TMP_SOCK")

have_run=; have_tmp=; have_abs=; tcp_port=
aj_listen run listen-unix "$RUN_SOCK" && have_run=1
aj_listen tmp listen-unix "$TMP_SOCK" && have_tmp=1
aj_listen abs listen-abstract "$ABS_NAME" && have_abs=1
aj_listen tcp listen-tcp 127.0.0.1 0 && tcp_port=${LISTEN_OUT#ready }

# Landlock ABI (6 scopes abstract sockets and signals); 0 when unavailable.
landlock_abi=$("$PROBE" landlock-abi 2>/dev/null)
[[ $landlock_abi =~ ^[0-9]+$ ]] || landlock_abi=0
diag "Landlock ABI on this kernel: $landlock_abi"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# --- host Unix sockets ------------------------------------------------------------------
	for spec in "run:$RUN_SOCK" "tmp:$TMP_SOCK"; do
		kind=${spec%%:*} path=${spec#*:}
		var=have_$kind
		if [ -z "${!var}" ]; then
			skip "$who: a listening Unix socket at $path is unreachable" "could not start the listener"
			continue
		fi
		aj_host "$PROBE" connect-unix "$path" >/dev/null
		ok $? "$who: control: $path is reachable on the host"
		aj_run "$who" -- run -- "$P" connect-unix "$path"
		probe_denied "$who: the host's listening Unix socket $path is unreachable inside"
		aj_run "$who" -- run --net on -- "$P" connect-unix "$path"
		probe_denied "$who: … also with --net on"
	done

	# --- host abstract socket -----------------------------------------------------------------
	if [ -n "$have_abs" ]; then
		aj_host "$PROBE" connect-abstract "$ABS_NAME" >/dev/null
		ok $? "$who: control: the abstract socket @$ABS_NAME is reachable on the host"
		aj_run "$who" -- run -- "$P" connect-abstract "$ABS_NAME"
		probe_denied "$who: the host's abstract socket is unreachable inside (--net off)"
		aj_run "$who" -- run --net on -- "$P" connect-abstract "$ABS_NAME"
		if [ "$landlock_abi" -ge 6 ]; then
			# doc/design.md §3: Landlock scoping closes abstract sockets where the kernel has it.
			probe_denied "$who: --net on: the host abstract socket is unreachable (Landlock ABI $landlock_abi scope)"
		else
			skip "$who: --net on: abstract socket unreachable" "Landlock ABI $landlock_abi < 6: no scoping on this kernel"
		fi
	else
		skip "$who: a host abstract socket is unreachable" "could not start the listener"
	fi

	# --- host loopback service ------------------------------------------------------------------
	if [ -n "$tcp_port" ]; then
		aj_run "$who" -- run -- "$P" connect-tcp 127.0.0.1 "$tcp_port"
		probe_denied "$who: --net off: the host's loopback TCP service is unreachable"
		aj_run "$who" -- run --net on -- "$P" connect-tcp 127.0.0.1 "$tcp_port"
		probe_ok "$who: --net on: the host network is shared (loopback service reachable)"
		aj_run "$who" -e AGENTJAIL_NET=on -- run -- "$P" connect-tcp 127.0.0.1 "$tcp_port"
		probe_ok "$who: AGENTJAIL_NET=on shares the host network"
		aj_run "$who" -e AGENTJAIL_NET=on -- run --net off -- "$P" connect-tcp 127.0.0.1 "$tcp_port"
		probe_denied "$who: --net off overrides AGENTJAIL_NET=on"
	else
		skip "$who: loopback service tests" "could not start the TCP listener"
	fi
	aj_run "$who" -- run -- sh -c 'ls /sys/class/net 2>/dev/null || cat /proc/net/dev'
	unlike "$OUT" 'eth|ens|enp|wl|docker|veth|br-' "$who: --net off: no host interface is visible"

	# --- socket families ---------------------------------------------------------------------
	for fam in 1 2 10 16; do
		aj_run "$who" -- run -- "$P" socket "$fam"
		probe_ok "$who: socket family $fam can be created"
	done
	# 17 AF_PACKET, 31 AF_BLUETOOTH, 38 AF_ALG, 40 AF_VSOCK, 44 AF_XDP, 3 AF_AX25, 9 AF_X25,
	# 21 AF_RDS, 29 AF_CAN, 30 AF_TIPC, 42 AF_QIPCRTR, 4 AF_IPX, 5 AF_APPLETALK, 8 AF_ATMPVC
	for fam in 17 31 38 40 44 3 9 21 29 30 42 4 5 8; do
		aj_run "$who" -- run -- "$P" socket "$fam"
		probe_denied "$who: socket family $fam cannot be created"
	done
done
aj_skip_missing_whos "sockets"

done_testing
