#!/usr/bin/env bash
# Protected paths inside the writable workspace: .git/hooks and .git/config read-only, .git cannot
# be renamed, planted symlinks are never followed, and a protected path created during the run is
# reported and moved aside into the state directory.
. "$(dirname "$0")/lib.sh"
aj_setup

GIT_ID=(-c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main)

for who in "${AJ_WHOS[@]}"; do
	# --- a git repository ----------------------------------------------------------------------
	aj_fresh_ws "$who"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	aj_host git -C "$WS" "${GIT_ID[@]}" config core.hooksPath .husky
	mkdir -p "$WS/.husky"
	printf '#!/bin/sh\necho original-hook\n' >"$WS/.husky/pre-commit"
	printf '.probe-out\n' >"$WS/.gitignore"
	aj_chown "$WS"
	cfg_before=$(cat "$WS/.git/config")

	aj_run "$who" -- run -- "$P" write "$WS/.git/hooks/pre-commit" '#!/bin/sh'
	probe_denied "$who: .git/hooks is read-only"
	check "$who: … no hook was planted on the host" test ! -e "$WS/.git/hooks/pre-commit"
	aj_run "$who" -- run -- "$P" write "$WS/.git/config" '[core]'
	probe_denied "$who: .git/config is read-only"
	is "$(cat "$WS/.git/config")" "$cfg_before" "$who: … and unchanged on the host"
	aj_run "$who" -- run -- "$P" write "$WS/.husky/pre-commit" 'echo planted'
	probe_denied "$who: the core.hooksPath directory (.husky) is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/.husky/post-checkout" 'echo planted'
	probe_denied "$who: … no new hook can be added to it"

	# Each rename is tried on an intact tree (undone on the host if it wrongly succeeded), and must
	# fail for a reason other than "no such file".
	undo_renames() {
		local a
		for a in .git .git/hooks .husky; do
			[ -e "$WS/$a-old" ] && [ ! -e "$WS/$a" ] && mv "$WS/$a-old" "$WS/$a"
		done
		return 0
	}
	aj_run "$who" -- run -- mv .git .git-old
	isnt "$RC" 0 "$who: mv .git .git-old fails inside"
	check "$who: … .git is still a directory on the host" test -d "$WS/.git" -a ! -L "$WS/.git"
	check "$who: … no .git-old on the host" test ! -e "$WS/.git-old"
	undo_renames
	for a in .git .git/hooks .husky; do
		aj_run "$who" -- run -- "$P" rename "$WS/$a" "$WS/$a-old"
		probe_denied "$who: rename($a, $a-old) fails (EBUSY/EXDEV/EPERM/EACCES/EROFS)" '(1|13|16|18|30)'
		undo_renames
	done

	aj_run "$who" -- run -- sh -c "git ${GIT_ID[*]} add .gitignore && git ${GIT_ID[*]} commit -qm test && git log --oneline"
	rc_is 0 "$who: git add and commit still work inside"
	aj_host git -C "$WS" log --oneline >/dev/null 2>&1
	ok $? "$who: … and the commit is in the host repository"

	# --- other protected names, existing before the run: read-only --------------------------
	aj_fresh_ws "$who"
	mkdir -p "$WS/.vscode" "$WS/.claude/commands" "$WS/.idea"
	for f in .envrc .mcp.json .gitmodules .agentjail.toml .bashrc .profile .pre-commit-config.yaml \
		.claude/settings.json .claude/settings.local.json .vscode/tasks.json; do
		printf '# original\n' >"$WS/$f" # a comment: .agentjail.toml is read as TOML
	done
	aj_chown "$WS"
	for f in .envrc .mcp.json .gitmodules .agentjail.toml .bashrc .profile .pre-commit-config.yaml \
		.claude/settings.json .claude/settings.local.json .vscode/tasks.json; do
		aj_run "$who" -- run -- "$P" write "$WS/$f" planted
		probe_denied "$who: existing $f is read-only"
		is "$(cat "$WS/$f")" '# original' "$who: … and unchanged on the host"
	done
	aj_run "$who" -- run -- "$P" write "$WS/.claude/commands/evil.md" planted
	probe_denied "$who: .claude/commands is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/.idea/workspace.xml" planted
	probe_denied "$who: .idea is read-only"
	aj_run "$who" -- run -- "$P" rename "$WS/.claude" "$WS/.claude-old"
	probe_denied "$who: the directory above a protected path (.claude) cannot be renamed" '(1|13|16|18|30)'
	aj_run "$who" -- run -- "$P" rename "$WS/.vscode" "$WS/.vscode-old"
	probe_denied "$who: a protected directory (.vscode) cannot be renamed" '(1|13|16|18|30)'
	aj_run "$who" -- run -- "$P" rename "$WS/.envrc" "$WS/.envrc-old"
	probe_denied "$who: a protected file (.envrc) cannot be renamed away" '(1|13|16|18|30)'
	aj_run "$who" -- run -- sh -c "rm -f '$WS/.envrc'"
	check "$who: … nor removed" test -e "$WS/.envrc"

	# --- a protected path created during the run: reported and moved aside ------------------
	aj_fresh_ws "$who"
	rm -rf "${STATE:?}"/*
	aj_run "$who" -- run -- sh -c 'echo x > .envrc'
	check "$who: .envrc created inside is gone from the workspace after the run" test ! -e "$WS/.envrc"
	found=$(find "$STATE" -name .envrc 2>/dev/null | head -n1)
	isnt "$found" "" "$who: … it was moved into the state directory"
	[ -n "$found" ] && is "$(cat "$found")" x "$who: … with its content"
	like "$ERR" "agentjail: .*\\.envrc" "$who: … and stderr names the path"
	diag "$who: exit $RC; stderr: $ERR"
	aj_run "$who" -- run -- sh -c 'mkdir -p .claude && echo {} > .claude/settings.json && mkdir .vscode && echo {} > .vscode/tasks.json'
	check "$who: .claude/settings.json created inside is moved away" test ! -e "$WS/.claude/settings.json"
	check "$who: .vscode created inside is moved away" test ! -e "$WS/.vscode"
	n=$(find "$STATE" \( -name settings.json -o -name .vscode \) 2>/dev/null | wc -l)
	ok $(( n >= 2 ? 0 : 1 )) "$who: … both are in the state directory"
	aj_run "$who" -- run -- sh -c 'echo fine > README.md'
	check "$who: an ordinary file created inside stays" test -e "$WS/README.md"
	unlike "$ERR" 'README' "$who: … and is not reported"

	# --- planted symlinks are never followed -------------------------------------------------
	aj_fresh_ws "$who"
	mkdir -p "$HOMEDIR/secret" "$HOMEDIR/secret2"
	printf 'secret\n' >"$HOMEDIR/secret/canary"
	printf 'secret\n' >"$HOMEDIR/secret2/canary"
	ln -s "$HOMEDIR/secret" "$WS/.vscode"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	rm -rf "$WS/.git/hooks"
	ln -s "$HOMEDIR/secret2" "$WS/.git/hooks"
	ln -s "$HOMEDIR/secret/canary" "$WS/.envrc"
	aj_chown "$WS" "$HOMEDIR/secret" "$HOMEDIR/secret2"
	aj_run "$who" -- run -- "$P" read "$WS/.vscode/canary"
	probe_denied "$who: workspace/.vscode -> \$HOME/secret does not expose the target"
	aj_run "$who" -- run -- "$P" write "$WS/.vscode/x"
	check "$who: … writing through it creates nothing in \$HOME/secret on the host" test ! -e "$HOMEDIR/secret/x"
	aj_run "$who" -- run -- "$P" read "$WS/.git/hooks/canary"
	probe_denied "$who: .git/hooks -> \$HOME/secret2 does not expose the target"
	aj_run "$who" -- run -- "$P" write "$WS/.git/hooks/pre-commit"
	check "$who: … writing through it creates nothing on the host" test ! -e "$HOMEDIR/secret2/pre-commit"
	aj_run "$who" -- run -- "$P" read "$WS/.envrc"
	probe_denied "$who: .envrc -> \$HOME/secret/canary does not expose the target"
	check "$who: the planted symlinks are still in place" test -L "$WS/.vscode" -a -L "$WS/.git/hooks" -a -L "$WS/.envrc"
	rm -rf "$HOMEDIR/secret" "$HOMEDIR/secret2"

	# A symlink the user typed (--rw) outside the workspace is followed: only its canonical
	# target is bound. (One in the workspace that leads out of it is refused: 06-bindlinks.t.)
	aj_fresh_ws "$who"
	mkdir -p "$EXTRA/real"
	ln -s "$EXTRA/real" "$EXTRA/link"
	aj_chown "$EXTRA/real" "$EXTRA/link"
	aj_run "$who" -- run --rw "$EXTRA/link" -- "$P" write "$EXTRA/real/x"
	probe_ok "$who: --rw LINK binds the link's canonical target"
	check "$who: … and the write reached it on the host" test -e "$EXTRA/real/x"
	aj_run "$who" -- run --rw "$EXTRA/link" -- "$P" write "$EXTRA/other"
	check "$who: … and nothing beside it" test ! -e "$EXTRA/other"
	rm -rf "$EXTRA/real" "$EXTRA/other" "$EXTRA/link"
done
aj_skip_missing_whos "protected paths"

done_testing
