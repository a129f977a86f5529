#!/usr/bin/env bash
# Issue 16's last edges: `sessions` fits the terminal's width (unchanged into a pipe and in
# --json); `show` gives every attempt's command the same way (the command line started in the
# jail); `resume` of a plain command says once that it runs it again (not with --quiet);
# configuration errors are worded once; missing paths (an agent's own absent directory, rw/ro
# from a configuration file, a resumed session's --rw that is gone); a shim made by a binary in
# a build tree points at the installed agentjail of the same version, or warns.
. "$(dirname "$0")/lib.sh"
aj_setup

SID_RE='[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
long=$(printf 'x%.0s' $(seq 1 180))

# The current identity's agentjail command under a terminal of COLS columns: TTY_OUT.
on_tty() { # COLS AGENTJAIL-ARGS…
	local cols=$1; shift
	aj_cmd "$AJ_WHO" -- "$@"
	local q
	q=$(printf '%q ' "${AJ_CMD[@]}")
	TTY_OUT=$(SHELL=/bin/bash script -qec "stty cols $cols rows 40; $q" /dev/null </dev/null | tr -d '\r')
}

# The widest line, in characters (… and · are one each).
widest() {
	local LC_ALL=C.UTF-8 l m=0
	while IFS= read -r l; do [ "${#l}" -gt "$m" ] && m=${#l}; done
	echo "$m"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# --- sessions: cut to the terminal's width ------------------------------------------
	aj_run "$who" -- run -- sh -c "echo $long"
	rc_is 0 "$who: a session with a 190-character command"
	for cols in 80 60; do
		on_tty "$cols" sessions
		w=$(widest <<<"$TTY_OUT")
		ok "$([ "$w" -le "$cols" ] && [ "$w" -gt 0 ]; echo $?)" \
			"$who: sessions on a $cols-column terminal: no row is wider ($w)" || diag "$TTY_OUT"
		like "$TTY_OUT" 'sh -c.*…' "$who: … the command is shortened with …"
		on_tty "$cols" sessions --all
		w=$(widest <<<"$TTY_OUT")
		ok "$([ "$w" -le "$cols" ] && [ "$w" -gt 0 ]; echo $?)" \
			"$who: sessions --all (with WORKSPACE) on $cols columns: no row is wider ($w)" ||
			diag "$TTY_OUT"
	done
	aj_run "$who" -- sessions
	like "$OUT" "echo $long'" "$who: into a pipe the command is whole"
	unlike "$OUT" '…' "$who: … and nothing is cut"
	on_tty 60 sessions --json
	like "$TTY_OUT" "echo $long" "$who: --json on a terminal is whole"

	# --- resume of a plain command: one line, not with --quiet --------------------------
	aj_run "$who" -- run -- sh -c 'echo plain'
	aj_run "$who" -- resume --last
	rc_is 0 "$who: resume --last of a plain command"
	is "$OUT" "plain" "$who: … runs it again"
	like "$ERR" "^agentjail: resuming session $SID_RE: running sh -c 'echo plain' again with its stored sandbox\$" \
		"$who: … and says so, once, on stderr"
	aj_run "$who" -- resume --last --quiet
	rc_is 0 "$who: resume --last --quiet"
	is "$ERR" "" "$who: … says nothing"
	aj_run "$who" -- resume --help
	like "$OUT" '--quiet' "$who: resume --help lists --quiet"

	# --- show: every attempt's command the same way -------------------------------------
	mkdir -p "$HOMEDIR/.local/bin" "$HOMEDIR/.claude"
	cat >"$HOMEDIR/.local/bin/claude" <<'EOS'
#!/bin/sh
case " $* " in *" --resume "*) exit 1 ;; esac
echo "args: $*"
EOS
	chmod 0755 "$HOMEDIR/.local/bin/claude"
	aj_chown "$HOMEDIR"
	AP=$HOMEDIR/.local/bin:$AJ_SYS_PATH
	aj_run "$who" -e PATH="$AP" -- claude -- --model x
	rc_is 0 "$who: a stand-in claude"
	aj_run "$who" -e PATH="$AP" -- resume --last
	rc_is 0 "$who: resumed (its own resume fails, a fresh start follows)"
	aj_run "$who" -- sessions --json
	sid=$(sed -n 's/^    "id": "\([^"]*\)".*/\1/p' <<<"$OUT" | head -1)
	aj_run "$who" -- show "$sid"
	like "$OUT" $'(^|\n)command    claude --model x(\n|$)' "$who: show: the command as given"
	atts=$(grep '^attempt ' <<<"$OUT")
	is "$(wc -l <<<"$atts")" 3 "$who: show: three attempts" || diag "$OUT"
	bad=$(grep -v "  $HOMEDIR/.local/bin/claude --dangerously-skip-permissions " <<<"$atts")
	is "$bad" "" "$who: show: each attempt is the command started: the resolved path and flags"

	# --- missing paths --------------------------------------------------------------------
	# (a) an agent's own directory absent (a fresh machine): the agent still starts
	rm -rf "$HOMEDIR/.codex"
	printf '#!/bin/sh\necho "codex: $*"\n' >"$HOMEDIR/.local/bin/codex"
	chmod 0755 "$HOMEDIR/.local/bin/codex"
	aj_chown "$HOMEDIR"
	aj_run "$who" -e PATH="$AP" -- codex -- hi
	rc_is 0 "$who: codex without ~/.codex starts"
	like "$OUT" 'codex: .*hi' "$who: … and runs"

	# (b) rw/ro from a configuration file: an error at FILE:LINE, status 2
	cfg=$HOMEDIR/.config/agentjail/config.toml
	mkdir -p "${cfg%/*}"
	printf '[policy]\nmemory = "1G"\nro = ["%s/gone"]\n' "$AJ_TMP" >"$cfg"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -- run -- true
	rc_is 2 "$who: a missing ro path in config.toml stops the run (2)"
	like "$ERR" "^agentjail: $cfg:3: ro path does not exist: $AJ_TMP/gone \\(create it, or remove it from the file\\)\$" \
		"$who: … naming the file and line, the path and the fix"
	printf '[policy]\nhide = ["%s/gone"]\n' "$AJ_TMP" >"$cfg"
	aj_run "$who" -- run -- true
	rc_is 0 "$who: a missing hide path in config.toml is a warning, as --hide's"
	like "$ERR" "hide path does not exist: $AJ_TMP/gone" "$who: … naming the path"
	rm -f "$cfg"

	# (c) resume of a session whose --rw is gone
	mkdir -p "$EXTRA/rwdir"
	aj_chown "$EXTRA"
	aj_run "$who" -- run --rw "$EXTRA/rwdir" -- true
	rc_is 0 "$who: a run with --rw"
	rmdir "$EXTRA/rwdir"
	aj_run "$who" -- resume --last
	rc_is 2 "$who: its resume after the --rw path was removed: 2"
	like "$ERR" "resume: session $SID_RE: its --rw path $EXTRA/rwdir no longer exists; create it again to resume, or start a new session without it" \
		"$who: … names the path and what to do"

	# --- configuration errors: worded once, no nested parentheses --------------------------
	printf 'bwrap = "/usr/bin/bwrap"\n' >"$WS/.agentjail.toml"
	aj_chown "$WS/.agentjail.toml"
	aj_run "$who" -- run -- true
	rc_is 2 "$who: a project's bwrap is refused"
	like "$ERR" "^agentjail: $WS/.agentjail.toml:1:1: \`bwrap\` may never be set" "$who: … at FILE:LINE:COL"
	unlike "$ERR" '\([^)]*\(' "$who: … with no parenthesis inside another"
	rm -f "$WS/.agentjail.toml"
done

# --- shims: pointed at the installed agentjail --------------------------------------------
aj_use root
clone=$AJ_TMP/clone/build/rel
inst=$AJ_TMP/inst/bin
mkdir -p "$clone" "$inst"
install -m 0755 "$AJ_BUILD/agentjail" "$clone/agentjail"
install -m 0755 "$AJ_BUILD/agentjail" "$inst/agentjail"
sd=$AJ_TMP/shims
aj_run root -e PATH="$inst:$AJ_SYS_PATH" -B "$clone/agentjail" -- shim install --dir "$sd" claude
rc_is 0 "shim install from a build tree, an installed agentjail on PATH"
is "$(readlink "$sd/claude")" "$inst/agentjail" "… the shim points at the installed one"
like "$OUT$ERR" "points at $inst/agentjail, the installed agentjail on PATH" "… and says so"
rm -rf "$sd"
aj_run root -B "$clone/agentjail" -- shim install --dir "$sd" claude
rc_is 0 "shim install from a build tree, no agentjail on PATH"
is "$(readlink "$sd/claude")" "$clone/agentjail" "… the shim points at the build"
like "$ERR" "warning: the shim points into $clone/agentjail, not an installed agentjail; moving or deleting it breaks the shim" \
	"… and warns that moving it breaks the shim"
rm -rf "$sd"
aj_run root -e PATH="$inst:$AJ_SYS_PATH" -B "$inst/agentjail" -- shim install --dir "$sd" claude
is "$(readlink "$sd/claude")" "$inst/agentjail" "the installed binary's own shim points at itself"
unlike "$ERR" 'warning' "… without a warning"

done_testing
