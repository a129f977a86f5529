#!/usr/bin/env bash
# Teardown (issue 24 items 1 and 11): when a run ends nothing of it is left, however deep or fast
# it forks, and a fork bomb keeps it neither from ending nor from being torn down.
# - The Landlock backend (no PID namespace; agentjail is the subreaper): a chain of 100 nested
#   processes and a setsid'd, double-forked one are gone when agentjail exits, and the deepest,
#   which would write .git/hooks/pre-commit and a file 3 s later, never does (the old runner
#   killed one level a round for 50 rounds: 51 were left).
# - A fork bomb (tests/helpers/probe forkbomb: each process forks two and exits, a refused fork is
#   tried again) bounded by --pids 64 (RLIMIT_NPROC set by the probe for a user in the Landlock
#   backend, which has no user namespace): in the bwrap jail and the Landlock backend, the run
#   ends within 1 s of its command, SIGTERM to agentjail tears it down within 1 s (each against
#   a baseline without the bomb from the same run), and nothing of the bomb is left.
# - AJ_HEAVY=1 (not by default: it loads a 2-core machine for seconds): the issue's own case, `b() {
#   b & b & }` under the default --pids 4096 in the bwrap jail, at nice 19. A bomb of 64 does not
#   starve the jail's init enough for the old unbounded reaping loop to lose; thousands do.
. "$(dirname "$0")/lib.sh"
aj_setup

now_ms() { echo $(($(date +%s%N) / 1000000)); }
# a file's mtime in ms (the clock date(1) reads), 0 when it is missing
mtime_ms() {
	local t
	t=$(stat -c %.3Y "$1" 2>/dev/null) || { echo 0; return; }
	echo "${t/./}"
}

# left ERE: how many processes have a command line matching ERE
left() { pgrep -cf -- "$1"; }

# reap ERE: stop, then kill, what a failed case left (the test started it), until none is left
reap() {
	local i p
	for i in $(seq 1 100); do
		p=$(pgrep -f -- "$1") || return 0
		# shellcheck disable=SC2086
		kill -STOP $p 2>/dev/null
		# shellcheck disable=SC2086
		kill -KILL $p 2>/dev/null
		sleep 0.05
	done
}

# bg_run WHO [aj_cmd options] -- ARGS…: agentjail in the background (BG_PID: agentjail's pid,
# every wrapper execs)
_bgn=0
bg_run() {
	aj_cmd "$@"
	_bgn=$((_bgn + 1))
	BG_OUT=$AJ_TMP/bg-$_bgn
	${NICE:-} "${AJ_CMD[@]}" </dev/null >"$BG_OUT.out" 2>"$BG_OUT.err" &
	BG_PID=$!
	AJ_PIDS+=("$BG_PID")
	AJ_LAST="[$AJ_WHO] ${AJ_CMD[*]}"
}

# bg_end [SECS]: wait for BG_PID (default 30 s, then SIGKILL); END_MS when it had exited, BG_RC
bg_end() {
	local i
	for ((i = 0; i < ${1:-30} * 50; i++)); do
		kill -0 "$BG_PID" 2>/dev/null || break
		sleep 0.02
	done
	kill -0 "$BG_PID" 2>/dev/null && kill -KILL "$BG_PID" 2>/dev/null
	END_MS=$(now_ms)
	wait "$BG_PID" 2>/dev/null
	BG_RC=$?
}

# bg_term_ms: SIGTERM to BG_PID; how long until it had exited (ms)
bg_term_ms() {
	local start
	start=$(now_ms)
	kill -TERM "$BG_PID"
	bg_end 30
	echo $((END_MS - start))
}

# ends_in_time DESC WHO BOMB [aj_cmd options] -- RUN-ARGS…: the BOMB command (it writes `done`
# last) and a baseline (sleep 2; done) each in a run: the bomb's run ends within 1 s more of its
# command's end (done's mtime) than the baseline's; nothing of the bomb (ERE $MARK) is left.
ends_in_time() {
	local desc=$1 who=$2 bomb=$3 gap0 gap
	shift 3
	rm -f "$WS/done"
	bg_run "$who" "$@" sh -c 'sleep 2; : >done'
	bg_end
	gap0=$((END_MS - $(mtime_ms "$WS/done")))
	rm -f "$WS/done"
	bg_run "$who" "$@" sh -c "$bomb"
	bg_end 60
	gap=$((END_MS - $(mtime_ms "$WS/done")))
	is "$BG_RC" 0 "$who: $desc: a run with a fork bomb ends (exit 0)" ||
		diag "  stderr: $(head -c 1000 "$BG_OUT.err")"
	ok $([ -e "$WS/done" ] && [ "$gap" -le $((gap0 + 1000)) ]; echo $?) \
		"$who: $desc: … within 1 s of its command ($gap ms after it; without the bomb $gap0 ms)"
	is "$(left "$MARK")" 0 "$who: $desc: … and nothing of the bomb is left"
	reap "$MARK"
}

# torn_in_time DESC WHO [aj_cmd options] -- RUN-ARGS…: SIGTERM to agentjail 1 s into a bomb, and
# into a plain sleep: the bomb's run is gone within 1 s more than the sleep's; nothing is left.
torn_in_time() {
	local desc=$1 who=$2 ms0 ms
	shift 2
	bg_run "$who" "$@" sh -c 'exec sleep 60'
	sleep 1
	ms0=$(bg_term_ms)
	bg_run "$who" "$@" "$P" forkbomb 60 done "${NPROC[@]}"
	sleep 1
	ms=$(bg_term_ms)
	ok $([ "$ms" -le $((ms0 + 1000)) ]; echo $?) \
		"$who: $desc: SIGTERM to agentjail during a fork bomb: down in $ms ms (during a sleep $ms0 ms)"
	is "$(left "$MARK")" 0 "$who: $desc: … and nothing of the bomb is left"
	reap "$MARK"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_host git -C "$WS" init -q
	# does a process limit hold for this identity in the bwrap jail? (root on a host without a
	# cgroup scope has none: a fork bomb would take the machine)
	aj_run "$who" -- run --pids 64 --dry-run -- true
	BOUNDED=1
	[[ $OUT == *"no process limit"* ]] && BOUNDED=

	# --- 11. the bwrap jail: a fork bomb under --pids 64 -----------------------------------------
	MARK="$P forkbomb"
	NPROC=()
	if [ -z "$BOUNDED" ]; then
		skip "$who: jail: a fork bomb does not keep the run from ending" \
			"no process limit for $who on this host (--dry-run says so)"
	else
		ends_in_time jail "$who" "exec '$P' forkbomb 2 done" -- run --pids 64 --
		torn_in_time jail "$who" -- run --pids 64 --
	fi
	# the issue's case: a shell's fork bomb under the default limits (--pids 4096)
	if [ -z "${AJ_HEAVY:-}" ]; then
		skip "$who: jail: the issue's fork bomb under the default --pids 4096" \
			"AJ_HEAVY=1 runs it (it loads the machine for seconds)"
	elif [ -z "$BOUNDED" ]; then
		skip "$who: jail: the issue's fork bomb under the default --pids 4096" \
			"no process limit for $who on this host"
	else
		MARK="bomb-$$" NICE="nice -n 19" ends_in_time "jail, default limits" \
			"$who" "exec 2>/dev/null; sleep 2 & s=\$!; b() { b & b & }; b & wait \$s; : >done # bomb-$$" \
			-- run --
	fi

	# --- 1. the Landlock backend: a deep chain, and a setsid'd double fork ------------------------
	mk=chain-$$-$who
	cat >"$WS/$mk.sh" <<'EOF'
# a chain of $1 nested processes, each waiting for its child; the deepest says it is ready, then
# after 3 s writes a git hook and a file of its own (it must be dead by then)
d=$1
if [ "$d" -gt 0 ]; then sh "$0" $((d - 1)) "$2" & wait; exit 0; fi
: >"$2.ready"
sleep 3
printf '#!/bin/sh\necho ran >"%s/hook-ran"\n' "$PWD" >.git/hooks/pre-commit
chmod 755 .git/hooks/pre-commit
echo late >"$2.late"
EOF
	aj_chown "$WS/$mk.sh"
	rm -f "$WS"/*.ready "$WS"/*.late
	cmd="sh ./$mk.sh 100 a & setsid sh -c '(sh ./$mk.sh 30 b &)' </dev/null >/dev/null 2>&1"
	cmd+="; while [ ! -e a.ready ] || [ ! -e b.ready ]; do sleep 0.05; done; exit 0"
	bg_run "$who" -- run --backend landlock -- sh -c "$cmd"
	bg_end 60
	is "$BG_RC" 0 "$who: landlock: a command leaving a 100-deep chain and a setsid'd double fork exits 0"
	is "$(left "$mk")" 0 "$who: landlock: when agentjail has exited, nothing of either chain is left"
	sleep 4
	ok $([ ! -e "$WS/a.late" ] && [ ! -e "$WS/b.late" ]; echo $?) \
		"$who: landlock: … and nothing of them writes afterwards"
	ok $([ ! -e "$WS/.git/hooks/pre-commit" ]; echo $?) \
		"$who: landlock: … no pre-commit hook appears after the guard's last check"
	reap "$mk"
	rm -f "$WS/.git/hooks/pre-commit" "$WS"/*.ready "$WS"/*.late

	# --- 1. the Landlock backend: a fork bomb ------------------------------------------------------
	aj_run "$who" -- run --backend landlock --pids 64 --dry-run -- true
	MARK="$P forkbomb"
	if [ "$who" = user ]; then
		NPROC=(64) # RLIMIT_NPROC, set by the probe: without a user namespace it counts every
			   # process of the user's (the fixture's user has no others)
	elif [[ $OUT == *"# limits: "*"enforced by cgroup"* ]]; then
		NPROC=()
	else
		skip "$who: landlock: a fork bomb does not keep the run from ending" \
			"no cgroup scope for the Landlock backend here, and root is exempt from RLIMIT_NPROC"
		continue
	fi
	ends_in_time landlock "$who" "exec '$P' forkbomb 2 done ${NPROC[*]}" \
		-- run --backend landlock --pids 64 --
	torn_in_time landlock "$who" -- run --backend landlock --pids 64 --
done
aj_skip_missing_whos "teardown"

done_testing
