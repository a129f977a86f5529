#!/usr/bin/env bash
# --rw, --ro and --hide through a symlink (issue 24 item 3, doc/design.md §3, §3b). A cloned
# repository that ships `build -> ../home` must not turn the usual `--fs read-only --rw build`
# into a writable $HOME (the jail wrote fsmonitor into ~/.gitconfig, and the host's next `git
# status` ran it). A path given inside the workspace that a link leads out of it is refused
# (exit 2, naming the link, its target and where it leads, and how to name that place): the
# last component or one in the middle, a link chain, `..` after a link, links to /, to $HOME,
# to an ancestor of it, to the state directory; from a configuration file at its FILE:LINE.
# A place named outside the workspace is the user's choice, except $HOME or an ancestor of it
# and agentjail's own directories, whatever the path that leads there.
. "$(dirname "$0")/lib.sh"
aj_setup

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	# (the workspace is $AJ_TMP/WHO/ws, $HOME is $AJ_TMP/WHO/home)
	printf '[user]\n\tname = original\n' >"$HOMEDIR/.gitconfig"
	mkdir -p "$HOMEDIR/.ssh" "$EXTRA/real" "$EXTRA/deep/dir" "$WS/sub"
	printf 'secret-key\n' >"$HOMEDIR/.ssh/id_test"
	ln -s ../home "$WS/build"
	ln -s ../.. "$WS/up2"
	ln -s "$HOMEDIR/.ssh" "$WS/sshl"
	ln -s / "$WS/rootl"
	ln -s "$STATE" "$WS/statel"
	ln -s "$EXTRA/real" "$WS/out"
	ln -s chain2 "$WS/chain1"
	ln -s ../home "$WS/chain2"
	ln -s "$EXTRA/deep/dir" "$WS/sub/hop"
	ln -s sub/hop/.. "$WS/dotdot" # the kernel: $EXTRA/deep; read lexically: sub
	ln -s sub "$WS/inner"
	ln -s "$HOMEDIR" "$EXTRA/tohome"
	aj_chown "$WS" "$HOMEDIR" "$EXTRA"
	gc_before=$(cat "$HOMEDIR/.gitconfig")

	# --- the reported case, and --ro reading ~/.ssh -------------------------------------------
	aj_run "$who" -- run --fs read-only --rw build -- sh -c \
		'printf "[core]\n\tfsmonitor = touch /tmp/pwned\n" >>build/.gitconfig'
	rc_is 2 "$who: --fs read-only --rw build (build -> ../home) is refused with 2"
	like "$ERR" "--rw $WS/build is a symlink to \.\./home, which leads out of the workspace, to $HOMEDIR" \
		"$who: … naming the link, its target and where it leads"
	like "$ERR" "no jail is given" "$who: … and that \$HOME is never given to a jail"
	is "$(cat "$HOMEDIR/.gitconfig")" "$gc_before" "$who: … ~/.gitconfig is unchanged on the host"
	aj_run "$who" -- run --ro sshl -- cat sshl/id_test
	rc_is 2 "$who: --ro sshl (-> ~/.ssh) is refused with 2"
	unlike "$OUT" secret-key "$who: … nothing of ~/.ssh was read"
	like "$ERR" "if you mean $HOMEDIR/\.ssh, name it as it is: --ro $HOMEDIR/\.ssh" \
		"$who: … with how to name the target when that is really meant"

	# --- every other way out -------------------------------------------------------------------
	aj_run "$who" -- run --ro sshl/id_test -- true
	rc_is 2 "$who: a link in the middle of the path (sshl/id_test) is refused"
	like "$ERR" "goes through $WS/sshl, a symlink to $HOMEDIR/\.ssh" "$who: … naming that link"
	aj_run "$who" -- run --rw build/.ssh -- true
	rc_is 2 "$who: build/.ssh (through build -> ../home) is refused"
	aj_run "$who" -- run --rw chain1 -- true
	rc_is 2 "$who: a chain (chain1 -> chain2 -> ../home) is refused"
	like "$ERR" "$WS/chain1 is a symlink to chain2, which leads out of the workspace, to $HOMEDIR" \
		"$who: … naming the first link and where the chain ends"
	aj_run "$who" -- run --rw dotdot -- sh -c 'echo x >dotdot/planted'
	rc_is 2 "$who: \`..\` after a link (dotdot -> sub/hop/.., hop -> $EXTRA/deep/dir) is refused"
	like "$ERR" "to $EXTRA/deep( |$)" "$who: … it leads where the kernel goes, not where the text reads"
	check "$who: … nothing was written there" test ! -e "$EXTRA/deep/planted"
	aj_run "$who" -- run --rw up2 -- true
	rc_is 2 "$who: a link to an ancestor of \$HOME (up2 -> ../..) is refused"
	aj_run "$who" -- run --ro rootl -- true
	rc_is 2 "$who: a link to / is refused"
	aj_run "$who" -- run --rw statel -- true
	rc_is 2 "$who: a link to the state directory is refused"
	aj_run "$who" -- run --rw out -- true
	rc_is 2 "$who: a link to an ordinary place outside (out -> $EXTRA/real) is refused"
	like "$ERR" "name it as it is: --rw $EXTRA/real" "$who: … with the explicit form"
	aj_run "$who" -- run --hide sshl -- true
	rc_is 2 "$who: --hide through a link out of the workspace is refused as well"

	# --- what stays allowed --------------------------------------------------------------------
	aj_run "$who" -- run --fs read-only --rw inner -- sh -c 'echo x >inner/made'
	rc_is 0 "$who: a link that stays inside the workspace (inner -> sub) is followed"
	check "$who: … the write landed in sub" test -f "$WS/sub/made"
	aj_run "$who" -- run --rw "$EXTRA/real" -- sh -c "echo x >'$EXTRA/real/made'"
	rc_is 0 "$who: the place itself, named outside the workspace, is the user's choice"
	check "$who: … and it is writable" test -f "$EXTRA/real/made"

	# --- the never-list, on every resolved path ----------------------------------------------
	aj_run "$who" -- run --rw "$HOMEDIR" -- true
	rc_is 2 "$who: --rw \$HOME is refused"
	like "$ERR" "--workspace" "$who: … pointing at --workspace to work in it"
	aj_run "$who" -- run --ro "$AJ_TMP" -- true
	rc_is 2 "$who: --ro of an ancestor of \$HOME is refused"
	aj_run "$who" -- run --rw "$EXTRA/tohome" -- true
	rc_is 2 "$who: a link outside the workspace that leads to \$HOME is refused"
	like "$ERR" "leads to $HOMEDIR" "$who: … saying where it leads"
	aj_run "$who" -- run --ro "$STATE" -- true
	rc_is 2 "$who: --ro of agentjail's state directory is refused"

	# --- a configuration file: the error at its FILE:LINE --------------------------------------
	cfg=$HOMEDIR/.config/agentjail/config.toml
	mkdir -p "$(dirname "$cfg")"
	printf '[policy]\nrw = ["build"]\n' >"$cfg"
	chmod 0600 "$cfg"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -- run --fs read-only -- true
	rc_is 2 "$who: rw = [\"build\"] in the user's configuration is refused"
	like "$ERR" "$cfg:2: rw $WS/build is a symlink to \.\./home" "$who: … at its FILE:LINE"
	printf '[policy]\nro = ["%s"]\n' "$EXTRA/tohome" >"$cfg"
	aj_run "$who" -- run -- true
	rc_is 2 "$who: ro through a link to \$HOME in the configuration is refused"
	like "$ERR" "$cfg:2: ro $EXTRA/tohome leads to $HOMEDIR" "$who: … at its FILE:LINE"
	rm -rf "$HOMEDIR/.config"
	is "$(cat "$HOMEDIR/.gitconfig")" "$gc_before" "$who: ~/.gitconfig was never written"
done
aj_skip_missing_whos "--rw/--ro/--hide through symlinks"

done_testing
