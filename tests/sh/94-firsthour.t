#!/usr/bin/env bash
# A new user's first hour, second pass (issue 26, items 6-22): what the command line prints when
# a user slips, as root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	# --- item 6: `shim remove` with no name removes every agent's shim ----------------------
	sd=$HOMEDIR/shims-$who
	aj_run "$who" -- shim install --dir "$sd" codex gemini pi opencode
	rc_is 0 "$who: shim install of four agents"
	aj_run "$who" -- shim remove --dir "$sd"
	rc_is 0 "$who: shim remove with no name"
	left=$(ls -A "$sd" 2>/dev/null)
	is "$left" "" "$who: … removes all four shims (claude's was not among them)"
	is "$(grep -c '^removed: ' <<<"$OUT")" 4 "$who: … and says so for each"

	# --- item 20: a shim that something earlier on PATH shadows: said, with the export line --
	mkdir -p "$EXTRA/early"
	printf '#!/bin/sh\necho unjailed\n' >"$EXTRA/early/codex"
	chmod 0755 "$EXTRA/early/codex"
	aj_chown "$EXTRA/early"
	aj_run "$who" -e PATH="$EXTRA/early:$sd:$AJ_SYS_PATH" -e SHELL=/bin/bash -- shim install --dir "$sd" codex
	rc_is 0 "$who: shim install behind a shadowing codex"
	like "$ERR" "warning: $EXTRA/early/codex comes before the shim on PATH: \`codex\` still runs unjailed" \
		"$who: … says the shim is shadowed"
	like "$OUT" $'\n  export PATH="'"$sd"':\$PATH"$' "$who: … with an export PATH= line to copy"
	aj_run "$who" -- shim remove --dir "$sd"
	# --- item 18: an agent that is not installed: one line, the one saying how to install it --
	mkdir -p "$AJ_TMP/empty-$who"
	aj_run "$who" -e PATH="$AJ_TMP/empty-$who" -- gemini
	rc_is 127 "$who: a missing agent exits 127"
	is "$(wc -l <<<"$ERR")" 1 "$who: … with one line"
	like "$ERR" '^agentjail: gemini is not installed where agentjail can see it; install it: npm install -g @google/gemini-cli$' \
		"$who: … saying how to install it"
	agbin=$EXTRA/agents
	mkdir -p "$agbin"
	printf '#!/bin/sh\necho "fake gemini $*"\n' >"$agbin/gemini"
	chmod 0755 "$agbin/gemini"
	aj_chown "$agbin"
	aj_run "$who" -e PATH="$agbin:$AJ_SYS_PATH" -- gemini --quiet -- -p hi
	like "$OUT" 'fake gemini' "$who: a fake gemini runs (a session to resume)"
	aj_run "$who" -e PATH="$AJ_TMP/empty-$who" -- resume --last
	rc_is 127 "$who: resume of an agent that is gone exits 127"
	like "$ERR" '^agentjail: gemini is not installed where agentjail can see it; install it: npm' \
		"$who: … and says how to install it, in one line"
	is "$(wc -l <<<"$ERR")" 1 "$who: … one line"

	# --- item 19: --dry-run says first what would run ------------------------------------------
	aj_run "$who" -e PATH="$agbin:$AJ_SYS_PATH" -- resume --last --dry-run
	rc_is 0 "$who: resume --dry-run of an agent's session"
	like "$(head -n1 <<<"$OUT")" "^would run: $agbin/gemini( |\$)" "$who: … its first line is the command it would run"
	aj_run "$who" -- run --quiet -- "$P" exit 0
	aj_run "$who" -- resume --last --dry-run
	is "$(head -n1 <<<"$OUT")" "would run: $P exit 0" "$who: resume --dry-run of a command's session: the same"
	aj_run "$who" -- run --dry-run -- sh -c 'echo "a b"'
	is "$(head -n1 <<<"$OUT")" "would run: sh -c 'echo \"a b\"'" "$who: run --dry-run: the command, shell-quoted"
	# --- item 14: typos on the command line get a suggestion, in one line, no usage dump ------
	while IFS='|' read -r args want; do
		read -ra a <<<"$args"
		aj_run "$who" -- "${a[@]}"
		rc_is 2 "$who: $args exits 2"
		is "$ERR" "agentjail: $want" "$who: $args: one line with the suggestion"
	done <<'LIST'
sesions|unknown command: sesions (did you mean sessions? see `agentjail --help`)
claud -p hi|unknown command: claud (did you mean claude? see `agentjail --help`)
--verison|unknown option: --verison (did you mean --version? see `agentjail --help`)
make all|unknown command: make (to run it in a jail: agentjail run -- make; see `agentjail --help`)
run --nett off -- true|unknown option: --nett (did you mean --net? see `agentjail run --help`)
run --allow-domian=pypi.org -- true|unknown option: --allow-domian=pypi.org (did you mean --allow-domain? see `agentjail run --help`)
run --allow example.com -- true|unknown option: --allow (did you mean --allow-domain? see `agentjail run --help`)
run --deny example.com -- true|unknown option: --deny (did you mean --deny-domain? see `agentjail run --help`)
run --backnd landlock -- true|unknown option: --backnd (did you mean --backend? see `agentjail run --help`)
run --bogus-option -- true|unknown option: --bogus-option (see `agentjail run --help`)
claude --nett off|not an agentjail option: --nett (did you mean --net? claude's own arguments go after --: agentjail claude -- --nett)
verify --jsn|unknown option: --jsn (did you mean --json? see `agentjail run --help`)
sessions --jsn|sessions: unknown argument: --jsn (did you mean --json? see `agentjail sessions --help`)
resume --dryrun|resume: unknown argument: --dryrun (did you mean --dry-run? see `agentjail resume --help`)
doctor --jsn|doctor: unknown argument: --jsn (did you mean --json? see `agentjail doctor --help`)
config --pth|config: unknown argument: --pth (did you mean --path? see `agentjail config --help`)
profiles --jsn|profiles: unknown argument: --jsn (did you mean --json? see `agentjail profiles --help`)
shim instal claude|shim: unknown action: instal (did you mean install? see `agentjail shim --help`)
shim install --dri x|shim: unknown option: --dri (did you mean --dir? see `agentjail shim --help`)
cache clen|cache: unknown argument: clen (did you mean clean? see `agentjail cache --help`)
LIST

	# --- item 15: configuration errors: how to quote a bare value, where the keys are listed --
	cfg=$HOMEDIR/.config/agentjail/config.toml
	mkdir -p "${cfg%/*}"
	printf '[policy]\nmemory = 4G\n' >"$cfg"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -- run -- true
	rc_is 2 "$who: memory = 4G unquoted is an error"
	is "$ERR" "agentjail: $cfg:2:10: expected an integer, found \`4G\` (quote it: \"4G\")" \
		"$who: … saying how to quote it"
	printf '[policy]\nmemroy = "4G"\nnetwork = "off"\n' >"$cfg"
	aj_run "$who" -- run -- true
	like "$ERR" "$cfg:2:1: unknown key \`memroy\` in \\[policy\\] \\(did you mean \`memory\`\\?\\)" \
		"$who: a mistyped key gets a suggestion"
	printf '[policy]\nsomething = "off"\n' >"$cfg"
	aj_run "$who" -- run -- true
	is "$ERR" "agentjail: $cfg:2:1: unknown key \`something\` in [policy] (\`man 5 agentjail.toml\` lists the keys)" \
		"$who: an unknown key points at the manual page, not a source path"
	rm -f "$cfg"
done

# --- item 17: README's Agents section says what agents get: --net allow, not the network on -----
agents_sec=$(sed -n '/^## Agents/,/^## /p' "$AJ_SRC/README.md")
unlike "$agents_sec" 'the network on|until per-domain filtering' "README's Agents section no longer says agents run with the network on"
like "$agents_sec" '--net allow' "… it says they get --net allow"
aj_use "${AJ_WHOS[0]}"
mkdir -p "$AJ_TMP/agent-bin"
printf '#!/bin/sh\nexit 0\n' >"$AJ_TMP/agent-bin/claude"
chmod 0755 "$AJ_TMP/agent-bin" "$AJ_TMP/agent-bin/claude"
aj_run "${AJ_WHOS[0]}" -e PATH="$AJ_TMP/agent-bin:$AJ_SYS_PATH" -- claude --dry-run
like "$OUT" '"net":"allow"' "… which is true: an agent's policy is --net allow"
aj_skip_missing_whos "the first hour's stumbles"
done_testing
