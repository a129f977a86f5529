#!/usr/bin/env bash
# Terminals: the jail's program sees the window size at start and after a resize; Ctrl-Z then fg
# in an interactive shell leaves the terminal usable (also with a shell inside the jail); TIOCSTI
# from inside cannot inject into the host terminal; mixed terminal/pipe ends and plain pipes
# (stdin EOF) work; the outer terminal's settings are identical before and after every run.
#
# The terminal is driven with tests/helpers/ptydrive.py: a pty of our own, the command as the
# leader of its session (so the foreground job, as under a shell) or an interactive bash there.
. "$(dirname "$0")/lib.sh"
aj_setup

have_bash=
[ -x /bin/bash ] && have_bash=1

# --- helpers ------------------------------------------------------------------------------------

. "$(dirname "$0")/ptylib.sh"

# The transcript (the driver removed CRs and control sequences)
pd_text() { cat "$PD_TR"; }

# Steps for an interactive bash on the driver's pty.
PROMPT='PD-PROMPT-\$ '      # what it looks like as a regex (PS1 below)
BASH_PS1='PD-PROMPT-$ '
bash_pd() { # NAME STEP… — runs `bash --norc --noprofile -i` with the steps, then `exit`
	local name=$1; shift
	pd "$name" --size 40x200 --env TERM=xterm --env INPUTRC=/dev/null \
		--env PS1="$BASH_PS1" --env HISTFILE=/dev/null \
		"expect:$PROMPT" "$@" 'line:exit' 'wait' -- /bin/bash --norc --noprofile -i
}

# --- tests --------------------------------------------------------------------------------------

if [ -z "$have_py" ]; then
	skip "terminal tests" "python3 is not installed (needed by tests/helpers/ptydrive.py)"
	done_testing
fi

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_wrapper "$who"

	# --- 1. the window size, at start and after a resize ------------------------------------
	pd "size-$who" --size 33x101 'expect:^33 101\n' 'size:40x120' 'line:go' 'expect:^40 120\n' \
		wait termios:end same:initial:end -- "$W" run -- sh -c 'stty size; read x; stty size'
	pd_ok "$who: the jail sees the size at start (33x101) and after a resize (40x120)"
	pd_exit_is 0 "$who: … and exits 0"
	pd_has 'compare initial end: same' "$who: … the terminal's settings are unchanged afterwards"

	# a full-screen program redraws on SIGWINCH: it must get the signal, with the new size set.
	# (No command substitution in the trap: bash 5.2 can lose a trap's `$(…)` output when the
	# trap interrupts `read -t` and its SIGCHLD handler reaps the substitution's child first —
	# seen in the jail's strace: both SIGWINCHs delivered, stty printed "20 70", no echo. The
	# pause keeps the second resize out of the first trap.)
	pd "winch-$who" --size 33x101 'expect:ready' 'size:40x120' 'expect:winch-40 120\n' \
		'sleep:0.3' 'size:20x70' 'expect:winch-20 70\n' 'line:x' 'expect:done' wait -- "$W" run -- \
		bash -c 'trap "printf winch-; stty size" WINCH; echo ready; while ! read -t 0.1 x; do :; done; echo done'
	pd_ok "$who: the program in the jail gets SIGWINCH on each resize, with the new size"

	# --- 3. Ctrl-Z then fg in an interactive shell ------------------------------------------
	if [ -n "$have_bash" ]; then
		# Ctrl-Z once `sleep` runs: dash vforks it, and a SIGTSTP that lands between the vfork
		# and the exec stops the child while the parent waits unstoppably for the exec (the
		# same with no jail). The sleep's unique length (1.5000<pid> s) names it.
		S=1.5000$$
		bash_pd "ctrlz-$who" 'capture:s0:stty -a' "expect:$PROMPT" 'termios:p0' \
			"line:$W run -- sh -c 'echo in-\$((40+2)); sleep $S; echo after-\$((40+2))'" \
			'expect:in-42\n' "running:^sleep ${S//./\\.}\$" 'send:\x1a' 'expect:Stopped' \
			"expect:$PROMPT" \
			'termios:p1' 'capture:s1:stty -a' "expect:$PROMPT" \
			'line:fg' 'expect:after-42\n' "expect:$PROMPT" 'termios:p2' \
			'capture:rc1:echo rc=$?' "expect:$PROMPT" \
			'capture:s2:stty -a' "expect:$PROMPT" \
			'same:s0:s1' 'same:s0:s2' 'same:p0:p1' 'same:p0:p2'
		pd_ok "$who: Ctrl-Z stops agentjail in an interactive bash (Stopped, a new prompt), fg resumes it"
		pd_has 'record rc1: rc=0' "$who: … the command finishes after fg and agentjail exits 0"
		pd_has 'compare s0 s1: same' "$who: … stty -a after Ctrl-Z is identical to before"
		pd_has 'compare s0 s2: same' "$who: … stty -a after fg and exit is identical to before"
		pd_has 'compare p0 p1: same' "$who: … the terminal's settings at the prompt are identical before and while stopped"
		pd_has 'compare p0 p2: same' "$who: … and after"

		# Ctrl-Z, then `kill %1` (bash sends SIGTERM and SIGCONT to the stopped job, which stays
		# in the background): the command's TERM handler runs and agentjail exits 7, as any
		# program with a TERM handler would (doc/design.md §2: SIGTERM to agentjail reaches the
		# command).
		# Then bash's job table must empty (`wait` would return at once: bash may still hold the
		# job as stopped until it reaps it).
		bash_pd "ctrlz-kill-$who" --timeout 5 'capture:s0:stty -a' "expect:$PROMPT" \
			"line:$W run -- sh -c 'trap \"echo got-TERM-\$((40+2)); exit 7\" TERM; echo in-\$((40+2)); sleep $S'" \
			'expect:in-42\n' "running:^sleep ${S//./\\.}\$" 'send:\x1a' 'expect:Stopped' \
			"expect:$PROMPT" 'line:kill %1' 'expect:got-TERM-42\n' \
			'line:while [ -n "$(jobs -p)" ]; do sleep 0.05; done; echo "jobs=[$(jobs)]"' \
			'expect:jobs=\[\]' "expect:$PROMPT" \
			'capture:s1:stty -a' "expect:$PROMPT" 'same:s0:s1'
		pd_ok "$who: Ctrl-Z then kill %1: SIGTERM reaches the suspended command (its handler runs)"
		pd_text_like 'Exit 7' "$who: … bash reports the job's exit status 7"
		pd_has 'compare s0 s1: same' "$who: … stty -a in the outer shell is identical before and after"

		# an interactive shell inside the jail: Ctrl-Z stops a job of the inner shell (bash ignores
		# SIGTSTP itself, so agentjail keeps running). The stopped job is killed and its end
		# awaited (`jobs -p` empty), or `exit` would only say "There are stopped jobs."
		bash_pd "innersh-$who" 'capture:s0:stty -a' "expect:$PROMPT" \
			"line:$W run -- bash --norc --noprofile -i" 'expect:bash-[0-9.]+[#$] ' \
			"line:PS1='IN''NER> '" 'expect:INNER> ' \
			'line:echo inner-$((40+2))' 'expect:^inner-42\n' 'expect:INNER> ' \
			"line:sleep 3.000$$" "running:^sleep 3\\.000$$\$" 'send:\x1a' 'expect:Stopped' \
			'expect:INNER> ' \
			'line:echo still-$((40+2))' 'expect:^still-42\n' 'expect:INNER> ' \
			'line:kill -9 %1; while [ -n "$(jobs -p)" ]; do sleep 0.05; done' 'expect:INNER> ' 'line:exit' "expect:$PROMPT" \
			'capture:rc1:echo rc=$?' "expect:$PROMPT" \
			'capture:s1:stty -a' "expect:$PROMPT" 'same:s0:s1'
		pd_ok "$who: a shell inside the jail: Ctrl-Z stops its job, the terminal stays usable, exit works"
		pd_has 'record rc1: rc=0' "$who: … agentjail exits 0 after the inner shell's exit"
		pd_has 'compare s0 s1: same' "$who: … stty -a in the outer shell is identical before and after"
	else
		skip "$who: Ctrl-Z then fg in an interactive shell" "/bin/bash is not installed"
		skip "$who: Ctrl-Z then kill %1 in an interactive shell" "/bin/bash is not installed"
		skip "$who: a shell inside the jail and Ctrl-Z" "/bin/bash is not installed"
	fi

	# --- 4. TIOCSTI cannot reach the host terminal -----------------------------------------
	if [ -n "$have_bash" ]; then
		# The probe pushes "x" into its terminal's input. Were that the outer terminal, the
		# outer shell would read "x" in front of the next line typed to it.
		bash_pd "tiocsti-$who" 'capture:s0:stty -a' "expect:$PROMPT" \
			"line:$W run -- $P tiocsti" 'expect:^(ok|errno=[0-9]+)[^\n]*\n' "expect:$PROMPT" \
			'capture:rc1:echo rc=$?' "expect:$PROMPT" \
			'line:read -r line; echo "line=[$line]"' 'sleep:0.2' 'line:typed-by-user' \
			'expect:^line=\[[^]\n]*\]\n' "expect:$PROMPT" \
			'capture:s1:stty -a' "expect:$PROMPT" 'same:s0:s1'
		pd_ok "$who: TIOCSTI: the session ran to the end"
		probe_line=$(pd_text | grep -E '^(ok|errno=[0-9]+)' | head -n1)
		like "$probe_line" '^errno=1 ' "$who: ioctl(TIOCSTI) inside the jail fails with EPERM"
		pd_has 'record rc1: rc=1' "$who: … the probe reports the failure (exit 1)"
		line=$(pd_text | grep -E '^line=\[' | head -n1)
		is "$line" 'line=[typed-by-user]' "$who: the outer shell's next input line is exactly what was typed (nothing injected)"
		unlike "$(pd_text)" 'xread|command not found' "$who: … and the outer shell ran no injected command"
		pd_has 'compare s0 s1: same' "$who: … stty -a in the outer shell is identical before and after"
	else
		skip "$who: TIOCSTI from inside cannot inject into the host terminal" "/bin/bash is not installed"
	fi

	# --- 8. mixed terminal and pipe ends --------------------------------------------------
	pd "mixed1-$who" wait termios:end same:initial:end -- bash -c "set -o pipefail; \
		$W run -- sh -c 'test -t 0 && echo in-tty; test -t 1 || echo out-pipe; exit 3' | cat; echo pipeline-rc=\$?"
	pd_ok "$who: terminal stdin, piped stdout: the session ran to the end"
	pd_text_like '^in-tty$' "$who: … stdin inside is a terminal"
	pd_text_like '^out-pipe$' "$who: … stdout inside is the pipe"
	pd_text_like '^pipeline-rc=3$' "$who: … agentjail exits with the command's status (3)"
	pd_has 'compare initial end: same' "$who: … the terminal's settings are unchanged afterwards"

	pd "mixed2-$who" --size 33x101 wait termios:end same:initial:end -- sh -c \
		"echo hi | $W run -- sh -c 'read x; echo got:\$x; test -t 1 && echo out-tty; test -t 0 || echo in-pipe; echo size=\$(stty size <&2)'"
	pd_ok "$who: piped stdin, terminal stdout: the session ran to the end"
	pd_exit_is 0 "$who: … and exits 0"
	pd_text_like '^got:hi$' "$who: … the piped input is read inside"
	pd_text_like '^out-tty$' "$who: … stdout inside is a terminal"
	pd_text_like '^in-pipe$' "$who: … stdin inside is the pipe"
	pd_text_like '^size=33 101$' "$who: … the terminal inside has the outer terminal's size (33x101)"
	pd_has 'compare initial end: same' "$who: … the terminal's settings are unchanged afterwards"

	# an error exit path: the command cannot be run
	pd "notfound-$who" wait termios:end same:initial:end -- "$W" run -- /nonexistent/agentjail-test
	pd_exit_is 127 "$who: terminal: a command that does not exist exits 127"
	pd_has 'compare initial end: same' "$who: … the terminal's settings are unchanged afterwards"

	# the terminal's EOF (Ctrl-D on an empty line) ends a reader inside
	pd "eof-$who" 'expect:ready' 'line:one' 'send:\x04' wait termios:end same:initial:end -- \
		"$W" run --quiet -- sh -c 'echo ready; cat; echo cat-done'
	pd_ok "$who: Ctrl-D on the terminal ends cat inside the jail"
	is "$(pd_text)" $'ready\none\none\ncat-done' "$who: … after the typed line was echoed and passed on"
	pd_has 'compare initial end: same' "$who: … the terminal's settings are unchanged afterwards"

	# --- 8. plain pipes -------------------------------------------------------------------
	aj_cmd "$who" -- run -- cat
	AJ_LAST="[$who] printf 'a\\nb\\n' | ${AJ_CMD[*]}"
	OUT=$(printf 'a\nb\n' | timeout 20 "${AJ_CMD[@]}" 2>"$AJ_TMP/err")
	RC=$?
	ERR=$(cat "$AJ_TMP/err")
	is "$OUT" $'a\nb' "$who: pipes: printf 'a\\nb\\n' | agentjail run -- cat prints both lines"
	rc_is 0 "$who: … and exits 0 (stdin EOF propagates)"
	base=$(aj_base_ms "$who") # (in a subshell: AJ_CMD stays)
	AJ_LAST="[$who] ${AJ_CMD[*]} </dev/null"
	start=$(date +%s%N)
	OUT=$(timeout 20 "${AJ_CMD[@]}" </dev/null 2>"$AJ_TMP/err")
	RC=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	ERR=$(cat "$AJ_TMP/err")
	rc_is 0 "$who: agentjail run -- cat </dev/null exits 0"
	lim=$(aj_limit_ms 3000 "$base" 30 15000) # far below the 20 s a missed EOF would take
	ok $((ms < lim ? 0 : 1)) "$who: … at once (${ms} ms; < $lim, a plain run $base ms)"
	aj_cmd "$who" -- run -- sh -c 'test -t 0 || echo in-notty; test -t 1 || echo out-notty; test -t 2 || echo err-notty'
	AJ_LAST="[$who] ${AJ_CMD[*]} </dev/null 2>&1 | cat"
	OUT=$(timeout 20 "${AJ_CMD[@]}" </dev/null 2>&1 | cat)
	RC= ERR=
	is "$OUT" $'in-notty\nout-notty\nerr-notty' "$who: no terminal outside: no terminal inside"
done
aj_skip_missing_whos "terminals"

done_testing
