#!/usr/bin/env bash
# agentjail ps, exec, stop (issue 26 item 23; doc/design.md §5 "ps, exec, stop"): ps lists a
# running jail and not a finished one; exec's command runs inside the jail under the same
# confinement as the jail's first command (same namespaces, seccomp, no_new_privs, capabilities,
# Landlock; the host's $HOME unseen); nobody but the user (and root) is answered on the
# session's control socket (SO_PEERCRED); stop ends the run as if it had finished, and the
# session's record says so.
. "$(dirname "$0")/lib.sh"
aj_setup

if [ -z "$(command -v python3)" ]; then
	skip "ps, exec, stop" "needs python3 (to read ps --json and the socket)"
	done_testing
fi

py() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" <<<"$OUT"; }

# what tells a process's confinement, then its namespaces
PROBE='grep -E "^(Seccomp|Seccomp_filters|NoNewPrivs|CapEff|CapPrm|CapBnd):" /proc/self/status; for n in pid mnt net user ipc uts cgroup; do echo "$n $(readlink /proc/self/ns/$n)"; done; echo "LL=$AGENTJAIL_LANDLOCK"'
# in the jail only (on the host it would write into the real /dev)
LLDEV='touch /dev/ll-14 2>/dev/null && echo "LL-DEV=written" || echo "LL-DEV=refused"'

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	echo "host-secret" >"$HOMEDIR/host-secret-14"
	aj_chown "$HOMEDIR/host-secret-14"
	# a finished session first: ps does not list it
	aj_run "$who" -- run -- true
	rc_is 0 "$who: a session that ran and ended"
	# the jail that stays: its confinement in main.txt, then it waits for "done" (60 s at most)
	aj_cmd "$who" -- run -- sh -c "{ $PROBE; $LLDEV; } > main.txt; echo x > .envrc; echo ready > main.ready; i=0; while [ ! -e done ] && [ \$i -lt 600 ]; do sleep 0.1; i=\$((i+1)); done; echo end-of-run"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	for i in $(seq 1 300); do [ -e "$WS/main.ready" ] && break; sleep 0.1; done
	[ -e "$WS/main.ready" ]
	ok $? "$who: the jail runs" || { diag "$(cat "$AJ_TMP/bg.err")"; continue; }

	# ---- ps -------------------------------------------------------------------------------
	aj_run "$who" -- ps --json
	rc_is 0 "$who: agentjail ps --json"
	is "$(py 'len(d)')" 1 "$who: ps lists the running jail, and not the session that ended"
	SID=$(py "d[0]['id']")
	JPID=$(py "d[0]['pid']")
	like "$(py "' '.join(d[0]['command'])")" "^sh -c .*main\.ready" "$who: ... with its command"
	is "$(py "d[0]['policy']['net']")" off "$who: ... its policy"
	[ "$JPID" -gt 1 ] && [ -d "/proc/$JPID" ] && [ "$(cut -d' ' -f1 "/proc/$JPID/stat")" = "$JPID" ]
	ok $? "$who: ... its first process on the host (pid $JPID)"
	[ "$(py "d[0]['processes']")" -ge 2 ] && [ "$(py "d[0]['rss_bytes']")" -gt 0 ]
	ok $? "$who: ... and the memory of its processes ($(py "d[0]['processes']") of them)"
	aj_run "$who" -- ps
	like "$OUT" "^ID +PID +AGE +CPU +MEM +POLICY +COMMAND" "$who: ps: a table"
	like "$OUT" "${SID:0:8} +$JPID .* sh -c " "$who: ... with the jail's row"

	# ---- exec -----------------------------------------------------------------------------
	aj_run "$who" -- exec "${SID:0:8}" -- sh -c "$PROBE; $LLDEV; [ -e '$HOMEDIR/host-secret-14' ] && echo HOME-SEEN || echo HOME-UNSEEN; echo pid1=\$(cat /proc/1/comm)"
	rc_is 0 "$who: agentjail exec ID -- CMD"
	is "$(grep -E '^(Seccomp|NoNewPrivs|Cap|LL=|LL-DEV=|(pid|mnt|net|user|ipc|uts|cgroup) )' <<<"$OUT")" \
		"$(cat "$WS/main.txt")" \
		"$who: exec's command has the jail's seccomp, no_new_privs, capabilities, Landlock and namespaces"
	# the comparison tells a process outside the jail apart (what nsenter from the host would
	# have missed: its seccomp filter, no_new_privs)
	host=$(aj_host sh -c "$PROBE")
	[ "$host" != "$(grep -v LL-DEV "$WS/main.txt")" ]
	ok $? "$who: ... (a process of the host compares different)"
	like "$(cat "$WS/main.txt")" "NoNewPrivs:	1" "$who: ... no_new_privs set"
	like "$(cat "$WS/main.txt")" "Seccomp:	2" "$who: ... a seccomp filter"
	if aj_is_root && [ "$who" = root ]; then
		# /dev is a writable tmpfs the jail's root owns: only Landlock refuses a new file there
		like "$(cat "$WS/main.txt")" "LL-DEV=refused" "$who: ... Landlock (a new file in /dev refused: compared above)"
	fi
	like "$OUT" "HOME-UNSEEN" "$who: ... it does not see the host's \$HOME"
	like "$OUT" "pid1=init" "$who: ... its PID 1 is the jail's init"
	aj_run "$who" -i "$AJ_SRC/README.md" -- exec "$SID" -- sh -c 'wc -l; exit 7'
	is "$RC/$(tr -d ' ' <<<"$OUT")" "7/$(wc -l <"$AJ_SRC/README.md")" \
		"$who: exec: stdin and stdout are the caller's, the exit status the command's"
	# started with fd 0 closed: the exec channel must not land on it (the client's own end
	# would go into the jail as stdin, and the jail could swallow init's replies)
	aj_cmd "$who" -- exec "$SID" -- sh -c 'read x; echo "read=$?"; exit 5'
	timeout 20 "${AJ_CMD[@]}" <&- >"$AJ_TMP/out" 2>"$AJ_TMP/err"
	is "$?/$(cat "$AJ_TMP/out")" "5/read=1" "$who: exec with stdin closed: the command reads nothing, its status comes back"
	aj_run "$who" -- exec "$SID" -- /nonexistent-14
	rc_is 127 "$who: exec of a missing command: 127"
	like "$ERR" "cannot run /nonexistent-14" "$who: ... said"
	aj_run "$who" -t -- exec "$SID" -- sh -c 'test -t 0 && test -t 1 && echo TERM-OK; [ -w /dev/tty ] && echo CTTY-OK'
	like "$OUT" "TERM-OK" "$who: exec on a terminal: the command gets one"
	like "$OUT" "CTTY-OK" "$who: ... as its controlling terminal"

	# signals: agentjail exec's are the command's; its death hangs the command up
	aj_cmd "$who" -- exec "$SID" -- sh -c 'trap "echo got-TERM; exit 3" TERM; echo started; while :; do sleep 0.1; done'
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/ex.out" 2>"$AJ_TMP/ex.err" &
	ex=$!
	for i in $(seq 1 100); do grep -q started "$AJ_TMP/ex.out" && break; sleep 0.1; done
	kill -TERM "$ex"
	wait "$ex"
	erc=$?
	is "$erc/$(grep -c got-TERM "$AJ_TMP/ex.out")" "3/1" "$who: exec: a SIGTERM to agentjail exec reaches the command"
	aj_cmd "$who" -- exec "$SID" -- python3 -c 'import time; print("started", flush=True); time.sleep(600)' hangup-marker-14
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/ex.out" 2>"$AJ_TMP/ex.err" &
	ex=$!
	for i in $(seq 1 100); do grep -q started "$AJ_TMP/ex.out" && break; sleep 0.1; done
	{ kill -KILL "$ex"; wait "$ex"; } 2>/dev/null
	aj_run "$who" -- exec "$SID" -- sh -c 'for i in $(seq 1 50); do grep -qs "hangup-marker-1[4]" /proc/[0-9]*/cmdline || { echo GONE; exit 0; }; sleep 0.1; done; echo STILL'
	like "$OUT" "GONE" "$who: ... and when agentjail exec is killed, the command is hung up"

	# ---- another user ---------------------------------------------------------------------
	sock=$STATE/run/$SID.sock
	if aj_is_root; then
		# opened up by hand: still no word for anyone but the user and root
		other=65534
		[ "$who" = root ] && other=$(id -u "$AJ_USER")
		chmod 0755 "$STATE/run"
		chmod 0777 "$sock"
		got=$(setpriv --reuid="$other" --regid="$other" --clear-groups env -i PATH="$AJ_SYS_PATH" python3 -c '
import array, os, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
a.send(b"AJX1\x00/bin/sh\x00-c\x00touch pwned-14\x00")
got = b""
try:
    s.sendmsg([b"AJ1 exec\n"],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno(), 0, 1, 2]))])
    got += s.recv(4096)
    time.sleep(1)
    s.sendall(b"AJ1 ps\nAJ1 stop\n")
    got += s.recv(4096)
except (BrokenPipeError, ConnectionResetError):
    pass
print(repr(got))' "$sock" 2>&1)
		chmod 0700 "$STATE/run"
		chmod 0600 "$sock"
		is "$got" "b''" "$who: another user on the control socket gets no word (SO_PEERCRED)"
		sleep 0.5
		[ ! -e "$WS/pwned-14" ]
		ok $? "$who: ... its exec ran nothing"
		aj_run "$who" -- ps --json
		is "$(py 'len(d)')" 1 "$who: ... and its stop stopped nothing"
	else
		skip "$who: another user on the control socket gets no word" "needs root to make one"
	fi

	# ---- stop -----------------------------------------------------------------------------
	aj_run "$who" -- stop "${SID:0:8}"
	rc_is 0 "$who: agentjail stop ID"
	like "$OUT" "session $SID stopped: killed" "$who: ... says it ended"
	wait "$bg"
	brc=$?
	[ "$brc" -ne 0 ] && ! grep -q end-of-run "$AJ_TMP/bg.out"
	ok $? "$who: ... the run ended before its command did (exit $brc)"
	aj_run "$who" -- show "$SID" --json
	is "$(py "d['status']")" killed "$who: the session's record: killed"
	[ "$(py "d['violations']")" -ge 1 ] && [ ! -e "$WS/.envrc" ]
	ok $? "$who: ... with the guard's finding (the .envrc the jail made, moved aside)"
	is "$(py "[e['detail'].get('uid') for e in d['events_detail'] if e['kind'] == 'session.stop']")" \
		"[$RUN_UID]" "$who: ... with who stopped it (a session.stop event, uid $RUN_UID)"
	aj_run "$who" -- ps --json
	is "$(py 'len(d)')" 0 "$who: ps no longer lists it"
	[ ! -e "$sock" ]
	ok $? "$who: its control socket is gone"
	aj_run "$who" -- exec "$SID" -- true
	rc_is 125 "$who: exec into a session that ended: 125"
	like "$ERR" "is not running" "$who: ... it says so"

	# ---- --net allow: exec's command is not captured, so it connects nothing at all -------
	# The jail's command (captured) is handed a host socket for each allowed connect (the
	# relay's, port 443); it passes one to exec's command (a Unix datagram: no connect
	# needed), which, with no capture over it, would disconnect it (AF_UNSPEC) and connect it
	# from the host's network anywhere: here a listener on the host's loopback.
	rm -f "$WS/done" "$WS/main.ready" "$WS/fdbox-14" "$AJ_TMP/host.port" "$AJ_TMP/host.got"
	timeout 120 python3 -c '
import socket, sys
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(4); l.settimeout(110)
open(sys.argv[1] + ".tmp", "w").write(str(l.getsockname()[1]))
__import__("os").rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, a = l.accept(); c.settimeout(3)
    try: d = c.recv(100)
    except OSError: d = b""
    open(sys.argv[2], "a").write("GOT %r\n" % d)' "$AJ_TMP/host.port" "$AJ_TMP/host.got" &
	AJ_PIDS+=("$!")
	for i in $(seq 1 100); do [ -e "$AJ_TMP/host.port" ] && break; sleep 0.1; done
	hport=$(cat "$AJ_TMP/host.port")
	aj_cmd "$who" -- run --net allow --allow-domain 192.0.2.1 -- python3 -c '
import array, os, socket, time
open("main.ready", "w").write("r")
for i in range(600):
    if os.path.exists("done"): break
    if os.path.exists("fdbox-14") and not os.path.exists("fdbox-14.sent"):
        s = socket.socket(); s.setblocking(False)
        try: s.connect(("192.0.2.1", 443))
        except BlockingIOError: pass
        time.sleep(0.3)
        u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        u.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [s.fileno()]))], 0, "fdbox-14")
        open("fdbox-14.sent", "w").write("s")
    time.sleep(0.1)'
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	for i in $(seq 1 300); do [ -e "$WS/main.ready" ] && break; sleep 0.1; done
	aj_run "$who" -- exec --last -- python3 -c '
import array, ctypes, os, socket, struct, sys
try:
    socket.create_connection(("192.0.2.1", 80), timeout=5)
    print("DIRECT connected")
except OSError as e:
    print("DIRECT", e.errno in (13, 101) and "refused" or e)
print("PROXY", os.environ.get("HTTPS_PROXY"))
u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); u.bind("fdbox-14"); u.settimeout(20)
_, anc, _, _ = u.recvmsg(1, socket.CMSG_LEN(4))
fd = array.array("i", anc[0][2])[0]
print("HELD", socket.socket(fileno=os.dup(fd)).getsockname())
libc = ctypes.CDLL(None, use_errno=True)
unspec = struct.pack("H14x", 0)
r = libc.connect(fd, unspec, len(unspec))
print("UNSPEC", r == 0 and "disconnected" or "refused %d" % ctypes.get_errno())
s = socket.socket(fileno=fd); s.settimeout(5)
try:
    s.connect(("127.0.0.1", int(sys.argv[1]))); s.sendall(b"ESCAPED-14"); print("HOST connected")
except OSError as e:
    print("HOST", e)' "$hport"
	like "$OUT" "DIRECT refused" "$who: --net allow: exec's direct connection goes nowhere"
	like "$OUT" "PROXY http://127\.0\.0\.1:3128" "$who: ... its environment names the proxy, as the jail's command's does"
	like "$OUT" "HELD \('127\.0\.0\.1'" "$who: ... handed a host socket the capture gave the jail's command (its relay's)"
	like "$OUT" "UNSPEC refused 13" "$who: ... it cannot disconnect it (connect refused: no capture serves exec's command)"
	sleep 0.5
	is "$(cat "$AJ_TMP/host.got" 2>/dev/null)" "" "$who: ... nor connect it to a port of the host's loopback"
	unlike "$OUT" "HOST connected" "$who: ... (exec's command says so too)"
	touch "$WS/done"
	aj_chown "$WS/done"
	wait "$bg"
done

done_testing
