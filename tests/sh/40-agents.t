#!/bin/bash
# Agent profiles and shims, black-box, with a stand-in agent (a shell script named claude) so
# they run everywhere; tests/sh/41-real-agents.t runs the real agents from npm.
. "$(dirname "$0")/lib.sh"
aj_setup

fake_agent() { # PATH
	cat >"$1" <<'EOF'
#!/bin/sh
echo "args: $*"
echo "host: $(uname -n)"
echo "IS_SANDBOX=${IS_SANDBOX:-}"
echo "KEY=${ANTHROPIC_API_KEY:-unset} OTHER=${OPENAI_API_KEY:-unset}"
# (the private package caches' mount points aside: core/plan/toolcache)
echo "home: $(ls -A "$HOME" | grep -vxE '\.cache|\.npm|\.m2|\.gradle|\.cargo|go' | tr '\n' ' ')"
touch "$HOME/.claude/made-inside" 2>/dev/null && echo "claude-dir: writable"
if (echo x >>"$HOME/.claude/settings.json") 2>/dev/null; then echo "settings: writable"; else echo "settings: read-only"; fi
if [ -e "$HOME/.codex" ]; then echo "codex: visible"; else echo "codex: absent"; fi
if [ -e ./recurse ] && [ "$1" != inner ]; then claude inner; fi
exit 0
EOF
	chmod 0755 "$1"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	mkdir -p "$HOMEDIR/.local/bin" "$HOMEDIR/.claude" "$HOMEDIR/.codex"
	fake_agent "$HOMEDIR/.local/bin/claude"
	install -m 0755 "$AJ_BIN/agentjail" "$AJ_BIN/agentjail-init" "$AJ_BIN/agentjail-tls" \
		"$HOMEDIR/.local/bin/"
	echo '{"hooks":{}}' >"$HOMEDIR/.claude/settings.json"
	echo '{"token":"codex-secret"}' >"$HOMEDIR/.codex/auth.json"
	echo secret >"$HOMEDIR/secret.txt"
	aj_chown "$HOMEDIR"
	AJ=$HOMEDIR/.local/bin/agentjail
	SHIMS=$HOMEDIR/.local/share/agentjail/bin
	AGENT_PATH=$HOMEDIR/.local/bin:$AJ_SYS_PATH

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -e ANTHROPIC_API_KEY=sk-test \
		-e OPENAI_API_KEY=sk-other -- claude -- -p hi
	rc_is 0 "$who: agentjail claude -- -p hi runs the agent"
	like "$OUT" $'(^|\n)args: --dangerously-skip-permissions --session-id [0-9a-f-]{36} -p hi\n' \
		"$who: the skip-permission flag and a session id come first, the arguments unchanged"
	like "$OUT" $'\nhost: agentjail\n' "$who: it runs in the jail"
	like "$OUT" $'\nIS_SANDBOX=1\n' "$who: IS_SANDBOX=1 is set (claude refuses the flag as root otherwise)"
	like "$OUT" $'\nKEY=agentjail-placeholder-ANTHROPIC_API_KEY OTHER=unset\n' \
		"$who: its API key passes as its placeholder (added at the proxy, §4d), another agent's not at all"
	like "$OUT" $'\nhome: .claude .claude.json .local \n' \
		"$who: \$HOME shows only its config, its state file and the PATH dir"
	like "$OUT" $'\nclaude-dir: writable\n' "$who: ~/.claude is writable inside"
	[ -e "$HOMEDIR/.claude/made-inside" ]
	ok $? "$who: what it writes in ~/.claude lasts on the host"
	like "$OUT" $'\nsettings: read-only\n' "$who: ~/.claude/settings.json (hooks run on the host) is read-only"
	is "$(cat "$HOMEDIR/.claude/settings.json")" '{"hooks":{}}' "$who: settings.json unchanged"
	like "$OUT" $'\ncodex: absent(\n|$)' "$who: another agent's config dir is absent"
	is "$(cat "$HOMEDIR/.claude.json" 2>/dev/null)" '{}' "$who: a missing ~/.claude.json is created ({}) so it lasts"
	is "$(stat -c %a "$HOMEDIR/.claude.json" 2>/dev/null)" 600 "$who: ... with mode 0600"
	like "$ERR" 'agentjail: network: allow-list \(7 domains: api\.anthropic\.com, .*\); everything else refused' \
		"$who: a one-line banner says the network is the profile's allow-list"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- claude --fs full -- -p hi
	like "$OUT" $'(^|\n)args: --session-id [0-9a-f-]{36} -p hi\n' \
		"$who: no skip-permission flag when nothing is sandboxed"
	unlike "$OUT" 'host: agentjail' "$who: --fs full runs outside the jail"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- claude -p hi
	rc_is 2 "$who: an agent argument before -- is refused"
	like "$ERR" 'go after --: agentjail claude -- -p' "$who: ... saying where it goes"

	aj_run "$who" -B "$AJ" -e PATH="$AJ_NO_PATH" -- claude -- -p hi
	rc_is 127 "$who: an agent that is not installed: 127"
	like "$ERR" 'npm install -g @anthropic-ai/claude-code' "$who: ... with how to install it"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- claude --dry-run -- -p hi
	like "$OUT" "--bind-fd [0-9]+ $HOMEDIR/.claude +# claude's config" "$who: dry run: ~/.claude bound writable"
	like "$OUT" "--ro-bind-fd [0-9]+ $HOMEDIR/.claude/settings.json +# protected" \
		"$who: dry run: its settings read-only"
	unlike "$OUT" "$HOMEDIR/.codex" "$who: dry run: nothing of codex"
	like "$OUT" '--share-net +# net allow' "$who: dry run: the allow namespace (bwrap keeps the holder's)"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -e AGENTJAIL_NET=on -- claude --dry-run -- -p hi
	like "$OUT" '--share-net +# net on' "$who: dry run: AGENTJAIL_NET=on gives the host's network"

	# the default for agents: --net allow with the profile's domains and the user's
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -e AGENTJAIL_NET= -- claude \
		--allow-domain mirror.example:8443 --dry-run -- -p hi
	rc_is 0 "$who: dry run under the default network"
	like "$OUT" '"net":"allow"' "$who: agents default to --net allow"
	like "$OUT" '"allow_domains":\["api.anthropic.com",[^]]*"mirror.example:8443"\]' \
		"$who: ... with claude's domains, then the user's --allow-domain"
	like "$OUT" '--setenv HTTPS_PROXY http://127.0.0.1:3128' "$who: ... through the proxy"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- claude --net on --allow-domain x.example \
		--dry-run -- -p hi
	rc_is 2 "$who: --net on with --allow-domain is refused"
	like "$ERR" 'contradictory policy: --net on' "$who: ... as a contradiction"

	# shims
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- shim install claude
	rc_is 0 "$who: shim install claude"
	is "$(readlink "$SHIMS/claude")" "$AJ" "$who: the shim is a link to agentjail in ~/.local/share/agentjail/bin"
	like "$OUT" "add this line to ~/.profile" "$who: it says which line to add to which shell file"
	SHIM_PATH=$SHIMS:$AGENT_PATH

	aj_run "$who" -B "$SHIMS/claude" -e PATH="$SHIM_PATH" -- -p hi
	rc_is 0 "$who: \`claude -p hi\` through the shim"
	like "$OUT" $'(^|\n)args: --dangerously-skip-permissions --session-id [0-9a-f-]{36} -p hi\n' \
		"$who: the shim runs the real claude jailed, arguments unchanged"
	like "$OUT" $'\nhost: agentjail\n' "$who: ... in the jail"

	aj_run "$who" -B /bin/sh -e PATH="$SHIM_PATH" -- -c 'claude -p "from a shell"'
	like "$OUT" $'(^|\n)args: --dangerously-skip-permissions --session-id [0-9a-f-]{36} -p from a shell\nhost: agentjail\n' \
		"$who: a shell with the shim dir first on PATH runs \`claude\` jailed"

	aj_run "$who" -B "$SHIMS/claude" -e PATH="$SHIM_PATH" \
		-e AGENTJAIL_SESSION=00000000-0000-4000-8000-000000000000 -- -p hi
	like "$OUT" $'\nhost: agentjail\n' "$who: an AGENTJAIL_SESSION variable from outside does not skip the jail"

	touch "$WS/recurse"
	aj_chown "$WS/recurse"
	aj_run "$who" -B "$SHIMS/claude" -e PATH="$SHIM_PATH" -- -p hi
	like "$OUT" $'\nargs: inner\nhost: agentjail\n' \
		"$who: inside the jail the shim runs the real agent directly (no second jail)"
	unlike "$ERR" 'could not be started|nested' "$who: ... without trying to nest a jail"
	rm -f "$WS/recurse"

	aj_run "$who" -B "$AJ" -e PATH="$SHIM_PATH" -- shim status
	like "$OUT" "claude +jailed: $SHIMS/claude → agentjail → $HOMEDIR/.local/bin/claude" \
		"$who: shim status: claude is jailed"
	mkdir -p "$HOMEDIR/early"
	fake_agent "$HOMEDIR/early/claude"
	aj_chown "$HOMEDIR/early"
	aj_run "$who" -B "$AJ" -e PATH="$HOMEDIR/early:$SHIM_PATH" -- shim status
	like "$OUT" "WARNING: $HOMEDIR/early/claude comes before the shim" \
		"$who: shim status warns when something earlier on PATH shadows the shim"
	aj_run "$who" -B "$AJ" -e PATH="$HOMEDIR/early:$SHIM_PATH" -- doctor
	like "$OUT$ERR" "shim.*$HOMEDIR/early/claude" "$who: doctor shows the shadowed shim"

	echo foreign >"$SHIMS/codex"
	aj_chown "$SHIMS/codex"
	aj_run "$who" -B "$AJ" -e PATH="$SHIM_PATH" -- shim install codex
	isnt "$RC" 0 "$who: shim install refuses to replace a file that is not a shim"
	aj_run "$who" -B "$AJ" -e PATH="$SHIM_PATH" -- shim remove
	[ ! -e "$SHIMS/claude" ] && [ "$(cat "$SHIMS/codex")" = foreign ]
	ok $? "$who: shim remove removes our links and leaves anything else"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- profiles --json
	n=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d), [p["installed"]["found"] for p in d if p["name"]=="claude"][0])' 2>&1)
	is "$n" "7 True" "$who: profiles --json lists 7 profiles, claude found"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- profiles claude
	like "$OUT" "executable +$HOMEDIR/.local/bin/claude" "$who: profiles claude shows the executable"
done
aj_skip_missing_whos "agent profiles and shims"
done_testing
