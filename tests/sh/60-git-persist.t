#!/usr/bin/env bash
# Nothing a jailed agent writes into git metadata may run on the host or widen the next jail
# (issue 10, items 1 and 2): a rewritten commondir is refused before the jail starts; every git
# dir in reach (submodules, worktrees, a linked worktree's main repository) keeps what makes git
# run a command read-only; a repository created during the run that could make git run a command
# is reported and that moved aside (60-git-new.t: what is kept). End to end: an fsmonitor command planted from inside never runs on `git status` outside.
. "$(dirname "$0")/lib.sh"
aj_setup

GIT_ID=(-c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main
	-c protocol.file.allow=always)
GIT_IN="git ${GIT_ID[*]}"

# A repository in WS with one commit.
git_ws() {
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	printf 'x\n' >"$WS/file"
	printf 'probe\n.probe-out\n' >"$WS/.gitignore"
	aj_chown "$WS"
	aj_host git -C "$WS" "${GIT_ID[@]}" add file .gitignore
	aj_host git -C "$WS" "${GIT_ID[@]}" commit -qm init
}

# fsmonitor_ran DIR: runs `git status` on the host in DIR (as WHO); true when the planted
# marker command ran.
MARK=
fsmonitor_ran() {
	rm -f "$MARK"
	aj_host git -C "$1" status >/dev/null 2>&1
	[ -e "$MARK" ]
}
# plant FILE: the shell command (run inside) that sets core.fsmonitor to the marker command in
# the git config file FILE, as an attacker would
plant() { printf "git config -f '%s' core.fsmonitor 'touch %s #'" "$1" "$MARK"; }

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	MARK=$EXTRA/fsmonitor-ran
	# --- 1. .git/commondir pointing at $HOME ----------------------------------------------------
	aj_fresh_ws "$who"
	git_ws
	aj_run "$who" -- run -- sh -c 'echo "$HOME" > .git/commondir'
	if [ -e "$WS/.git/commondir" ]; then
		aj_run "$who" -- run --dry-run -- true
		rc_is 2 "$who: a commondir written inside is refused by the next run (exit 2)"
	else
		like "$ERR" "\\.git/commondir" "$who: a commondir written inside is reported and moved aside"
	fi
	printf '%s\n' "$HOMEDIR" >"$WS/.git/commondir"
	aj_chown "$WS"
	aj_run "$who" -- run --dry-run -- true
	rc_is 2 "$who: .git/commondir -> \$HOME: --dry-run refuses (exit 2)"
	like "$ERR" "names $HOMEDIR.*: $WS/\\.git/commondir" "$who: … naming where it points and the pointer file"
	unlike "$OUT" "bind-fd [0-9]+ $HOMEDIR( |\$)" "$who: … and \$HOME is never bound"
	aj_run "$who" -- run -- true
	rc_is 2 "$who: … a real run refuses too"
	printf '%s\n' "$(dirname "$STATE")" >"$WS/.git/commondir"
	aj_run "$who" -- run --dry-run -- true
	rc_is 2 "$who: .git/commondir -> the directory holding the state dir: refused"
	rm -f "$WS/.git/commondir"
	aj_run "$who" -- run -- true
	rc_is 0 "$who: … and runs again once it is removed"

	# --- 2a. .git/config.worktree (extensions.worktreeConfig) ---------------------------------
	aj_fresh_ws "$who"
	git_ws
	aj_host git -C "$WS" config extensions.worktreeConfig true
	aj_run "$who" -- run -- sh -c "$(plant .git/config.worktree)"
	! fsmonitor_ran "$WS"
	ok $? "$who: config.worktree planted inside: git status on the host runs nothing"
	like "$ERR" "config\\.worktree" "$who: … it is reported"
	printf '[core]\n\tbare = false\n' >"$WS/.git/config.worktree"
	aj_chown "$WS"
	aj_run "$who" -- run -- "$P" write "$WS/.git/config.worktree" '[core]'
	probe_denied "$who: an existing config.worktree is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/.git/info/attributes" '* filter=x'
	probe_denied "$who: .git/info is read-only"

	# a repository without hooks/ gets an empty one, bound read-only like any other
	rm -rf "$WS/.git/hooks"
	aj_run "$who" -- run -- "$P" write "$WS/.git/hooks/pre-commit" '#!/bin/sh'
	probe_denied "$who: a missing .git/hooks is made on the host and read-only inside (not ENOENT)" '(1|13|30)'
	check "$who: … it is an empty directory on the host" test -d "$WS/.git/hooks" -a ! -e "$WS/.git/hooks/pre-commit"

	# a config file the repository includes from the work tree is config too
	aj_fresh_ws "$who"
	git_ws
	printf '[user]\n\tname = team\n' >"$WS/team.gitconfig"
	aj_chown "$WS"
	aj_host git -C "$WS" config include.path ../team.gitconfig
	aj_run "$who" -- run -- sh -c "$(plant team.gitconfig)"
	! fsmonitor_ran "$WS"
	ok $? "$who: fsmonitor planted in an included team.gitconfig: git status on the host runs nothing"

	# --- 2b. a copied git dir inside .git named by .git/commondir ------------------------------
	aj_fresh_ws "$who"
	git_ws
	aj_run "$who" -- run -- sh -c "mkdir .git/x && cp -r .git/objects .git/refs .git/HEAD .git/x/ &&
		$(plant .git/x/config) && echo x > .git/commondir"
	! fsmonitor_ran "$WS"
	ok $? "$who: .git/commondir -> a planted git dir inside .git: git status on the host runs nothing"
	like "$ERR" "\\.git/commondir" "$who: … it is reported"

	# --- 2c. a submodule's git dir (.git/modules/sub) -----------------------------------------
	aj_fresh_ws "$who"
	mkdir -p "$EXTRA/subsrc"
	aj_chown "$EXTRA/subsrc"
	aj_host git -C "$EXTRA/subsrc" "${GIT_ID[@]}" init -q
	aj_host git -C "$EXTRA/subsrc" "${GIT_ID[@]}" commit -q --allow-empty -m sub
	git_ws
	aj_host git -C "$WS" "${GIT_ID[@]}" submodule -q add "$EXTRA/subsrc" sub
	aj_host git -C "$WS" "${GIT_ID[@]}" commit -qm 'add sub'
	aj_run "$who" -- run -- sh -c "$(plant .git/modules/sub/config)"
	! fsmonitor_ran "$WS"
	ok $? "$who: fsmonitor planted in .git/modules/sub/config: git status on the host (which recurses into sub) runs nothing"
	aj_run "$who" -- run -- "$P" write "$WS/.git/modules/sub/config" "[core] fsmonitor = planted"
	probe_denied "$who: .git/modules/sub/config is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/.git/modules/sub/hooks/pre-commit" '#!/bin/sh'
	probe_denied "$who: .git/modules/sub/hooks is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/sub/.git" 'gitdir: ../evil'
	probe_denied "$who: the submodule's .git file is read-only"
	aj_run "$who" -- run -- sh -c "cd sub && $GIT_IN commit -q --allow-empty -m in-sub && cd .. &&
		$GIT_IN add sub && $GIT_IN commit -qm bump && $GIT_IN branch b2 && echo y > file &&
		$GIT_IN stash -q && $GIT_IN stash pop -q"
	rc_is 0 "$who: with a submodule: commit (in it and above), branch and stash still work inside"
	aj_run "$who" -- verify --fs rw --net off
	like "$OUT" $'(^|\n)PASS  fs.git_metadata +[0-9]+ git metadata paths read-only in 2 git dirs' \
		"$who: verify's git metadata probe passes, with the submodule's git dir in reach"
	unlike "$OUT" $'(^|\n)FAIL  ' "$who: … and nothing FAILs"

	# --- 2d. a nested repository created inside and added as a gitlink ------------------------
	aj_fresh_ws "$who"
	git_ws
	rm -rf "${STATE:?}"/*
	aj_run "$who" -- run -- sh -c "$GIT_IN init -q nested && $GIT_IN -C nested commit -q --allow-empty -m n &&
		$(plant nested/.git/config) && $GIT_IN add nested && $GIT_IN commit -qm gitlink"
	! fsmonitor_ran "$WS"
	ok $? "$who: a nested repository made inside: git status on the host runs nothing"
	like "$ERR" "nested/\\.git" "$who: … it is reported"
	found=$(find "$STATE" -path '*nested/.git/config' 2>/dev/null | head -n1)
	isnt "$found" "" "$who: … and its config is in the quarantine"

	# a bare repository made inside: git run in that directory on the host would obey its config
	aj_fresh_ws "$who"
	git_ws
	# (a bare repository has no work tree, so no fsmonitor: its pager runs in a terminal)
	aj_run "$who" -- run -- sh -c "$GIT_IN init -q --bare tools.git &&
		git config -f tools.git/config core.pager 'touch $MARK #'"
	rm -f "$MARK"
	aj_host script -qec "cd '$WS/tools.git' && git -p log" /dev/null >/dev/null 2>&1
	check "$who: a bare repository made inside: git log in it on the host runs nothing" test ! -e "$MARK"
	like "$ERR" "tools\\.git" "$who: … it is reported"

	# a nested repository there before the run is protected like the workspace's own
	aj_fresh_ws "$who"
	git_ws
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q inner
	aj_run "$who" -- run -- "$P" write "$WS/inner/.git/config" "[core] fsmonitor = planted"
	probe_denied "$who: an existing nested repository's config is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/inner/.git/hooks/post-checkout" '#!/bin/sh'
	probe_denied "$who: … and its hooks"
	aj_run "$who" -- run -- true
	unlike "$ERR" "inner" "$who: … and it is not reported as new"

	# --- 2e. the workspace is a linked worktree -----------------------------------------------
	aj_fresh_ws "$who"
	main=$EXTRA/main
	rm -rf "$main"
	mkdir -p "$main"
	aj_chown "$main"
	aj_host git -C "$main" "${GIT_ID[@]}" init -q
	aj_host git -C "$main" "${GIT_ID[@]}" commit -q --allow-empty -m init
	rm -rf "$WS"
	aj_host git -C "$main" "${GIT_ID[@]}" worktree add -q "$WS" -b wt
	install -m 0755 "$AJ_BIN/probe" "$WS/probe"
	aj_chown "$WS"
	aj_run "$who" -- run -- sh -c "mkdir -p '$main/.git/x' && cp -r '$main/.git/objects' '$main/.git/refs' '$main/.git/HEAD' '$main/.git/x/' &&
		$(plant "$main/.git/x/config") && echo x > '$main/.git/commondir'"
	! fsmonitor_ran "$main"
	ok $? "$who: worktree: a commondir planted in the main repository: git status there runs nothing"
	rm -rf "$main/.git/commondir" "$main/.git/x"
	aj_run "$who" -- run -- sh -c "echo w > w && $GIT_IN add w && $GIT_IN commit -qm w && $GIT_IN branch w2 &&
		echo v > w && $GIT_IN stash -q && $GIT_IN stash pop -q && $GIT_IN log --oneline"
	rc_is 0 "$who: worktree: add, commit, branch and stash still work inside"
	aj_host git -C "$main" log --oneline wt 2>/dev/null | grep -q ' w$'
	ok $? "$who: … and the commit is in the main repository"
	aj_run "$who" -- run -- "$P" write "$main/.git/config" "[core] fsmonitor = planted"
	probe_denied "$who: worktree: the main repository's config is read-only"
	aj_run "$who" -- run -- "$P" write "$main/.git/worktrees/$(basename "$WS")/commondir" "$HOMEDIR"
	probe_denied "$who: worktree: its commondir file is read-only"
	aj_run "$who" -- run -- "$P" write "$WS/.git" "gitdir: $WS/evil"
	probe_denied "$who: worktree: the workspace's .git file is read-only"
	aj_run "$who" -- run -- sh -c 'echo "$HOME" > "$(git rev-parse --git-dir)/commondir"'
	aj_run "$who" -- run --dry-run -- true
	unlike "$OUT" "bind-fd [0-9]+ $HOMEDIR( |\$)" "$who: worktree: \$HOME is never bound after a run"

	# --- `git init` inside a workspace without a repository: the agent's repository works ------
	# (the live watch once moved .git away while git init was still writing it, so git failed)
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c "git ${GIT_ID[*]} init -q && echo a > a && git ${GIT_ID[*]} add a &&
		git ${GIT_ID[*]} commit -qm first && git log --oneline"
	rc_is 0 "$who: git init, add and commit work inside a workspace that had no repository"
	unlike "$ERR" "violation" "$who: … nothing of it is moved aside (its config runs nothing: issue 26)"
	check "$who: … its config is kept" test -e "$WS/.git/config"
	aj_host git -C "$WS" log --oneline 2>/dev/null | grep -q ' first$'
	ok $? "$who: … and its commit is readable by git on the host"
done
aj_skip_missing_whos "git metadata"

done_testing
