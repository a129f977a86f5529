#!/usr/bin/env bash
# Mount identity (issue 24 item 13, doc/design.md §3, core/jail/bindcheck.h): before the
# command starts, the jail's init checks that each bind's destination in its final view is the
# inode (device, inode number, type) agentjail opened, and refuses to start (125, naming the
# path) otherwise. bubblewrap compares only right after each mount; the test build's
# AGENTJAIL_TEST_BEFORE_GO hook changes the view after the last mount and before the command
# may start: a source renamed away and replaced on the host (its mount moves with it), and a
# later mount over a bind (AGENTJAIL_TEST_BWRAP_EXTRA).
. "$(dirname "$0")/lib.sh"
aj_setup

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	mkdir -p "$WS/docs" "$EXTRA/other"
	printf 'original\n' >"$WS/docs/readme"
	aj_chown "$WS" "$EXTRA"

	# --- an unchanged view starts ---------------------------------------------------------------
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_BEFORE_GO=true -- \
		run --ro docs -- sh -c 'echo started'
	rc_is 0 "$who: the view as planned: the command starts"
	is "$OUT" started "$who: … and runs"

	# --- a source swapped on the host between bwrap's mounts and the command -------------------
	swap="mv '$WS/docs' '$WS/docs.old' && mkdir '$WS/docs' && printf planted >'$WS/docs/readme'"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_BEFORE_GO="$swap" -- \
		run --ro docs -- sh -c "echo started; touch '$WS/ran'"
	rc_is 125 "$who: --ro docs renamed and replaced on the host before the start: 125"
	like "$ERR" "jail init: refusing to run: $WS/docs in the jail's view is a directory \(device [0-9a-f]+, inode [0-9]+\), not the directory agentjail bound there" \
		"$who: … naming the path, what it is and what was bound"
	unlike "$OUT" started "$who: … the command never started"
	check "$who: … and wrote nothing" test ! -e "$WS/ran"
	rm -rf "${WS:?}/docs" "$WS/ran"
	mv "$WS/docs.old" "$WS/docs"

	# the workspace's own .git: a rename guard (a mount point in the jail) moved the same way
	aj_host git -C "$WS" init -q
	swap="mv '$WS/.git' '$WS/.git.old' && mkdir -p '$WS/.git/hooks'"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_BEFORE_GO="$swap" -- \
		run -- sh -c "echo started"
	rc_is 125 "$who: the workspace's .git renamed and rebuilt on the host before the start: 125"
	like "$ERR" "refusing to run: $WS/\.git" "$who: … naming it"
	rm -rf "${WS:?}/.git"
	mv "$WS/.git.old" "$WS/.git"

	# --- a later mount over a bind ------------------------------------------------------------
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_BWRAP_EXTRA="--bind $EXTRA/other $WS/docs" -- \
		run --ro docs -- sh -c 'echo started'
	rc_is 125 "$who: a mount over --ro docs after agentjail's: 125"
	like "$ERR" "refusing to run: $WS/docs in the jail's view" "$who: … naming it"
	unlike "$OUT" started "$who: … the command never started"
	is "$(cat "$WS/docs/readme")" original "$who: the host's docs are untouched"
done
aj_skip_missing_whos "mount identity"

done_testing
