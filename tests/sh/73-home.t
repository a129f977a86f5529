#!/bin/bash
# A home that persists between runs when asked (issue 26 item 24; doc/design.md §3 step 5):
# --home persist gives a jail its workspace's own $HOME, kept in agentjail's state directory
# (<state>/home/KEY/home, KEY from the canonical workspace path as for the caches), so a dotfile
# and a cache of a tool agentjail does not know survive to the next run; --home tmp (the default)
# is an empty home each run. Two workspaces never share one, the real home is never touched, a
# project's file cannot turn it on, resume keeps it, `agentjail home` shows and cleans it. What one
# jail leaves in the home is hostile input to the next one's bwrap (it makes its mount points
# there following symlinks): a link planted toward the host is renamed aside before bwrap runs,
# and one jail at a time uses a home. In tmux: the next jail's interactive shell reads the
# ~/.bashrc the last one left, and keeps its history.
. "$(dirname "$0")/lib.sh"
aj_setup

HAVE_TMUX=
command -v tmux >/dev/null 2>&1 && HAVE_TMUX=1

NL=$'\n'
key_of() { printf '%s' "$1" | sha256sum | cut -c1-32; }

# wait_for FILE — up to 20 s
wait_for() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# tmux_until NAME ERE — the pane shows ERE within 20 s; SCREEN holds the last capture
tmux_until() {
	local i
	for ((i = 0; i < 200; i++)); do
		SCREEN=$(aj_tmux capture-pane -p -t "$1" 2>/dev/null)
		grep -Eq -- "$2" <<<"$SCREEN" && return 0
		sleep 0.1
	done
	return 1
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	A=$AJ_TMP/$who/proj-a
	B=$AJ_TMP/$who/proj-b
	OUTSIDE=$AJ_TMP/$who/outside
	mkdir -m 0755 "$A" "$B" "$OUTSIDE" "$HOMEDIR/tools" "$HOMEDIR/tools/bin"
	ln -s "$A" "$AJ_TMP/$who/link-a"
	aj_chown "$A" "$B" "$OUTSIDE" "$AJ_TMP/$who/link-a" "$HOMEDIR/tools"
	key_a=$(key_of "$A")
	HA=$STATE/home/$key_a/home
	real_before=$(aj_tree "$HOMEDIR")

	# --- what a run leaves in its home, the next run finds -----------------------------------
	plant='echo "$1" >~/.somerc && mkdir -p ~/.cache/sometool && echo "$1" >~/.cache/sometool/blob &&
		echo planted'
	look='cat ~/.somerc ~/.cache/sometool/blob 2>&1'
	aj_run "$who" -C "$A" -- run --home persist -- sh -c "$plant" sh "from A"
	is "$OUT" planted "$who: --home persist: a jail writes ~/.somerc and a cache of a tool agentjail does not know"
	aj_run "$who" -C "$A" -- run --home persist -- sh -c "$look"
	is "$OUT" $'from A\nfrom A' "$who: ... the next jail of the workspace finds both"
	[ -f "$HA/.somerc" ] && [ "$(stat -c %a "$STATE/home/$key_a/home")" = 700 ]
	ok $? "$who: ... kept in <state>/home/<sha256 of the workspace's path, 32 hex>/home, 0700"
	aj_run "$who" -C "$A" -- run -- sh -c "$look"
	like "$OUT" 'No such file' "$who: --home tmp (the default): an empty home, nothing of it"
	aj_run "$who" -C "$AJ_TMP/$who/link-a" -- run --home persist -- sh -c "$look"
	is "$OUT" $'from A\nfrom A' "$who: a symlink to the workspace is the workspace (the key is the canonical path)"

	# --- two workspaces never share one; the real home is never it --------------------------
	aj_run "$who" -C "$B" -- run --home persist -- sh -c "$look"
	like "$OUT" 'No such file' "$who: project B's jail does not see A's persisted home"
	aj_run "$who" -C "$B" -- run --home persist -- sh -c "$plant" sh "from B"
	aj_run "$who" -C "$A" -- run --home persist -- sh -c "$look"
	is "$OUT" $'from A\nfrom A' "$who: ... and what B's jail writes in its own stays there"
	is "$(aj_tree "$HOMEDIR")" "$real_before" "$who: the real home is untouched by all of it"

	# --- --dry-run, sessions, show, resume ----------------------------------------------------
	aj_run "$who" -C "$A" -- run --home persist --dry-run -- true
	like "$OUT" "--bind-fd [0-9]+ $HOMEDIR +# fd [0-9]+ = $HA: \\\$HOME is this workspace's persisted home" \
		"$who: --dry-run: \$HOME is a bind of <state>/home/KEY/home"
	like "$OUT" '"home":"persist"' "$who: ... and the policy says home persist (stored for resume)"
	aj_run "$who" -C "$A" -e COLUMNS=200 -- sessions
	like "$OUT" 'rw·off·home +-' "$who: sessions: the POLICY column says ·home"
	aj_run "$who" -C "$A" -- sessions --json
	sid=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print([s["id"] for s in json.load(sys.stdin) if s["policy"].get("home") == "persist"][0])' 2>/dev/null)
	aj_run "$who" -C "$A" -- show "$sid"
	like "$OUT" "(^|$NL)home +persist: $HA \\(agentjail home ${sid:0:8}\\)" "$who: show: home persist and where"
	aj_run "$who" -C "$A" -- resume "$sid" --dry-run --quiet
	like "$OUT" "fd [0-9]+ = $HA: " "$who: resume of a persist session mounts the same home"

	# --- the configuration: the user's file may choose it, a project's may not ---------------
	mkdir -p "$HOMEDIR/.config/agentjail"
	printf '[policy]\nhome = "persist"\n' >"$HOMEDIR/.config/agentjail/config.toml"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -C "$A" -- run -- sh -c "$look"
	is "$OUT" $'from A\nfrom A' "$who: home = \"persist\" in the user's [policy]"
	aj_run "$who" -C "$A" -- run --home tmp -- sh -c "$look"
	like "$OUT" 'No such file' "$who: ... --home tmp overrides it"
	rm -rf "$HOMEDIR/.config"
	printf '[policy]\nhome = "persist"\n' >"$B/.agentjail.toml"
	aj_chown "$B/.agentjail.toml"
	aj_run "$who" -C "$B" -- run -- true
	rc_is 2 "$who: home = \"persist\" in an untrusted project's .agentjail.toml is refused"
	like "$ERR" 'keeps the jail.s home between runs' "$who: ... saying why"
	rm -f "$B/.agentjail.toml"
	real_before=$(aj_tree "$HOMEDIR")

	# --- backends that cannot give it: refused, nothing made ----------------------------------
	aj_run "$who" -C "$B" -- run --backend landlock --home persist -- true
	rc_is 2 "$who: --backend landlock --home persist is refused (exit 2)"
	like "$ERR" 'landlock backend cannot give a jail its persisted home' "$who: ... with the reason"
	mkdir -p "$HOMEDIR/.config/agentjail"
	printf '[opensandbox]\nurl = "http://127.0.0.1:9"\n' >"$HOMEDIR/.config/agentjail/config.toml"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -C "$B" -- run --backend opensandbox --home persist -- true
	rc_is 2 "$who: --backend opensandbox --home persist is refused (exit 2)"
	like "$ERR" '--home persist cannot be used with --backend opensandbox' "$who: ... with the reason"
	rm -rf "$HOMEDIR/.config"
	aj_run "$who" -C "$B" -- run --fs danger-full-access --home persist -- true
	rc_is 2 "$who: danger-full-access with --home persist is refused (its home is the real one)"

	# --- what one jail leaves where the next one's bwrap mounts: renamed, never followed -------
	# jail 1 plants ~/tools -> the host's $OUTSIDE as bwrap sees it (bwrap works from its own
	# root, the host's under /oldroot); jail 2 has ~/tools/bin on PATH, a mount point below it
	aj_run "$who" -C "$A" -- run --home persist -- ln -s "/oldroot$OUTSIDE" "$HOMEDIR/tools"
	rc_is 0 "$who: a jail plants a symlink toward the host in its persisted home"
	aj_run "$who" -C "$A" -e PATH="$HOMEDIR/tools/bin:$AJ_SYS_PATH" -- run --home persist -- true
	rc_is 0 "$who: the next jail with a mount point below it runs"
	[ -z "$(ls -A "$OUTSIDE")" ]
	ok $? "$who: ... and its bwrap made nothing on the host through the link" ||
		diag "$(find "$OUTSIDE")"
	like "$ERR" "persisted home: ~/tools \\(a symlink\\): renamed to tools\\.agentjail-moved" \
		"$who: ... the link was renamed aside first, and the run said so"
	[ -L "$HA/tools.agentjail-moved" ] && [ -d "$HA/tools/bin" ] && [ ! -L "$HA/tools" ]
	ok $? "$who: ... the link kept under its new name, the mount point a plain directory"

	# --- one jail at a time; home; clean ---------------------------------------------------------
	rm -f "$A/started" "$A/stop"
	aj_cmd "$who" -C "$A" -- run --home persist -- sh -c \
		'touch started; i=0; while [ ! -e stop ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done'
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	bg=$!
	AJ_PIDS+=("$bg")
	wait_for "$A/started"
	ok $? "$who: a jail with the persisted home runs (in the background)"
	aj_run "$who" -C "$A" -- run --home persist -- true
	rc_is 125 "$who: a second jail of the workspace with --home persist meanwhile: refused (125)"
	like "$ERR" 'persisted home is in use by another jail \(agentjail pid [0-9]+, session [0-9a-f]{8}\): one jail at a time' \
		"$who: ... naming the jail that has it"
	aj_run "$who" -C "$A" -- run -- true
	rc_is 0 "$who: ... a jail with an empty home runs beside it"
	aj_run "$who" -- home --workspace "$A"
	like "$OUT" "(^|$NL)in use +yes" "$who: home --workspace: in use"
	aj_run "$who" -C "$A" -- home clean
	rc_is 1 "$who: home clean while a jail uses it: refused"
	like "$ERR" 'in use by another jail' "$who: ... saying why"
	[ -f "$HA/.somerc" ]
	ok $? "$who: ... and nothing was removed"
	touch "$A/stop"
	wait "$bg"
	is "$?" 0 "$who: the background jail ends"

	aj_run "$who" -- home
	rc_is 0 "$who: home lists the persisted homes"
	like "$OUT" "MiB +[0-9-]{10} +$A$NL" "$who: ... A's with its size and last use"
	like "$OUT" "MiB +[0-9-]{10} +$B($NL|\$)" "$who: ... and B's"
	aj_run "$who" -- home "$sid"
	like "$OUT" "(^|$NL)workspace +$A$NL" "$who: home ID: the session's workspace"
	like "$OUT" "(^|$NL)home +$HA$NL" "$who: ... where its home is"
	like "$OUT" "(^|$NL)size +[0-9.]+ MiB$NL" "$who: ... its size"
	like "$OUT" "(^|$NL)last used +[0-9-]{10} [0-9:]{5} \\((just now|[0-9]+[smh] ago)\\)$NL" "$who: ... its last use"
	like "$OUT" "(^|$NL)in use +no" "$who: ... not in use now"

	# a jail leaves its home hard to remove: a closed directory, a tree 1500 deep, a link out
	aj_run "$who" -C "$A" -- run --home persist -- sh -c '
		mkdir -p ~/closed/in && echo x >~/closed/in/f && chmod 000 ~/closed/in ~/closed &&
		cd ~ && i=0 && while [ $i -lt 1500 ]; do mkdir d && cd d || exit 1; i=$((i+1)); done &&
		ln -s "$1" ~/out && echo ok' sh "/oldroot$OUTSIDE"
	is "$OUT" ok "$who: a jail leaves a closed directory, a deep tree and a link in its home"
	touch "$OUTSIDE/keep"
	aj_chown "$OUTSIDE/keep"
	aj_run "$who" -C "$A" -- home clean
	rc_is 0 "$who: home clean removes the current directory's home"
	like "$OUT" "MiB removed \\($A\\)" "$who: ... saying how much"
	[ ! -e "$STATE/home/$key_a" ] && [ -e "$OUTSIDE/keep" ]
	ok $? "$who: ... all of it, through nothing (the host's file behind the link is there)"
	aj_run "$who" -C "$A" -- run --home persist -- sh -c "$look"
	like "$OUT" 'No such file' "$who: the next jail starts with an empty persisted home"
	aj_run "$who" -- home --all clean
	rc_is 0 "$who: home --all clean"
	[ -z "$(ls -A "$STATE/home")" ]
	ok $? "$who: ... no home is left"
	aj_run "$who" -- home --all --workspace x
	rc_is 2 "$who: home --all --workspace: a usage error"
	is "$(aj_tree "$HOMEDIR")" "$real_before" "$who: the real home is still untouched"

	# --- per agent: [agent.NAME] home = "persist"; the agent's own paths stay the host's -------
	mkdir -p "$HOMEDIR/.local/bin" "$HOMEDIR/.toy" "$HOMEDIR/.config/agentjail"
	cat >"$HOMEDIR/.local/bin/toy" <<'TOY'
#!/bin/sh
cat "$HOME/.toyrc" 2>/dev/null || echo "no rc"
echo "rc from $1" >"$HOME/.toyrc"
echo "$1" >"$HOME/.toy/made-by-agent"
if (echo x >>"$HOME/.toy/hooks.json") 2>/dev/null; then echo "hooks: writable"; else echo "hooks: read-only"; fi
TOY
	chmod 0755 "$HOMEDIR/.local/bin/toy"
	echo '{}' >"$HOMEDIR/.toy/hooks.json"
	printf '[profile.toy]\ncommand = "toy"\nrw = ["~/.toy/"]\nprotect = ["~/.toy/hooks.json"]\n\n[agent.toy]\nhome = "persist"\n' \
		>"$HOMEDIR/.config/agentjail/config.toml"
	chmod 0755 "$HOMEDIR/.config" "$HOMEDIR/.config/agentjail"
	aj_chown "$HOMEDIR/.local" "$HOMEDIR/.toy" "$HOMEDIR/.config"
	AJ_XENV=(PATH="$HOMEDIR/.local/bin:$AJ_SYS_PATH")
	aj_run "$who" -C "$A" -- toy --net off -- one
	is "$OUT" $'no rc\nhooks: read-only' "$who: [agent.toy] home = \"persist\": the agent runs, its hook file still read-only"
	aj_run "$who" -C "$A" -- toy --net off -- two
	like "$OUT" '^rc from one' "$who: ... its next run finds the ~/.toyrc the last one left"
	is "$(cat "$HOMEDIR/.toy/made-by-agent" 2>&1)" two "$who: ... its own directory is the host's, as without it"
	[ ! -e "$HOMEDIR/.toyrc" ]
	ok $? "$who: ... the real home has no ~/.toyrc"
	aj_run "$who" -C "$A" -- run -- sh -c 'cat ~/.toyrc 2>&1'
	like "$OUT" 'No such file' "$who: ... and a plain run of the workspace keeps its empty home"
	AJ_XENV=()
	rm -rf "$HOMEDIR/.config" "$HOMEDIR/.toy" "$HOMEDIR/.local"
	aj_run "$who" -C "$A" -- home clean

	# --- in a terminal: the next shell runs the ~/.bashrc the last jail left, keeps history ----
	if [ -z "$HAVE_TMUX" ]; then
		skip "$who: an interactive shell in the persisted home (tmux)" "tmux is not installed"
		continue
	fi
	aj_run "$who" -C "$A" -- run --home persist -- sh -c 'echo "PS1=\"rc-from-last-jail\\$ \"" >~/.bashrc'
	q=$(printf '%q ' env -i -C "$A" PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME" \
		LANG=C.UTF-8 TERM=screen AGENTJAIL_STATE_DIR="$STATE" "$AJ_BIN/agentjail" run --quiet \
		--home persist -- bash -i)
	aj_tmux kill-session -t h 2>/dev/null
	aj_tmux -f /dev/null new-session -d -s h -x 100 -y 30 "$q; echo SHELL-DONE-\$?; exec sleep 600"
	AJ_PIDS+=("$(aj_tmux display-message -p '#{pid}')")
	tmux_until h 'rc-from-last-jail\$'
	ok $? "$who: tmux: the next jail's interactive bash runs the ~/.bashrc the last one left" ||
		diag "$SCREEN"
	aj_tmux send-keys -t h 'echo hist-marker-$((6*7))' Enter
	tmux_until h '^hist-marker-42'
	ok $? "$who: tmux: a command typed there runs" || diag "$SCREEN"
	aj_tmux send-keys -t h 'exit' Enter
	tmux_until h 'SHELL-DONE-0'
	ok $? "$who: tmux: the shell exits, the run ends 0" || diag "$SCREEN"
	aj_tmux kill-server 2>/dev/null
	aj_run "$who" -C "$A" -- run --home persist -- sh -c 'cat ~/.bash_history'
	like "$OUT" 'echo hist-marker-\$\(\(6\*7\)\)' "$who: ... and the next jail finds its history in ~/.bash_history"
	aj_run "$who" -C "$A" -- home clean
done
aj_skip_missing_whos "a home that persists between runs"
done_testing
