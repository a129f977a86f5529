#!/bin/bash
# shellcheck disable=SC2088,SC2016
# What an agent's own CLI runs or loads later is never what a jail wrote (issue 24 items 8 and
# 10; doc/agents.md "Where each agent runs code from"). A stand-in for each agent plants, from
# inside its jail, in every place the real CLI executes from: opencode's ~/.cache/opencode
# (the rg it runs when none is on PATH, the packages and models.json it loads), its config's
# node_modules and package.json, the git dirs it runs git in; codex's skills/.system (installed
# once per version, then trusted), its PATH dir under tmp/ and its shell snapshots; claude's
# shell snapshots and session environment files (sourced), its local install, its Chrome host
# and background jobs; gemini's checkpoint git dirs and rg dir; kiro's hooks and powers; and the
# projects' .pi, .claude/skills, .gemini/extensions, .kiro and .aider.conf.yml. Afterwards the
# host has none of it: each place is the workspace's own (agentjail's state), read-only, or moved
# aside and reported. codex still writes its bundled skills (its own) while the user's stay
# read-only; a workspace's next jail finds its own private files, another workspace's does not.
. "$(dirname "$0")/lib.sh"
aj_setup

MARK="planted by the jail"

# stand_in FILE PATH...: an agent that appends MARK to each PATH ("~/…" in $HOME, else in the
# workspace) and prints "wrote PATH" or "refused PATH"; first it prints "seen FILE" for what an
# earlier run left in its private places (opencode's cache, codex's skills).
stand_in() {
	local f=$1 p
	shift
	{
		echo '#!/bin/sh'
		echo 'for f in "$HOME/.cache/opencode/bin/gopls" "$HOME/.codex/skills/new/SKILL.md"; do'
		echo '  [ -f "$f" ] && echo "seen $f"; done'
		for p in "$@"; do
			p=${p/#\~/\$HOME}
			echo "if (mkdir -p \"\$(dirname \"$p\")\" && echo '$MARK' >>\"$p\") 2>/dev/null; then echo \"wrote $p\"; else echo \"refused $p\"; fi"
		done
		echo 'exit 0'
	} >"$f"
	chmod 0755 "$f"
}

# the host's own files in those places, as the real CLIs leave them
host_files() {
	mkdir -p "$HOMEDIR/.cache/opencode/bin" "$HOMEDIR/.config/opencode" \
		"$HOMEDIR/.codex/skills/mine" "$HOMEDIR/.codex/skills/.system/imagegen" \
		"$HOMEDIR/.claude/local" "$HOMEDIR/.local/bin"
	echo 'host rg' >"$HOMEDIR/.cache/opencode/bin/rg"
	echo '{"theme": "host"}' >"$HOMEDIR/.config/opencode/opencode.json"
	echo 'my skill' >"$HOMEDIR/.codex/skills/mine/SKILL.md"
	echo 'c97ed5ddabec1e4' >"$HOMEDIR/.codex/skills/.system/.codex-system-skills.marker"
	echo 'system skill' >"$HOMEDIR/.codex/skills/.system/imagegen/SKILL.md"
	echo 'host claude' >"$HOMEDIR/.claude/local/claude"
}

# the places, "~/…" kept as written (host_has and stand_in put the home in)
OPENCODE=('~/.cache/opencode/bin/rg' '~/.cache/opencode/bin/gopls'
	'~/.cache/opencode/packages/evil/node_modules/evil/index.js' '~/.cache/opencode/models.json'
	'~/.config/opencode/node_modules/@opencode-ai/plugin/dist/index.js'
	'~/.config/opencode/package.json' '~/.config/opencode/opencode.json'
	'~/.local/share/opencode/snapshot/p1/h1/config' '~/.local/share/opencode/worktree/p1/w/.git'
	'~/.local/share/opencode/repos/r/.git/config')
CODEX=('~/.codex/skills/.system/imagegen/SKILL.md'
	'~/.codex/skills/.system/.codex-system-skills.marker' '~/.codex/skills/mine/SKILL.md'
	'~/.codex/skills/new/SKILL.md' '~/.codex/tmp/arg0/codex-arg0x/git'
	'~/.codex/.tmp/plugins/p/plugin.json' '~/.codex/shell_snapshots/s.sh')
CLAUDE=('~/.claude/shell-snapshots/snapshot-bash-1.sh'
	'~/.claude/session-env/s1/sessionstart-hook-0.sh' '~/.claude/local/claude'
	'~/.claude/chrome/chrome-native-host' '~/.claude/jobs/j1/state.json')
GEMINI=('~/.gemini/history/p1/.git/config' '~/.gemini/tmp/bin/rg')
KIRO=('~/.kiro/hooks/h.json' '~/.kiro/powers/p/mcp.json')
PROJECT=(.pi/extensions/x.ts .claude/skills/s/SKILL.md .gemini/extensions/e/gemini-extension.json
	.kiro/hooks/h.json .aider.conf.yml)

# host_has PATH: whether the host's PATH holds what a jail planted
host_has() {
	local p=${1/#\~/$HOMEDIR}
	[ "${p:0:1}" = / ] || p=$WS/$p
	grep -qs "$MARK" "$p"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	host_files
	stand_in "$HOMEDIR/.local/bin/opencode" "${OPENCODE[@]}" "${PROJECT[@]}"
	stand_in "$HOMEDIR/.local/bin/codex" "${CODEX[@]}"
	stand_in "$HOMEDIR/.local/bin/claude" "${CLAUDE[@]}"
	stand_in "$HOMEDIR/.local/bin/gemini" "${GEMINI[@]}"
	stand_in "$HOMEDIR/.local/bin/kiro-cli" "${KIRO[@]}"
	aj_chown "$HOMEDIR"
	APATH=$HOMEDIR/.local/bin:$AJ_SYS_PATH

	for a in opencode codex claude gemini kiro; do
		aj_run "$who" -e PATH="$APATH" -- "$a"
		rc_is 0 "$who: $a: the stand-in ran"
		case $a in
		opencode) list=("${OPENCODE[@]}" "${PROJECT[@]}") ;;
		codex) list=("${CODEX[@]}") ;;
		claude) list=("${CLAUDE[@]}") ;;
		gemini) list=("${GEMINI[@]}") ;;
		kiro) list=("${KIRO[@]}") ;;
		esac
		for p in "${list[@]}"; do
			! host_has "$p"
			ok $? "$who: $a: what the jail wrote at $p is not on the host"
		done
		case $a in
		opencode)
			like "$OUT" "wrote $HOMEDIR/.cache/opencode/bin/gopls" \
				"$who: opencode: it can still download a program into its cache (the workspace's own)"
			like "$OUT" "refused $HOMEDIR/.cache/opencode/bin/rg" "$who: opencode: the host's rg is read-only"
			like "$OUT" "wrote $HOMEDIR/.config/opencode/package.json" \
				"$who: opencode: it can install its plugins' dependencies (the workspace's own)"
			unlike "$ERR" 'violation: .*\.config/opencode' "$who: opencode: ... which is no violation"
			like "$OUT" "refused $HOMEDIR/.config/opencode/opencode.json" "$who: opencode: the host's config is read-only"
			is "$(cat "$HOMEDIR/.cache/opencode/bin/rg")" 'host rg' "$who: opencode: the host's rg is unchanged"
			like "$ERR" 'violation: .*\.pi' "$who: a project's .pi/ made in the jail is reported"
			;;
		codex)
			like "$OUT" "wrote $HOMEDIR/.codex/skills/.system/imagegen/SKILL.md" \
				"$who: codex: it can write its bundled skills (skills/.system, its own)"
			like "$OUT" "refused $HOMEDIR/.codex/skills/mine/SKILL.md" "$who: codex: the user's skills stay read-only"
			is "$(cat "$HOMEDIR/.codex/skills/.system/imagegen/SKILL.md")" 'system skill' \
				"$who: codex: the host's skills/.system is unchanged"
			;;
		claude)
			like "$ERR" 'violation: .*\.claude/chrome' "$who: claude: a Chrome host made in the jail is reported"
			is "$(cat "$HOMEDIR/.claude/local/claude")" 'host claude' "$who: claude: its local install is unchanged"
			;;
		esac
	done

	# the workspace's next jail finds its own private files; another workspace's does not
	aj_run "$who" -e PATH="$APATH" -- opencode
	like "$OUT" "seen $HOMEDIR/.cache/opencode/bin/gopls" "$who: opencode's private cache lasts for the workspace's next jail"
	aj_run "$who" -e PATH="$APATH" -- codex
	like "$OUT" "seen $HOMEDIR/.codex/skills/new/SKILL.md" "$who: so does a skill codex made in the jail"
	W2=$AJ_TMP/$who/ws2
	mkdir -m 0755 "$W2" && aj_chown "$W2"
	aj_run "$who" -C "$W2" -e PATH="$APATH" -- opencode
	unlike "$OUT" 'seen ' "$who: another workspace's jail does not see it"

	# a session stored by an older agentjail (~/.cache/opencode writable, nothing private):
	# resume takes the profile's places as this agentjail knows them
	rm -rf "$HOMEDIR/.cache/opencode/models.json"
	aj_run "$who" -C "$W2" -- sessions --json
	sid=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
	python3 - "$STATE/agentjail.db" "$sid" "$HOMEDIR" <<'PY'
import json, sqlite3, sys
db, sid, home = sys.argv[1:]
c = sqlite3.connect(db)
p = json.loads(c.execute("SELECT policy FROM sessions WHERE id = ?", (sid,)).fetchone()[0])
p["agent_rw"].append(home + "/.cache/opencode")
for k in ("agent_private", "agent_private_over"):
    p.pop(k, None)
c.execute("UPDATE sessions SET policy = ? WHERE id = ?", (json.dumps(p), sid))
c.commit()
PY
	aj_run "$who" -C "$W2" -e PATH="$APATH" -- resume "$sid" --quiet
	like "$OUT" "wrote $HOMEDIR/.cache/opencode/models.json" "$who: resume of an older session runs the agent"
	! host_has '~/.cache/opencode/models.json'
	ok $? "$who: ... and what it writes in ~/.cache/opencode is still not on the host"
done
aj_skip_missing_whos "agents' private directories"
done_testing
