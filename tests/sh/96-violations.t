#!/usr/bin/env bash
# The violations report (issue 16): when a jailed command fails and the sandbox is the cause,
# one line says so, and only then. bwrap's own setup errors (read from the pipe bwrap has for
# stderr, never from the command's output) come with bwrap's line kept and a cause and fix
# (exit 125); a command the jail cannot see but the host has is named with the --ro that
# brings it in (127); protected paths the jail moved aside from a failed run are named with
# why they are protected. A command that fails on its own gets no claim, and an unsandboxed run
# (danger-full-access) never gets one.
. "$(dirname "$0")/lib.sh"
aj_setup

CLAIM='could not be built|not in the jail.s view|the run failed after the jail'

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"

	# --- a command that fails on its own: nothing claimed ---------------------------------
	aj_run "$who" -- run -- sh -c 'echo x >&2; exit 1'
	rc_is 1 "$who: a failing command keeps its status"
	is "$ERR" "x" "$who: … and its stderr is its own, with no sandbox claim"
	aj_run "$who" -- run -- sh -c 'cat /nonexistent'
	rc_is 1 "$who: cat of a missing file fails"
	is "$ERR" "cat: /nonexistent: No such file or directory" \
		"$who: … with cat's words alone"
	aj_run "$who" -- run -- sh -c \
		"echo \"bwrap: Can't find source path /x: No such file or directory\" >&2; exit 1"
	rc_is 1 "$who: a command that prints a bwrap-like line keeps its status"
	unlike "$ERR" "$CLAIM" "$who: … and its words are never translated as bwrap's"
	aj_run "$who" -- run -- ajv16-no-such-command
	rc_is 127 "$who: a command found nowhere: 127"
	unlike "$ERR" "$CLAIM" "$who: … and no claim that the jail hid it"

	# --- bwrap fails while building the jail ------------------------------------------------
	for t in "" -t; do
		aj_run "$who" -b agentjail-testbuild $t \
			-e "AGENTJAIL_TEST_BWRAP_EXTRA=--ro-bind /nonexistent-ajv16 /ajv16" \
			-- run -- sh -c 'echo the command ran'
		rc_is 125 "$who${t:+ (pty)}: bwrap's setup error: 125"
		like "$OUT$ERR" "bwrap: Can't find source path /nonexistent-ajv16: No such file or directory" \
			"$who${t:+ (pty)}: … bwrap's own line is kept"
		like "$OUT$ERR" "agentjail: the jail could not be built: /nonexistent-ajv16, which the jail binds, cannot be reached \\(No such file or directory\\).*; fix: check that /nonexistent-ajv16 exists" \
			"$who${t:+ (pty)}: … translated into cause and fix"
		unlike "$OUT$ERR" "the command ran" "$who${t:+ (pty)}: … and nothing ran"
	done
	aj_run "$who" -b agentjail-testbuild -e "AGENTJAIL_TEST_BWRAP_EXTRA=--no-such-bwrap-option" \
		-- run -- true
	rc_is 125 "$who: an option bwrap does not know: 125"
	like "$ERR" "agentjail: the jail could not be built: this bwrap is too old for the jail: Unknown option --no-such-bwrap-option; fix: agentjail needs bubblewrap 0.8.0 or newer" \
		"$who: … named as a bwrap too old, with the fix"
	# the pipe is bwrap's alone: the command's stderr is the caller's again
	aj_run "$who" -- run -- sh -c 'echo out; echo err >&2'
	is "$OUT/$ERR" "out/err" "$who: a command's stdout and stderr reach the caller"

	# … and is the very stderr it would have had: on a terminal, the jail's pty (if init kept
	# bwrap's pipe, the command would write into agentjail's buffer instead)
	aj_run "$who" -t -- run --quiet -- sh -c '[ -t 2 ] && echo stderr-is-a-tty'
	like "$OUT$ERR" "stderr-is-a-tty" "$who: on a terminal the command's stderr is the pty"
	# started with stderr closed: the command runs (its stderr /dev/null, never an fd of ours)
	out=$(aj_host sh -c "cd $WS && AGENTJAIL_STATE_DIR=$STATE $AJ_BIN/agentjail run -- sh -c 'echo ok; echo err >&2' 2>&-")
	ok $? "$who: a run started with stderr closed succeeds"
	is "$out" "ok" "$who: … and the command's stdout arrives"

	# --- a command the host has and the jail does not see -----------------------------------
	tool=/dev/shm/ajv16-tool-$who-$$
	aj_host sh -c "printf '#!/bin/sh\necho tool ran\n' >$tool && chmod 755 $tool"
	aj_run "$who" -- run -- "$tool"
	rc_is 127 "$who: a command outside the jail's view: 127"
	like "$ERR" "agentjail: $tool is not in the jail's view: on the host it is $tool; --ro /dev/shm brings it in" \
		"$who: … named, with the --ro that brings it in"
	aj_run "$who" -- run --fs danger-full-access -- "$tool"
	rc_is 0 "$who: unsandboxed, the same command runs"
	# … named by a shell's script or env, whose "not found" (127) is their own (issue 26)
	aj_run "$who" -- run -- sh -c "echo before; $tool"
	rc_is 127 "$who: sh -c naming a program outside the jail's view: 127"
	like "$ERR" "agentjail: $tool is not in the jail's view: on the host it is $tool; --ro /dev/shm brings it in" \
		"$who: … named, with the --ro that brings it in"
	aj_run "$who" -- run -- env AJV=1 "$tool"
	like "$RC/$ERR" "^127/.*agentjail: $tool is not in the jail's view: .*--ro /dev/shm brings it in" \
		"$who: env naming it: the same line"
	tdir=/dev/shm/ajv26-path-$who-$$
	aj_host sh -c "mkdir -p $tdir && printf '#!/bin/sh\necho tool ran\n' >$tdir/ajv26tool && chmod 755 $tdir/ajv26tool"
	aj_run "$who" -e "PATH=$tdir:$AJ_SYS_PATH" -- run -- bash -c 'ajv26tool --x'
	rc_is 127 "$who: a program found through a PATH entry the jail lacks: 127"
	like "$ERR" "agentjail: ajv26tool is not in the jail's view: on the host it is $tdir/ajv26tool; --ro $tdir brings it in" \
		"$who: … named with its host path and the --ro of that PATH entry"
	aj_run "$who" -e "PATH=$tdir:$AJ_SYS_PATH" -- run --ro "$tdir" -- bash -c 'ajv26tool --x'
	is "$RC/$OUT" "0/tool ran" "$who: … and that --ro brings it in"
	aj_run "$who" -- run -- sh -c 'exit 127'
	unlike "$RC/$ERR" "$CLAIM" "$who: a script's own 127: no claim"
	aj_run "$who" -- run -- sh -c 'ls >/dev/null; ajv16-no-such-command'
	is "$RC" 127 "$who: a script naming a program found nowhere: 127"
	unlike "$ERR" "$CLAIM" "$who: … and no claim that the jail hid it"
	rm -rf "$tool" "$tdir"

	# --- protected paths the jail moved aside -------------------------------------------------
	aj_run "$who" -- run -- sh -c 'echo x > .envrc; exit 3'
	rc_is 3 "$who: a failed run that wrote a protected path keeps its status"
	like "$ERR" "agentjail: the run failed after the jail moved aside protected path $WS/.envrc that it wrote: direnv runs it" \
		"$who: … the report names the path and why it is protected"
	aj_run "$who" -- run -- sh -c 'echo x > .bashrc; exit 0'
	rc_is 0 "$who: a run that wrote a protected path and succeeded"
	unlike "$ERR" "the run failed" "$who: … gets the violation line, no failure claim"

	# --- danger-full-access: never a sandbox claim ----------------------------------------------
	aj_fresh_ws "$who"
	aj_run "$who" -- run --fs danger-full-access -- sh -c 'echo x > .envrc; cat /nonexistent'
	rc_is 1 "$who: an unsandboxed failing run keeps its status"
	unlike "$ERR" "$CLAIM|violation" "$who: … and is never reported as a sandbox denial"
	aj_run "$who" -- run --fs danger-full-access -- ajv16-no-such-command
	rc_is 127 "$who: an unsandboxed command found nowhere: 127"
	unlike "$ERR" "$CLAIM" "$who: … with no sandbox claim"
done

done_testing
