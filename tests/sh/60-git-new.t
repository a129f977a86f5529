#!/usr/bin/env bash
# git inside the jail (issue 26, item 4): a repository created during the run keeps a config
# that sets only keys known to run nothing (`git init`, the identity set after it) and git's
# template (sample hooks, a commented exclude), with no violation line; a config with a key that
# runs a command (fsmonitor, an alias with !, hooksPath, a credential helper, a remote helper
# URL) or includes another file, a hook, or a config that is no plain file is moved aside, and
# the line names the key or the file. The host's git then runs nothing from it. `git config
# --global` fails inside (the host's ~/.gitconfig is read-only): one line after the run says
# why and how to set an identity, and --env GIT_AUTHOR_NAME… works. As root and as a user.
. "$(dirname "$0")/lib.sh"
aj_setup

command -v git >/dev/null 2>&1 || bail "git is missing (scripts/deps.sh installs it)"
GIT_ID=(-c init.defaultBranch=main)
GIT_IN="git ${GIT_ID[*]}"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	MARK=$EXTRA/git-new-ran
	# the host's ~/.gitconfig exists, as for most users: the jail binds it read-only
	printf '[user]\n\tname = Host User\n\temail = host@example.invalid\n' >"$HOMEDIR/.gitconfig"
	aj_chown "$HOMEDIR/.gitconfig"

	# --- git init, then a repository-local identity: kept, nothing reported ----------------
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c "$GIT_IN init -q && git config user.name 'Jail User' &&
		git config user.email jail@example.invalid && echo a > a && git add a &&
		git commit -qm first && git log --format=%an"
	is "$RC/$OUT" "0/Jail User" "$who: git init, a local identity and a commit work inside"
	unlike "$ERR" 'violation' "$who: … with no violation line"
	is "$(aj_host git -C "$WS" config user.name)" "Jail User" \
		"$who: … the repository's config (identity included) is kept"
	is "$(aj_host git -C "$WS" log --format='%an <%ae>' -1)" "Jail User <jail@example.invalid>" \
		"$who: … and the host's git reads the commit"
	check "$who: … git's sample hooks are kept" test -e "$WS/.git/hooks/pre-commit.sample"
	check "$who: … and its info/exclude" test -e "$WS/.git/info/exclude"
	aj_run "$who" -- run -- sh -c 'git config user.name other'
	like "$ERR" 'could not write config file \.git/config' \
		"$who: the next jail finds that config read-only (it exists now)"

	# --- keys that make the host's git run a command: moved aside, the key named ----------------
	for k in "core.fsmonitor|touch $MARK #" "alias.st|!touch $MARK" "core.hooksPath|$EXTRA" \
		"credential.helper|!touch $MARK" "remote.origin.url|ext::sh -c touch\\ $MARK" \
		"include.path|$EXTRA/evil.cfg" "gc.auto|0"; do
		key=${k%%|*} val=${k#*|}
		aj_fresh_ws "$who"
		aj_run "$who" -- run -- sh -c "$GIT_IN init -q && git config user.name J &&
			git config '$key' '$val'"
		lkey=$(tr 'A-Z' 'a-z' <<<"$key")
		like "$ERR" "violation: $WS/\\.git/config: appeared in a git repository created during the run \\(it sets $lkey, " \
			"$who: a new repository setting $key: its config is moved aside, the key named"
		check "$who: … it is gone from the repository" test ! -e "$WS/.git/config"
	done
	rm -f "$MARK"
	aj_host git -C "$WS" status >/dev/null 2>&1
	check "$who: … git status on the host ran nothing" test ! -e "$MARK"

	# --- a hook, a config that is a symlink or has a second link --------------------------------
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c "$GIT_IN init -q && printf '#!/bin/sh\ntouch $MARK\n' > .git/hooks/post-checkout &&
		chmod +x .git/hooks/post-checkout"
	like "$ERR" "\\.git/hooks: appeared in a git repository created during the run \\(it holds post-checkout, which git runs as a hook\\)" \
		"$who: a hook in a new repository: hooks/ moved aside, the hook named"
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c "$GIT_IN init -q && cp .git/config cfg && rm .git/config &&
		ln -s ../cfg .git/config"
	like "$ERR" "\\.git/config: appeared in a git repository created during the run \\(it is not a regular file\\)" \
		"$who: a config that is a symlink: moved aside"
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c "$GIT_IN init -q && ln .git/config cfg"
	like "$ERR" "\\.git/config: appeared in a git repository created during the run \\(it has another link" \
		"$who: a config with a second link (a file that could rewrite it later): moved aside"

	# --- git config --global: why it fails, and how to set an identity ----------------------------
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- git config --global user.name X
	rc_is 4 "$who: git config --global fails inside (git's status)"
	like "$ERR" "agentjail: git could not write $HOMEDIR/\\.gitconfig \\(git config --global\\): the host's file is read-only in the jail .*--env GIT_AUTHOR_NAME=" \
		"$who: … one line after the run says why and how to set an identity"
	is "$(grep -c 'git could not write' <<<"$ERR")" 1 "$who: … once"
	aj_run "$who" -- run -- git config --global --get user.name
	unlike "$ERR" 'git could not write' "$who: reading the global config gives no such line"
	aj_run "$who" -- run --env GIT_AUTHOR_NAME=Env\ User --env GIT_AUTHOR_EMAIL=env@example.invalid \
		--env GIT_COMMITTER_NAME=Env\ User --env GIT_COMMITTER_EMAIL=env@example.invalid -- \
		sh -c "$GIT_IN init -q && git commit -q --allow-empty -m e && git log --format=%an -1"
	is "$RC/$OUT" "0/Env User" "$who: --env GIT_AUTHOR_NAME… sets the identity of a commit inside"
	rm -f "$HOMEDIR/.gitconfig"
done
aj_skip_missing_whos "git in the jail"

done_testing
