#!/bin/bash
# The real agents from npm, installed into a test $HOME's npm prefix (~/.npm-global), started
# in the jail as root and as an unprivileged user: each gets as far as its own "not logged in"
# message, with its config dir writable and nothing else of $HOME. No credentials are used.
# Skips, with the reason, when npm or the registry is unavailable. AJ_NPM_PREFIX=DIR reuses an
# install (a DIR with bin/ and lib/node_modules/) instead of downloading.
. "$(dirname "$0")/lib.sh"
aj_setup

AGENTS=(claude codex gemini)
declare -A PKG=([claude]=@anthropic-ai/claude-code [codex]=@openai/codex [gemini]=@google/gemini-cli)

skip_all() {
	local who a
	for who in root user; do
		for a in "${AGENTS[@]}"; do skip "$who: $a from npm in the jail" "$1"; done
	done
	done_testing
}

command -v npm >/dev/null 2>&1 || skip_all "npm is not installed"
command -v node >/dev/null 2>&1 || skip_all "node is not installed"

# One install, shared by hard links (same filesystem): each identity gets its own prefix
# under its own $HOME, as `npm install -g` with prefix=~/.npm-global makes it.
NPM=$AJ_TMP/npm
declare -A HAVE=() WHY=()
AJ_NPM_PREFIX=$(aj_npm_shared) # the suite's one install (lib.sh), when there is one
if [ -n "${AJ_NPM_PREFIX:-}" ] && { [ -d "$AJ_NPM_PREFIX/lib/node_modules" ] ||
	aj_npm_why "$AJ_NPM_PREFIX" x >/dev/null; }; then
	# only the three agents this file runs, not the whole shared prefix
	aj_npm_copy "$AJ_NPM_PREFIX" "$NPM" "${PKG[@]}" || bail "cannot copy the agents from $AJ_NPM_PREFIX"
	for a in "${AGENTS[@]}"; do
		[ -x "$NPM/bin/$a" ] || WHY[$a]=$(aj_npm_why "$AJ_NPM_PREFIX" "${PKG[$a]}") ||
			WHY[$a]="${PKG[$a]} is not installed in AJ_NPM_PREFIX ($AJ_NPM_PREFIX)"
	done
else
	mkdir -m 0755 "$NPM"
	if ! timeout 30 npm view --cache "$AJ_TMP/npm-cache" @anthropic-ai/claude-code version \
		>/dev/null 2>"$AJ_TMP/npm-view.err"; then
		skip_all "the npm registry is not reachable: $(tail -n1 "$AJ_TMP/npm-view.err")"
	fi
	for a in "${AGENTS[@]}"; do
		timeout 600 npm install -g --prefix "$NPM" --cache "$AJ_TMP/npm-cache" --no-audit \
			--no-fund --loglevel=error "${PKG[$a]}" >"$AJ_TMP/npm-$a.log" 2>&1 ||
			diag "npm install ${PKG[$a]} failed: $(tail -n3 "$AJ_TMP/npm-$a.log")"
	done
fi
for a in "${AGENTS[@]}"; do
	[ -x "$NPM/bin/$a" ] && HAVE[$a]=1
done
chmod -R a+rX "$NPM"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	cp -al "$NPM" "$HOMEDIR/.npm-global"
	mkdir -p "$HOMEDIR/.ssh"
	echo 'not-a-key' >"$HOMEDIR/.ssh/id_ed25519"
	aj_chown "$HOMEDIR/.ssh"
	[ "$who" = user ] && aj_is_root && chown "$AJ_USER:" "$HOMEDIR" "$HOMEDIR/.npm-global"
	APATH=$HOMEDIR/.npm-global/bin:$AJ_SYS_PATH

	# --version prints from inside the jail
	declare -A VERSION_RE=([claude]='^[0-9][0-9.]* \(Claude Code\)' [codex]='codex-cli [0-9]'
		[gemini]='^[0-9]+\.[0-9]+\.[0-9]+')
	for a in "${AGENTS[@]}"; do
		if [ -z "${HAVE[$a]:-}" ]; then
			skip "$who: $a from npm in the jail" "${WHY[$a]:-npm install ${PKG[$a]} failed (see diag)}"
			continue
		fi
		aj_run "$who" -e PATH="$APATH" -- "$a" -- --version
		rc_is 0 "$who: agentjail $a -- --version exits 0"
		like "$OUT" "${VERSION_RE[$a]}" "$who: $a prints its version from inside the jail"
	done

	if [ -n "${HAVE[claude]:-}" ]; then
		aj_run "$who" -e PATH="$APATH" -- claude -- -p hello
		like "$OUT$ERR" 'Not logged in|/login|ANTHROPIC_API_KEY' \
			"$who: claude -p hello reaches its own login message"
		unlike "$OUT$ERR" 'cannot be used with root|ENOENT|No such file|Cannot find module|Segmentation' \
			"$who: ... not the root refusal, not a missing file"
		[ -n "$(ls -A "$HOMEDIR/.claude" 2>/dev/null)" ]
		ok $? "$who: claude wrote into ~/.claude (writable, and it lasts)"
		like "$(cat "$HOMEDIR/.claude.json" 2>/dev/null)" '"(firstStartTime|userID|numStartups)"' \
			"$who: claude kept its state in ~/.claude.json"
		# resume: claude's own --resume with the id agentjail gave it (--session-id)
		aj_run "$who" -- sessions --json
		SID=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[0]["id"], d[0]["agent_session_id"])')
		aj_run "$who" -e PATH="$APATH" -- resume --last
		unlike "$OUT$ERR" 'ENOENT|No such file|Cannot find module|not recorded' \
			"$who: resume --last runs claude again in the jail"
		aj_run "$who" -- show "${SID%% *}" --json
		got=$(printf '%s' "$OUT" | AID="${SID#* }" python3 -c '
import json,os,sys
d=json.load(sys.stdin); a=d["attempts_detail"]
print(a[0]["kind"], a[1]["kind"], "--resume" in a[1]["argv"], os.environ["AID"] in a[1]["argv"],
      "--dangerously-skip-permissions" in a[1]["argv"])' 2>&1)
		is "$got" "start resume True True True" \
			"$who: the resume attempt is claude --dangerously-skip-permissions --resume <its session id>"
		aj_run "$who" -e PATH="$APATH" -- claude --dry-run -- -p hello
		home_paths=$(printf '%s\n' "$OUT" | grep -v 'private package cache' |
			grep -o -- "-bind-fd [0-9]* $HOMEDIR/[^ ]*" |
			sed "s|.* $HOMEDIR/||" | grep -v '^\.claude/' | sort -u | tr '\n' ' ')
		# (inside ~/.claude: its read-only instruction dirs, made empty by the runs above)
		is "$home_paths" ".claude .claude.json .npm-global/bin .npm-global/lib/node_modules/@anthropic-ai/claude-code " \
			"$who: of \$HOME the jail shows only claude's config, its PATH dir and its package"
	fi

	if [ -n "${HAVE[codex]:-}" ]; then
		aj_run "$who" -e PATH="$APATH" -- codex -- login status
		like "$OUT$ERR" 'Not logged in' "$who: codex login status: its own 'Not logged in'"
		# exec starts a session (with the bypass flag: no approvals, no sandbox of its own) and
		# then waits for a network it does not have; it is stopped after it printed its header
		aj_cmd "$who" -e PATH="$APATH" -e AGENTJAIL_GRACE_MS=500 -- codex --net off -- exec hello
		timeout -k 5 15 "${AJ_CMD[@]}" </dev/null >"$AJ_TMP/codex.out" 2>&1
		out=$(cat "$AJ_TMP/codex.out")
		like "$out" 'sandbox: danger-full-access' \
			"$who: codex exec starts with approvals and its own sandbox off (the jail is the sandbox)"
		unlike "$out" 'ENOENT|No such file|Cannot find module|panicked' "$who: ... without a missing file"
		# its bundled skills: installed in the workspace's own skills/.system (issue 24 item
		# 10), the user's skills read-only, the host's skills/.system untouched
		unlike "$out" 'failed to install system skills' \
			"$who: codex installs its bundled skills in the jail (no 'failed to install system skills')"
		[ -z "$(ls -A "$HOMEDIR/.codex/skills/.system" 2>/dev/null)" ]
		ok $? "$who: ... into the workspace's own skills/.system, not the host's"
		[ -n "$(ls -A "$STATE"/cache/ws/*/agent/codex"$HOMEDIR"/.codex/skills/.system 2>/dev/null)" ]
		ok $? "$who: ... which is in agentjail's state"
		[ -d "$HOMEDIR/.codex" ] && [ -n "$(ls -A "$HOMEDIR/.codex")" ]
		ok $? "$who: codex wrote into ~/.codex"
		[ ! -e "$HOMEDIR/.claude/.codex" ] && ! grep -q codex-secret -r "$HOMEDIR/.codex" 2>/dev/null
		ok $? "$who: nothing crossed between the agents' dirs"
	fi

	if [ -n "${HAVE[gemini]:-}" ]; then
		aj_run "$who" -e PATH="$APATH" -- gemini -- -p hello
		like "$OUT$ERR" 'Please set an Auth method|GEMINI_API_KEY' \
			"$who: gemini -p hello reaches its own missing-credentials message"
		unlike "$OUT$ERR" 'not trusted|ENOENT|Cannot find module' \
			"$who: ... in YOLO mode (the workspace trusted for the session), no missing file"
		[ -d "$HOMEDIR/.gemini" ]
		ok $? "$who: ~/.gemini exists for gemini"
	fi
	# ~/.ssh and the other agents' dirs are not in any agent's jail
	for a in "${AGENTS[@]}"; do
		[ -n "${HAVE[$a]:-}" ] || continue
		others=$(printf '%s\n' "${AGENTS[@]}" | grep -vx "$a" | paste -sd'|')
		aj_run "$who" -e PATH="$APATH" -- "$a" --dry-run -- -p x
		unlike "$OUT" "$HOMEDIR/(\.ssh|\.($others))([ /]|\.json)" \
			"$who: $a: no ~/.ssh and no other agent's dir in its jail"
	done
done
aj_skip_missing_whos "real agents from npm"
done_testing
