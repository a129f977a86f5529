#!/bin/bash
# User-defined agent profiles ([profile.NAME] in ~/.config/agentjail/config.toml), black-box,
# as root and as a user, with a stand-in agent: `agentjail NAME` runs it jailed with its flags,
# paths, variables and domains; `profiles NAME`, `shim install NAME` and `resume` work for it; a
# table named like a built-in extends it; a mistake in the file is an error with its position
# and a suggestion; a project's .agentjail.toml can never define a profile.
. "$(dirname "$0")/lib.sh"
aj_setup

if ! "$AJ_BIN/agentjail" config --help >/dev/null 2>&1; then
	skip "user profiles end to end" \
		"this build has no configuration loader (agentjail config: the config branch)"
	done_testing
fi

fake_agent() { # PATH
	cat >"$1" <<'EOF'
#!/bin/sh
echo "args: $*"
echo "host: $(uname -n)"
echo "SANDBOX=${MYAGENT_SANDBOX:-unset} KEY=${MYAGENT_KEY:-unset} OTHER=${OPENAI_API_KEY:-unset}"
touch "$HOME/.myagent/made-inside" 2>/dev/null && echo "dir: writable"
if (echo x >>"$HOME/.myagent/hooks.json") 2>/dev/null; then echo "hooks: writable"; else echo "hooks: read-only"; fi
if [ -e "$HOME/.claude" ]; then echo "claude: visible"; else echo "claude: absent"; fi
exit 0
EOF
	chmod 0755 "$1"
}

CONFIG='[profile.myagent]
title = "My Agent"
command = "myagent"
skip_permission_flags = ["--yolo"]
rw = ["~/.myagent/"]
protect = ["~/.myagent/hooks.json"]
env = ["MYAGENT_*"]
setenv = ["MYAGENT_SANDBOX=1"]
allow_domains = ["api.myagent.test"]
session_id_flag = "--session"
resume_id = ["--resume", "{id}"]
resume_last = ["--continue"]

[profile.claude]
allow_domains = ["mcp.example.test"]
'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	mkdir -p "$HOMEDIR/.local/bin" "$HOMEDIR/.myagent" "$HOMEDIR/.claude" \
		"$HOMEDIR/.config/agentjail"
	fake_agent "$HOMEDIR/.local/bin/myagent"
	install -m 0755 "$AJ_BIN/agentjail" "$AJ_BIN/agentjail-init" "$AJ_BIN/agentjail-tls" \
		"$HOMEDIR/.local/bin/"
	echo '{"hooks":[]}' >"$HOMEDIR/.myagent/hooks.json"
	printf '%s' "$CONFIG" >"$HOMEDIR/.config/agentjail/config.toml"
	chmod 0644 "$HOMEDIR/.config/agentjail/config.toml"
	chmod 0755 "$HOMEDIR/.config" "$HOMEDIR/.config/agentjail"
	aj_chown "$HOMEDIR"
	AJ=$HOMEDIR/.local/bin/agentjail
	SHIMS=$HOMEDIR/.local/share/agentjail/bin
	AGENT_PATH=$HOMEDIR/.local/bin:$AJ_SYS_PATH

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -e MYAGENT_KEY=k1 -e OPENAI_API_KEY=other \
		-- myagent -- hello
	rc_is 0 "$who: agentjail myagent runs the user's profile"
	like "$OUT" $'(^|\n)args: --yolo --session [0-9a-f-]{36} hello\n' \
		"$who: its skip flag and its session flag come first, the arguments unchanged"
	like "$OUT" $'\nhost: agentjail\n' "$who: it runs in the jail"
	like "$OUT" $'\nSANDBOX=1 KEY=k1 OTHER=unset\n' \
		"$who: its setenv is set, its MYAGENT_* variable passed, another's not"
	like "$OUT" $'\ndir: writable\n' "$who: its rw directory is writable"
	[ -e "$HOMEDIR/.myagent/made-inside" ]
	ok $? "$who: what it writes there lasts on the host"
	like "$OUT" $'\nhooks: read-only\n' "$who: its protected file is read-only"
	is "$(cat "$HOMEDIR/.myagent/hooks.json")" '{"hooks":[]}' "$who: ... and unchanged"
	like "$OUT" $'\nclaude: absent(\n|$)' "$who: another agent's config dir is absent"
	like "$ERR" 'allow-list \(1 domain: api\.myagent\.test\)' \
		"$who: the network is its allow-list"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- resume --last
	rc_is 0 "$who: resume --last of a user profile's session"
	like "$OUT" $'(^|\n)args: --yolo --resume [0-9a-f-]{36}\n' \
		"$who: ... resumes with its resume_id form and the session's id"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- myagent --fs full -- hello
	like "$OUT" $'(^|\n)args: --session [0-9a-f-]{36} hello\n' \
		"$who: no skip flag when nothing is sandboxed"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- profiles myagent
	rc_is 0 "$who: profiles myagent"
	like "$OUT" 'myagent — My Agent' "$who: ... shows the user's profile"
	like "$OUT" 'api\.myagent\.test' "$who: ... with its domains"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- profiles
	like "$OUT" $'(^|\n)myagent +My Agent +yes +--yolo\n' "$who: profiles lists it, first"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- profiles claude
	like "$OUT" 'mcp\.example\.test' "$who: [profile.claude] adds a domain to the built-in claude"
	like "$OUT" 'api\.anthropic\.com' "$who: ... keeping the built-in's"

	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- shim install myagent
	rc_is 0 "$who: shim install myagent"
	is "$(readlink "$SHIMS/myagent")" "$AJ" "$who: ... makes the shim"
	aj_run "$who" -B "$SHIMS/myagent" -e PATH="$SHIMS:$AGENT_PATH" -- hi
	rc_is 0 "$who: \`myagent hi\` through the shim"
	like "$OUT" $'(^|\n)args: --yolo --session [0-9a-f-]{36} hi\nhost: agentjail\n' \
		"$who: the shim runs the real myagent jailed"
	aj_run "$who" -B "$AJ" -e PATH="$SHIMS:$AGENT_PATH" -- shim remove
	rc_is 0 "$who: shim remove"

	# a project file can never define a profile, trusted or not
	printf '[profile.evil]\ncommand = "sh"\nrw = ["~/.ssh/"]\n' >"$WS/.agentjail.toml"
	aj_chown "$WS/.agentjail.toml"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- myagent -- hello
	rc_is 2 "$who: a project's [profile.evil] is refused"
	like "$ERR" 'agentjail\.toml:1:[0-9]+: .*may never be set in a project' \
		"$who: ... naming the file and position"
	unlike "$OUT" 'args:' "$who: ... and nothing runs"
	rm -f "$WS/.agentjail.toml"

	# a mistake: FILE:LINE:COL and a suggestion; nothing runs
	printf '[profile.myagent]\ncommand = "myagent"\nrw = ["~/.myagent/"]\nskip_permision_flags = ["--yolo"]\n' \
		>"$HOMEDIR/.config/agentjail/config.toml"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- myagent -- hello
	rc_is 2 "$who: an unknown key in [profile.myagent] is an error"
	like "$ERR" 'config\.toml:4:1: unknown key `skip_permision_flags`' "$who: ... at its position"
	like "$ERR" 'did you mean `skip_permission_flags`' "$who: ... with a suggestion"
	unlike "$OUT" 'args:' "$who: ... and nothing runs"
	printf '[profile.shim]\ncommand = "myagent"\nrw = ["~/.myagent/"]\n' \
		>"$HOMEDIR/.config/agentjail/config.toml"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- myagent -- hello
	rc_is 2 "$who: a profile named like a command of agentjail is an error"
	like "$ERR" '`shim` is a command of agentjail' "$who: ... saying so"
	printf '[profile.myagent]\ncommand = "myagent"\nrw = ["~/.config/"]\n' \
		>"$HOMEDIR/.config/agentjail/config.toml"
	aj_run "$who" -B "$AJ" -e PATH="$AGENT_PATH" -- myagent -- hello
	rc_is 2 "$who: a profile making ~/.config writable is refused"
	like "$ERR" "config\\.toml:3:[0-9]+: .*agentjail's own configuration" \
		"$who: ... (the jail could rewrite agentjail's configuration)"
done
aj_skip_missing_whos "user profiles"
done_testing
