#!/usr/bin/env bash
# Violations said in order (issue 26, item 21). On a terminal, a violation the live watch moves
# aside is said after everything the command wrote before it (the line goes out only once the
# pty's pending output has), not in the middle of it. `log` shows a violation in its own
# columns: the text under RULE / REASON, never under HOST.
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/ptylib.sh"

if [ -z "$have_py" ]; then
	skip "terminal tests" "python3 is not installed (needed by tests/helpers/ptydrive.py)"
	done_testing
fi

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	aj_wrapper "$who"
	# a burst of output, then a protected path made (the live watch moves it aside at once),
	# then more output: the violation line comes after the burst and before "after"
	bad=0
	for i in 1 2 3 4 5; do
		rm -f "$WS/.envrc"
		pd "order-$who-$i" 'expect:^after\n' wait -- "$W" run --quiet -- sh -c \
			'i=0; while [ $i -lt 200 ]; do echo "line $i"; i=$((i + 1)); done; echo before; : >.envrc; sleep 1; echo after'
		b=$(grep -n '^before' "$PD_TR" | head -n1 | cut -d: -f1)
		v=$(grep -n 'agentjail: violation: .*\.envrc' "$PD_TR" | head -n1 | cut -d: -f1)
		a=$(grep -n '^after' "$PD_TR" | head -n1 | cut -d: -f1)
		if ! { [ -n "$b" ] && [ -n "$v" ] && [ -n "$a" ] && [ "$b" -lt "$v" ] && [ "$v" -lt "$a" ]; }; then
			bad=$((bad + 1))
			diag "  run $i: before at line ${b:-none}, the violation at ${v:-none}, after at ${a:-none}"
		fi
	done
	is "$bad" 0 "$who: in 5 runs the violation line always came after the output before it and before the output after it"

	aj_run "$who" -- log --last
	vl=$(grep 'VIOL' <<<"$OUT")
	like "$vl" "VIOL +- +- +- +- +- +violation\.protected_path $WS/\.envrc: appeared" \
		"$who: log: the violation's text under RULE / REASON, dashes under HOST, ADDR, UP, DOWN, TOOK"
	unlike "$vl" 'VIOL +violation' "$who: … not under HOST"
done

done_testing
