#!/usr/bin/env bash
# resume of a one-shot run (issue 16, stumble 6): `agentjail claude -- -p hello` then `resume
# --last` when claude's own resume fails at once: the fresh-start rung must not send `-p hello`
# again; it starts nothing and says which argument made the run one-shot and how to go on. An
# interactive session (no -p) still gets its fresh start. A stand-in claude (a shell script).
. "$(dirname "$0")/lib.sh"
aj_setup

stub_claude() { # PATH — prints its arguments; its own resume (--resume ID) fails at once
	cat >"$1" <<'EOS'
#!/bin/sh
case " $* " in *" --resume "*) echo "no conversation found" >&2; exit 1 ;; esac
echo "args: $*"
exit 0
EOS
	chmod 0755 "$1"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	mkdir -p "$HOMEDIR/.local/bin" "$HOMEDIR/.claude"
	stub_claude "$HOMEDIR/.local/bin/claude"
	aj_chown "$HOMEDIR"
	AP=$HOMEDIR/.local/bin:$AJ_SYS_PATH

	aj_run "$who" -e PATH="$AP" -- claude -- -p hello
	rc_is 0 "$who: agentjail claude -- -p hello runs the task"
	like "$OUT" $'(^|\n)args: .*-p hello$' "$who: … with its prompt"

	aj_run "$who" -e PATH="$AP" -- resume --last
	unlike "$OUT" 'args: .*-p hello' "$who: resume --last does not send the one-shot prompt again"
	like "$ERR" 'resume: `claude -p hello` was a one-shot run \(-p\): a fresh start would send its prompt again, so nothing was started' \
		"$who: … and says why nothing was started"
	like "$ERR" 'agentjail claude -- -p' "$who: … and how to run the task again"
	isnt "$RC" 0 "$who: … with a failing status ($RC)"

	# an interactive session still gets its fresh start
	aj_run "$who" -e PATH="$AP" -- claude -- --model x
	rc_is 0 "$who: agentjail claude -- --model x"
	aj_run "$who" -e PATH="$AP" -- resume --last
	rc_is 0 "$who: resume --last of an interactive session"
	like "$OUT" $'(^|\n)args: .*--model x$' "$who: … starts it afresh when its own resume fails"
done

done_testing
