#!/usr/bin/env bash
# Ctrl-Z stops the whole jail (issue 10, item 9): a process that left the command's process group
# (setsid) is stopped too — state T in /proc/PID/stat, seen from the host, while the user's shell
# shows the job "Stopped" — and `fg` continues everything (the process runs again).
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/ptylib.sh"

if [ -z "$have_py" ] || [ ! -x /bin/bash ] || ! command -v pgrep >/dev/null 2>&1; then
	skip "Ctrl-Z stops the whole jail" "needs python3, /bin/bash and pgrep"
	done_testing
fi

PROMPT='PD-PROMPT-\$ '
BASH_PS1='PD-PROMPT-$ '
bash_pd() { # NAME STEP… — an interactive bash on the driver's pty, then `exit`
	local name=$1; shift
	pd "$name" --size 40x200 --env TERM=xterm --env INPUTRC=/dev/null \
		--env PS1="$BASH_PS1" --env HISTFILE=/dev/null \
		"expect:$PROMPT" "$@" 'line:exit' 'wait' -- /bin/bash --norc --noprofile -i
}

L=loop-97$$ # names the setsid process
S=2.5000$$  # the command's sleep, during which Ctrl-Z is pressed

# The host's view of the setsid loop: "state=X" from /proc/PID/stat ("none" when not found),
# once it is T or after 3 s: the jail's other processes are stopped just after the command's
# group, and a busy machine (other test files beside this one) can show that moment.
JSTATE=$AJ_TMP/jstate.sh
cat >"$JSTATE" <<EOS
#!/bin/sh
i=0
while :; do
	p=\$(pgrep -f '^sh -c while .* $L\$' | head -n1)
	st=none
	[ -n "\$p" ] && st=\$(sed 's/.*) //' /proc/\$p/stat | cut -d' ' -f1)
	{ [ "\$st" = T ] || [ \$i -ge 60 ]; } && break
	i=\$((i + 1))
	sleep 0.05
done
echo "state=\$st"
EOS
chmod 0755 "$JSTATE"

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	aj_wrapper "$who"
	# the loop appends a line every 0.1 s; after fg the command checks that it still does
	cat >"$WS/stop.sh" <<EOS
setsid sh -c 'while :; do echo x >> ticks; sleep 0.1; done' $L </dev/null >/dev/null 2>&1 &
echo in-\$((40+2))
sleep $S
n1=\$(wc -l < ticks); sleep 2; n2=\$(wc -l < ticks)
[ "\$n2" -gt "\$n1" ] && echo ticking-\$((40+2))
echo after-\$((40+2))
EOS
	aj_chown "$WS/stop.sh"
	bash_pd "stop-$who" \
		"line:$W run -- sh stop.sh" 'expect:in-42\n' "running:^sleep ${S//./\\.}\$" \
		'sleep:0.3' 'send:\x1a' 'expect:Stopped' "expect:$PROMPT" \
		"capture:st1:$JSTATE" "expect:$PROMPT" \
		"capture:t1:wc -l < $WS/ticks" "expect:$PROMPT" 'sleep:0.5' \
		"capture:t2:wc -l < $WS/ticks" "expect:$PROMPT" 'same:t1:t2' \
		'line:fg' 'expect:ticking-42\n' 'expect:after-42\n' "expect:$PROMPT" \
		'capture:rc:echo rc=$?' "expect:$PROMPT"
	pd_ok "$who: Ctrl-Z with a setsid process in the jail, then fg"
	pd_has 'record st1: state=T' "$who: after Ctrl-Z the setsid process is stopped too (state T, from the host)"
	pd_has 'compare t1 t2: same' "$who: … it does nothing while stopped"
	pd_text_like 'ticking-42' "$who: after fg it runs again"
	pd_has 'record rc: rc=0' "$who: … and the command finishes, agentjail exits 0"
done
aj_skip_missing_whos "Ctrl-Z stops the whole jail"

done_testing
