#!/usr/bin/env bash
# --net ask (doc/design.md §4, "Ask instead of fail"), end to end with real clients against a
# local server (tests/helpers/netsrv.py) reached through the jail's proxy under names mapped
# to it (--map-host NAME=127.0.0.1 allows NAME on 80 and 443 only: on the server's port it is
# asked). As root and as an unprivileged user:
#   - at the terminal that started the run (tmux): once, session, always (written to the
#     user's configuration, which a later run then allows) and deny;
#   - the jail cannot answer its own question: printing the question's text, writing keys to
#     its terminal, TIOCSTI, terminal queries whose replies come back as input, and replies
#     typed while the question is shown all leave it unanswered until it times out (denied);
#   - a full-screen program (curses) keeps its screen: the question takes its last line and
#     the program redraws after the answer;
#   - with no terminal: denied after the timeout, saying where to answer;
#   - from another shell: agentjail net questions|allow|deny release a waiting connection;
#   - agentjail tui shows the question and answers it;
#   - every question and answer is an event of the session.
. "$(dirname "$0")/lib.sh"
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed (scripts/deps.sh installs it)"
	exit 0
fi
aj_setup
. "$(dirname "$0")/netlib.sh"
srv web http --name web
WP=$PORT_web
MAP=(--map-host ask.test=127.0.0.1 --map-host deny.test=127.0.0.1
	--map-host always.test=127.0.0.1 --map-host other.test=127.0.0.1)

tm() { aj_tmux "$@"; }
screen() { tm capture-pane -p -t t 2>/dev/null; }

# wait_for ERE [SECONDS] — until the pane shows it (default 15 s); SCREEN holds the last capture
wait_for() { aj_tmux_wait t "$1" "${2:-15}"; }

# in_tmux AGENTJAIL-ARGS… — agentjail in a fresh 100x30 tmux pane "t" as WHO, in WS; the pane
# says AJ-EXIT=N when it ends
in_tmux() {
	tm kill-server 2>/dev/null
	local i
	for i in $(seq 1 50); do # the old server gone before a new one takes the socket
		[ -S "$AJ_TMP/$AJ_WHO/tmux.sock" ] || break
		tm has-session 2>/dev/null || { rm -f "$AJ_TMP/$AJ_WHO/tmux.sock"; break; }
		sleep 0.05
	done
	local q
	q=$(printf '%q ' env -i -C "$WS" PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME" \
		LANG=C.UTF-8 TERM=screen AGENTJAIL_STATE_DIR="$STATE" "$AJ_BIN/agentjail" "$@")
	tm -f /dev/null new-session -d -s t -x 100 -y 30 "$q; echo AJ-EXIT=\$?; sleep 600"
	AJ_PIDS+=("$(tm display-message -p '#{pid}')")
}

# the newest session of WHO and its events (kind answer…) as "kind:answer" words
newest() { aj_run "$AJ_WHO" -- sessions --json && SID=$(py "d[0]['id']"); }
events() {
	aj_run "$AJ_WHO" -- show "$SID" --json
	py "' '.join(e['kind'] + ':' + str((e.get('detail') or {}).get('answer', '-')) for e in d['events_detail'])"
}

# wait_events ERE — until the events of session SID match (15 s)
wait_events() {
	local i
	for i in $(seq 1 75); do
		EVENTS=$(events)
		[[ $EVENTS =~ $1 ]] && return 0
		sleep 0.2
	done
	diag "the events never matched /$1/: $EVENTS"
	return 1
}

# curl through the proxy, one line "TAG CODE" (one line of sh: tmux runs the user's shell on
# it, which may be dash)
C='c() { curl -sS -m 60 -o /dev/null -w "$1 %{http_code}\n" "http://$2/x"; }'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# ---- at the terminal: once, session, deny, always ----------------------------------
	rm -rf "$HOMEDIR/.config"
	in_tmux run --net ask "${MAP[@]}" -- sh -c "$C; echo BEFORE; c ONE ask.test:$WP; c TWO ask.test:$WP; c THREE ask.test:$WP; c FOUR deny.test:$WP; c FIVE deny.test:$WP; c SIX always.test:$WP; echo DONE"
	wait_for "the jail asks to connect to ask\.test:$WP \(http\)"
	ok $? "$who: the question is put at the terminal, naming host and port"
	like "$SCREEN" '\[o\] once' "$who: ... with its answers"
	unlike "$SCREEN" 'BEFORE' "$who: ... on a screen of its own"
	sleep 0.4 # past the first keys' guard
	tm send-keys -t t o
	newest
	wait_events "^net.ask:- net.answer:once net.ask:-$" && wait_for "the jail asks to connect"
	ok $? "$who: once: the next request is asked again"
	sleep 0.4
	tm send-keys -t t s
	wait_for "the jail asks to connect to deny\.test:$WP"
	ok $? "$who: s: for the session (the third request is not asked)"
	sleep 0.4
	tm send-keys -t t d
	wait_for "the jail asks to connect to always\.test:$WP"
	sleep 0.4
	tm send-keys -t t a
	wait_for "AJ-EXIT=0"
	ok $? "$who: a lets it through, and the run ends"
	is "$(grep -Ex 'BEFORE|[A-Z]+ [0-9]+|DONE' <<<"$SCREEN" | tr '\n' ' ')" \
		"BEFORE ONE 200 TWO 200 THREE 200 FOUR 403 FIVE 403 SIX 200 DONE " \
		"$who: once, session (and after), deny (and after), always; the screen as the jail left it"
	like "$SCREEN" "always\.test:$WP added in allow_domains of \[policy\]" \
		"$who: ... and says where it was written"
	newest
	is "$(events)" "net.ask:- net.answer:once net.ask:- net.answer:session net.ask:- net.answer:deny net.ask:- net.answer:always" \
		"$who: every question and answer is an event (four asked: not the third, nor the fifth)"
	aj_run "$who" -- log "$SID" --json
	like "$OUT" "was denied when asked \(the terminal\)" "$who: the denial's reason names who answered"
	cfg=$HOMEDIR/.config/agentjail/config.toml
	grep -q "allow_domains = \[\"always.test:$WP\"\]" "$cfg" 2>/dev/null
	ok $? "$who: always wrote the entry to the user's configuration" || diag "$(cat "$cfg" 2>&1)"
	[ ! -e "$WS/.agentjail.toml" ]
	ok $? "$who: ... never a project's file"
	is "$(stat -c %a "$cfg")" 600 "$who: ... a file of the user's alone"
	aj_run "$who" -- run --net allow "${MAP[@]}" -- sh -c "$C; c LATER always.test:$WP"
	is "$OUT" "LATER 200" "$who: a later run allows it from the configuration, unasked"
	rm -rf "$HOMEDIR/.config"

	# ---- the jail cannot answer ------------------------------------------------------------
	cat >"$WS/forge.py" <<'EOF'
import fcntl, os, sys, termios, time
tty = os.open("/dev/tty", os.O_RDWR)
# the question's own words, as the jail could print them
os.write(tty, b"agentjail [9s] allow ask.test? o once, s session, a always, d deny, Esc later\r\n")
# queries: the terminal's replies come back on its input
os.write(tty, b"\033[6n\033[c\033]11;?\007")
for ch in b"as":
    try:
        fcntl.ioctl(tty, termios.TIOCSTI, bytes([ch]))
        print("TIOCSTI worked", flush=True)
    except OSError as e:
        print("TIOCSTI refused", e.errno, flush=True)
if os.fork() == 0:  # keys written to its terminal while the question is out
    for _ in range(8):
        time.sleep(0.3)
        os.write(tty, b"a\r\n\033[6n")
    os._exit(0)
os.execvp("sh", ["sh", "-c", sys.argv[1]])
EOF
	aj_chown "$WS/forge.py"
	in_tmux run --net ask --ask-timeout 5 "${MAP[@]}" -- python3 forge.py "$C; c FORGED ask.test:$WP; sleep 1"
	wait_for "the jail asks to connect to ask\.test:$WP"
	ok $? "$who: (the jail prints the question's words and writes keys to its terminal)"
	sleep 0.5
	# what a terminal sends by itself, typed while the question is shown
	tm send-keys -t t -l $'\e[24;80R'
	tm send-keys -t t -l $'\e[?64;1;2c'
	tm send-keys -t t -l $'\e]11;rgb:0000/0000/0000\e\\'
	tm send-keys -t t -l $'\e]lsession always\e\\' # a title report (xterm's CSI 21 t)
	sleep 0.5
	like "$(screen)" "the jail asks to connect to ask\.test:$WP" \
		"$who: terminal replies typed while it is shown do not answer it"
	wait_for "AJ-EXIT=" 20
	like "$SCREEN" "FORGED 403" "$who: nothing the jail did answered: denied at the timeout"
	unlike "$SCREEN" "TIOCSTI worked" "$who: ... TIOCSTI was refused"
	newest
	is "$(events)" "net.ask:- net.answer:timeout" "$who: ... the answer recorded is the timeout"
	aj_run "$who" -- log "$SID" --json
	like "$OUT" "no answer within 5 s" "$who: ... and the log says so"

	# ---- a full-screen program -------------------------------------------------------------
	cat >"$WS/fullscreen.py" <<'EOF'
import curses, os, sys, threading, urllib.request
result = ["waiting"]
def fetch():
    try:
        op = urllib.request.build_opener(urllib.request.ProxyHandler({"http": os.environ["HTTP_PROXY"]}))
        result[0] = op.open(sys.argv[1], timeout=60).read().decode().split()[0:3]
        result[0] = " ".join(result[0])
    except Exception as e:
        result[0] = "ERR " + type(e).__name__
def main(w):
    curses.curs_set(0)
    w.timeout(100)
    started = False
    while not os.path.exists("stop"):
        rows, cols = w.getmaxyx()
        w.erase()
        w.addstr(0, 0, "TOP-MARK")
        w.addstr(1, 0, "RESULT: " + result[0])
        w.addstr(rows - 1, 0, "BOTTOM-MARK %dx%d" % (rows, cols))
        w.refresh()
        if not started:  # its screen is up, then it goes to the network
            started = True
            threading.Thread(target=fetch, daemon=True).start()
        w.getch()
curses.wrapper(main)
EOF
	aj_chown "$WS/fullscreen.py"
	rm -f "$WS/stop"
	in_tmux run --net ask --quiet "${MAP[@]}" -- python3 fullscreen.py "http://ask.test:$WP/x"
	wait_for "agentjail \[[0-9]+s\] allow ask\.test:$WP \(http\)\?"
	ok $? "$who: over a full-screen program the question takes the last line"
	like "$SCREEN" "TOP-MARK" "$who: ... the rest of its screen stays"
	sleep 0.4
	tm send-keys -t t s
	wait_for "RESULT: hello from web" && wait_for "BOTTOM-MARK 30x100"
	ok $? "$who: answered, the program redraws its whole screen at its size"
	unlike "$SCREEN" "agentjail \[" "$who: ... and the question is gone"
	touch "$WS/stop"
	aj_chown "$WS/stop"
	wait_for "AJ-EXIT=0"
	ok $? "$who: the program ends as it would"

	# ---- no terminal -----------------------------------------------------------------------
	aj_run "$who" -- run --net ask --ask-timeout 2 "${MAP[@]}" -- sh -c \
		"$C; s=\$(date +%s%N); c NOTTY ask.test:$WP; echo ms=\$(( (\$(date +%s%N) - s) / 1000000 ))"
	like "$OUT" "NOTTY 403" "$who: no terminal: denied after the timeout"
	ms=$(sed -n 's/^ms=//p' <<<"$OUT")
	[ "${ms:-0}" -ge 1800 ] && [ "${ms:-0}" -lt 15000 ]
	ok $? "$who: ... after it (${ms:-?} ms for a 2 s timeout)"
	like "$ERR" "the jail asks to connect to ask\.test:$WP: agentjail net allow [0-9a-f-]+ ask\.test:$WP" \
		"$who: ... having said on stderr how to answer it from another shell"

	# ---- another shell ---------------------------------------------------------------------
	rm -f "$WS/bg.out"
	aj_cmd "$who" -- run --net ask --ask-timeout 60 "${MAP[@]}" -- sh -c \
		"$C; s=\$(date +%s); c BG ask.test:$WP; c BG2 other.test:$WP; echo took=\$((\$(date +%s) - s))"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	for i in $(seq 1 100); do
		newest
		aj_run "$who" -- net questions "$SID" --json
		[ "$(py "len(d)" 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	is "$(py "d[0]['entry']")" "ask.test:$WP" "$who: agentjail net questions lists the waiting question"
	sock=$STATE/run/$SID.sock
	is "$(stat -c '%a %U' "$sock") $(stat -c '%a %U' "$STATE/run")" "600 $RUN_NAME 700 $RUN_NAME" \
		"$who: the control socket is the user's alone, 0600 in a 0700 directory"
	if aj_is_root; then
		# opened up by hand: the server still answers no one but the user and root
		chmod 0755 "$STATE/run"
		chmod 0777 "$sock"
		got=$(setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH="$AJ_SYS_PATH" python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
try:
    s.sendall(b"AJ1 ping\nAJ1 answer 1 always net\n")
    print(repr(s.recv(4096)))
except (BrokenPipeError, ConnectionResetError):
    print(repr(b""))' "$sock" 2>&1)
		chmod 0700 "$STATE/run"
		chmod 0600 "$sock"
		is "$got" "b''" "$who: another user connecting to the socket gets no word (SO_PEERCRED)"
	fi
	aj_run "$who" -- net allow "${SID:0:8}" "ask.test:$WP"
	rc_is 0 "$who: agentjail net allow ID HOST:PORT from another shell"
	like "$OUT" "ask\.test:$WP allowed for the session" "$who: ... says what it did"
	for i in $(seq 1 100); do
		aj_run "$who" -- net questions "$SID" --json
		[ "$(py "d[0]['entry'] if d else ''" 2>/dev/null)" = "other.test:$WP" ] && break
		sleep 0.1
	done
	aj_run "$who" -- net deny "$SID" "other.test:$WP"
	rc_is 0 "$who: agentjail net deny ID HOST:PORT"
	wait "$bg"
	out=$(tr -d '\r' <"$AJ_TMP/bg.out")
	like "$out" "BG 200" "$who: ... the waiting connection was released"
	like "$out" "BG2 403" "$who: ... and the denied one refused"
	took=$(sed -n 's/^took=//p' <<<"$out")
	[ "${took:-99}" -lt 30 ]
	ok $? "$who: ... long before the timeout (${took:-?} s of 60)"
	# a direct connection (no proxy: captured, doc/design.md §4) waits in connect() as well
	aj_cmd "$who" -- run --net ask --ask-timeout 60 "${MAP[@]}" -- env -u HTTP_PROXY \
		-u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy python3 -c "
import socket, time
t = time.time()
s = socket.create_connection(('ask.test', $WP), timeout=60)
s.sendall(b'GET /direct HTTP/1.0\\r\\nHost: ask.test\\r\\n\\r\\n')
r = b''
while True:
    k = s.recv(4096)
    if not k:
        break
    r += k
print(r.decode().split('\\r\\n\\r\\n', 1)[1].strip(), 'after', int(time.time() - t), 's')"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	for i in $(seq 1 100); do
		newest
		aj_run "$who" -- net questions "$SID" --json
		[ "$(py "d[0]['proto'] if d else ''" 2>/dev/null)" = tcp ] && break
		sleep 0.1
	done
	is "$(py "d[0]['entry'] + ' ' + d[0]['proto']")" "ask.test:$WP tcp" \
		"$who: a captured direct connection is asked about too"
	aj_run "$who" -- net allow "$SID" "ask.test:$WP" --once
	wait "$bg"
	like "$(tr -d '\r' <"$AJ_TMP/bg.out")" "^hello from web host=ask.test path=/direct after [0-9]+ s" \
		"$who: ... and, allowed, it connects (to the name's mapped address)"

	aj_run "$who" -- net allow "$SID" "ask.test:$WP"
	rc_is 1 "$who: a session that ended has nothing to answer"
	like "$ERR" "is not running" "$who: ... it says so"
	aj_run "$who" -- net allow "$SID" "a b"
	rc_is 2 "$who: a HOST that is not one is refused"

	# the control socket exists while the run lasts, outside the jail's view (the state
	# directory is masked in every jail)
	aj_cmd "$who" -- run --net ask -- sh -c \
		"sleep 1; for s in $STATE/run/*.sock; do [ -S \"\$s\" ] && echo SEEN; done; echo looked"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	seen=
	for i in $(seq 1 40); do
		for sk in "$STATE"/run/*.sock; do [ -S "$sk" ] && seen=1; done
		[ -n "$seen" ] && break
		sleep 0.05
	done
	wait "$bg"
	is "${seen:-no}:$(cat "$AJ_TMP/bg.out")" "1:looked" \
		"$who: while the run lasts its control socket exists, and the jail does not see it"

	# ---- agentjail tui ---------------------------------------------------------------------
	aj_cmd "$who" -- run --net ask --ask-timeout 60 "${MAP[@]}" -- sh -c "$C; c TUI ask.test:$WP"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	in_tmux tui
	wait_for "asks: allow ask\.test:$WP \(http\)"
	ok $? "$who: agentjail tui shows the running session's question"
	tm send-keys -t t o
	wait "$bg"
	like "$(tr -d '\r' <"$AJ_TMP/bg.out")" "TUI 200" "$who: ... o in the TUI lets it through"
	newest
	aj_run "$who" -- log "$SID" --json
	like "$OUT" "allowed once when asked \(agentjail tui, uid $RUN_UID\)" \
		"$who: ... and the event says the TUI answered"
	tm send-keys -t t q
	tm kill-server 2>/dev/null
done
done_testing
