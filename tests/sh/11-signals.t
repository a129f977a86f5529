#!/usr/bin/env bash
# Signals: Ctrl-C reaches the command (its own handler runs, agentjail exits with its status);
# SIGTERM to agentjail reaches the command (trap → exit 7), and a command that ignores it is
# killed after the grace period; SIGKILL to agentjail takes the whole jail down, a setsid daemon
# included. With a terminal (tests/helpers/ptydrive.py) and with plain pipes; the terminal's
# settings are identical before and after every catchable case.
. "$(dirname "$0")/lib.sh"
aj_setup

# --- helpers ------------------------------------------------------------------------------------

. "$(dirname "$0")/ptylib.sh"

# How long the driver's wait step took, in ms.
pd_waited_ms() { sed -n 's/^waited //p' <<<"$PD" | tail -n1 | awk '{ printf "%d", $1 * 1000 }'; }

# bg_start [-t] CMD… — start CMD in the background, output to files; sets BG_PID, BG_OUT, BG_ERR.
_bgn=0
bg_start() {
	_bgn=$((_bgn + 1))
	BG_OUT=$AJ_TMP/bg-$_bgn.out
	BG_ERR=$AJ_TMP/bg-$_bgn.err
	"$@" </dev/null >"$BG_OUT" 2>"$BG_ERR" &
	BG_PID=$!
	AJ_PIDS+=("$BG_PID")
}

# wait_for_line FILE ERE [SECS] — until a line of FILE matches (default 10 s)
wait_for_line() {
	local i n=$(( ${3:-10} * 50 ))
	for ((i = 0; i < n; i++)); do
		grep -qE -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.02
	done
	return 1
}

# bg_wait [SECS [SIG]] — send SIG (if given) to BG_PID, wait for it (default 10 s; then SIGKILL);
# sets BG_RC and BG_MS. (bash reports a job killed by a signal on its stderr at the next command:
# the whole function runs with stderr to /dev/null, diag writes to stdout.)
bg_wait() { _bg_wait "$@" 2>/dev/null; }
_bg_wait() {
	local lim=$(( ${1:-10} * 50 )) i start
	[ -n "${2:-}" ] && kill -s "$2" "$BG_PID"
	start=$(date +%s%N)
	for ((i = 0; i < lim; i++)); do
		kill -0 "$BG_PID" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$BG_PID" 2>/dev/null; then
		kill -KILL "$BG_PID" 2>/dev/null
		diag "  pid $BG_PID did not exit within ${1:-10} s: killed"
	fi
	wait "$BG_PID"
	BG_RC=$?
	BG_MS=$((($(date +%s%N) - start) / 1000000))
}

bg_diag() {
	diag "  exit: ${BG_RC:-}"
	diag "  stdout: $(head -c 1500 "$BG_OUT")"
	diag "  stderr: $(head -c 1500 "$BG_ERR")"
}

# wait_running ERE [SECS] — until a process's whole command line matches (default 5 s). Before
# signalling a shell: dash vforks `sleep`, and a signal that lands between its vfork and the exec
# is lost for the trap until the sleep ends (the same without a jail): signal once `sleep` runs.
wait_running() {
	local i n=$(( ${2:-5} * 50 ))
	for ((i = 0; i < n; i++)); do
		pgrep -xf -- "$1" >/dev/null && return 0
		sleep 0.02
	done
	diag "  no process '$1' after ${2:-5} s"
	return 1
}

# survivors ERE — pids (and command lines) of the processes whose command line matches
survivors() { pgrep -af -- "$1"; }

# kill_survivors ERE — leftovers of a failed case, by pid (the test started them)
kill_survivors() {
	local p
	for p in $(pgrep -f -- "$1"); do kill -KILL "$p" 2>/dev/null; done
}

# A unique argument for `sleep`, to find the jail's processes: M=300.<our pid><n>, M_RE the regex
# for the whole command line `sleep M`
_mk=0
marker() { _mk=$((_mk + 1)); M=$(printf '300.%d%02d' $$ "$_mk"); M_RE="sleep ${M//./\\.}"; }

# --- tests ------------------------------------------------------------------------------------

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_wrapper "$who"
	W_DEFAULT=$W
	aj_wrapper "$who" -e AGENTJAIL_GRACE_MS=500
	W_GRACE=$W

	# --- 2. Ctrl-C -----------------------------------------------------------------------------
	if [ -n "$have_py" ]; then
		marker
		pd "ctrlc-$who" 'expect:^ready\n' "running:^$M_RE\$" 'send:\x03' 'expect:got-INT' wait \
			termios:end same:initial:end -- \
			"$W_DEFAULT" run -- sh -c "trap 'echo got-INT; exit 5' INT; echo ready; sleep $M"
		pd_ok "$who: Ctrl-C: the command's INT handler runs (got-INT)"
		pd_exit_is 5 "$who: … and agentjail exits with the command's status (5)"
		pd_has 'compare initial end: same' "$who: … the terminal's settings are identical after Ctrl-C"
	else
		skip "$who: Ctrl-C reaches the command" "python3 is not installed (tests/helpers/ptydrive.py)"
	fi

	# Ctrl-C on a command without a handler: it dies of SIGINT, agentjail exits 130; Ctrl-\
	# reaches a QUIT handler
	if [ -n "$have_py" ]; then
		marker
		pd "ctrlc2-$who" 'expect:^ready\n' "running:^$M_RE\$" 'send:\x03' wait termios:end \
			same:initial:end -- "$W_DEFAULT" run -- sh -c "echo ready; exec sleep $M"
		pd_ok "$who: Ctrl-C kills a command that has no handler"
		pd_exit_is 130 "$who: … agentjail exits 130 (128+SIGINT)"
		pd_has 'compare initial end: same' "$who: … the terminal's settings are identical afterwards"
		marker
		pd "ctrlq-$who" 'expect:^ready\n' "running:^$M_RE\$" 'send:\x1c' 'expect:got-QUIT' wait \
			termios:end same:initial:end -- \
			"$W_DEFAULT" run -- sh -c "trap 'echo got-QUIT; exit 6' QUIT; echo ready; sleep $M"
		pd_ok "$who: Ctrl-\\: the command's QUIT handler runs"
		pd_exit_is 6 "$who: … agentjail exits 6"
		pd_has 'compare initial end: same' "$who: … the terminal's settings are identical afterwards"
	else
		skip "$who: Ctrl-C and Ctrl-\\ reach the command" "python3 is not installed (tests/helpers/ptydrive.py)"
	fi

	# --- 5. SIGTERM reaches a command that traps it -------------------------------------------
	marker
	trap_term="trap 'echo got-TERM; exit 7' TERM; echo ready; sleep $M"
	if [ -n "$have_py" ]; then
		pd "term-$who" 'expect:^ready\n' "running:^$M_RE\$" 'signal:TERM' 'expect:got-TERM' wait \
			termios:end \
			same:initial:end -- "$W_DEFAULT" run -- sh -c "$trap_term"
		pd_ok "$who: terminal: SIGTERM to agentjail reaches the command (got-TERM)"
		pd_exit_is 7 "$who: … agentjail exits 7"
		pd_has 'compare initial end: same' "$who: … the terminal's settings are identical afterwards"
	else
		skip "$who: terminal: SIGTERM reaches the command" "python3 is not installed (tests/helpers/ptydrive.py)"
	fi
	bg_start "$W_DEFAULT" run -- sh -c "$trap_term"
	if wait_for_line "$BG_OUT" '^ready$' && wait_running "$M_RE"; then
		bg_wait 10 TERM
		if [ "$BG_RC" = 7 ] && grep -qx got-TERM "$BG_OUT"; then
			_tap_result 0 "$who: pipes: SIGTERM to agentjail reaches the command, agentjail exits 7"
		else
			_tap_result 1 "$who: pipes: SIGTERM to agentjail reaches the command, agentjail exits 7"
			bg_diag
		fi
	else
		_tap_result 1 "$who: pipes: SIGTERM to agentjail reaches the command, agentjail exits 7"
		diag "  the command did not start"; bg_wait 1; bg_diag
	fi

	# SIGINT sent to agentjail (not typed) is passed on as well
	marker
	bg_start "$W_DEFAULT" run -- sh -c "trap 'echo got-INT; exit 5' INT; echo ready; sleep $M"
	if wait_for_line "$BG_OUT" '^ready$' && wait_running "$M_RE"; then
		bg_wait 10 INT
		if [ "$BG_RC" = 5 ] && grep -qx got-INT "$BG_OUT"; then
			_tap_result 0 "$who: pipes: SIGINT to agentjail reaches the command, agentjail exits 5"
		else
			_tap_result 1 "$who: pipes: SIGINT to agentjail reaches the command, agentjail exits 5"
			bg_diag
		fi
	else
		_tap_result 1 "$who: pipes: SIGINT to agentjail reaches the command, agentjail exits 5"
		diag "  the command did not start"; bg_wait 1; bg_diag
	fi

	# --- 6. a command that ignores SIGTERM: killed after the grace period ------------------------
	marker
	ignore_term="trap '' TERM; echo ready; sleep $M"
	if [ -n "$have_py" ]; then
		pd "grace-$who" 'expect:^ready\n' "running:^$M_RE\$" 'signal:TERM' wait:5 termios:end \
			same:initial:end "gone:$M_RE:1" -- "$W_GRACE" run -- sh -c "$ignore_term"
		pd_ok "$who: terminal: a command ignoring SIGTERM is killed after the grace period, the jail is gone"
		pd_exit_is 137 "$who: … agentjail exits 137"
		ms=$(pd_waited_ms)
		ok $((${ms:-99999} < 5000 ? 0 : 1)) "$who: … promptly (${ms:-?} ms after SIGTERM, grace 500 ms)"
		pd_text_like 'did not exit after SIGTERM' "$who: … and says so"
		pd_has 'compare initial end: same' "$who: … the terminal's settings are identical afterwards"
		kill_survivors "$M_RE"
	else
		skip "$who: terminal: SIGTERM grace period" "python3 is not installed (tests/helpers/ptydrive.py)"
	fi
	marker
	ignore_term="trap '' TERM; echo ready; sleep $M"
	bg_start "$W_GRACE" run -- sh -c "$ignore_term"
	if wait_for_line "$BG_OUT" '^ready$' && wait_running "$M_RE"; then
		bg_wait 10 TERM
		is "$BG_RC" 137 "$who: pipes: a command ignoring SIGTERM is killed after the grace period: exit 137" || bg_diag
		ok $((BG_MS < 5000 ? 0 : 1)) "$who: … promptly (${BG_MS} ms after SIGTERM, grace 500 ms)"
		sleep 0.3
		left=$(survivors "$M_RE")
		is "$left" "" "$who: … nothing of the jail is left"
	else
		_tap_result 1 "$who: pipes: a command ignoring SIGTERM is killed after the grace period"
		diag "  the command did not start"; bg_wait 1; bg_diag
	fi
	kill_survivors "$M_RE"

	# --- 7. SIGKILL to agentjail: the jail goes with it, a setsid daemon included ----------------
	marker
	daemon="setsid sleep $M </dev/null >/dev/null 2>&1 & echo started; sleep $M"
	if [ -n "$have_py" ]; then
		pd "kill-$who" 'expect:^started\n' "running:^$M_RE\$" 'sleep:0.2' 'signal:KILL' wait:5 \
			'sleep:1' "gone:$M_RE:0" -- "$W_DEFAULT" run -- sh -c "$daemon"
		pd_ok "$who: terminal: SIGKILL to agentjail: after one second nothing of the jail survives"
		pd_exit_is 137 "$who: … (agentjail died of SIGKILL)"
		left=$(survivors "$M_RE")
		is "$left" "" "$who: … no process with the marker argument is left"
		kill_survivors "$M_RE"
	else
		skip "$who: terminal: SIGKILL takes the jail down" "python3 is not installed (tests/helpers/ptydrive.py)"
	fi
	marker
	daemon="setsid sleep $M </dev/null >/dev/null 2>&1 & echo started; sleep $M"
	bg_start "$W_DEFAULT" run -- sh -c "$daemon"
	if wait_for_line "$BG_OUT" '^started$'; then
		wait_running "$M_RE"
		sleep 0.2
		n=$(pgrep -cxf -- "$M_RE")
		is "$n" 2 "$who: pipes: control: the daemon and the command's sleep run"
		bg_wait 5 KILL
		sleep 1
		left=$(survivors "$M_RE")
		is "$left" "" "$who: pipes: SIGKILL to agentjail: after one second nothing of the jail survives"
	else
		_tap_result 1 "$who: pipes: SIGKILL to agentjail takes the jail down"
		diag "  the command did not start"; bg_wait 1; bg_diag
	fi
	kill_survivors "$M_RE"
done
aj_skip_missing_whos "signals"

done_testing
