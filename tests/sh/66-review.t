#!/usr/bin/env bash
# --fs review (issue 30, doc/design.md §3c): the workspace is an overlay whose upper layer, in
# the state directory, takes every write; the real workspace changes only with `apply`.
# An agent-like script (edits, creates, deletes, renames, chmods, a symlink, a commit) leaves
# the workspace as it was; diff shows exactly that (and patch(1) reproduces it); apply of a
# subset, a conflict, protected paths (only when named; git's hooks never), discard leaving
# nothing, a checkpoint and its rollback, resume growing the change set; hostile upper-layer
# content (a symlink out, a whiteout behind a workspace symlink, a device node, a setuid file,
# a FIFO, a name with an escape sequence, a redirect attribute) refused or neutralised; the
# protected paths stay read-only over the overlay; refusals with the reason (exit 125) where
# the overlay cannot be mounted and in the Landlock backend; doctor's check; 10,000 changed
# files diffed and applied in a time compared with diff(1) and cp(1) on the same files.
. "$(dirname "$0")/lib.sh"
aj_setup

GIT_ID=(-c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main)

# the newest session's id (as WHO)
last_id() {
	aj_run "$AJ_WHO" -- sessions --json
	py 'd[0]["id"]'
}

# a digest of the workspace as the host sees it: names, kinds, modes, sizes and contents
ws_digest() {
	(cd "$WS" && find . -path ./.git/index -prune -o -printf '%p %y %m %s %l\n' | LC_ALL=C sort &&
		find . -type f ! -path ./.git/index -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
		sha256sum | cut -c1-64
}

review_dirs() { find "$STATE/review" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }

# A repository with a few files, committed.
seed_ws() {
	aj_fresh_ws "$AJ_WHO"
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	printf '%s\n' 1 2 3 4 5 6 7 8 9 10 >"$WS/edit.txt"
	printf 'keep\n' >"$WS/keep.txt"
	printf 'gone\n' >"$WS/gone.txt"
	mkdir -p "$WS/dir/old"
	printf 'a\n' >"$WS/dir/old/a"
	printf '#!/bin/sh\necho hi\n' >"$WS/mode.sh"
	printf 'bin\0ary\n' >"$WS/bin.dat"
	printf 'probe\n' >"$WS/.gitignore"
	aj_chown "$WS"
	aj_host git -C "$WS" add -A
	aj_host git -C "$WS" "${GIT_ID[@]}" commit -qm seed
	aj_host git -C "$WS" branch side
}

# What an agent does: every kind of change, and a commit.
AGENT='set -e
sed -i "s/^5$/five/" edit.txt
printf "new\n" > new.txt
rm gone.txt
mv dir/old dir/new
chmod +x mode.sh
ln -s keep.txt link
printf "bin\001ary\n" > bin.dat
git -c user.name=agent -c user.email=agent@agentjail.invalid add edit.txt new.txt gone.txt dir mode.sh link bin.dat
git -c user.name=agent -c user.email=agent@agentjail.invalid commit -qm agent
git branch -D side >/dev/null
o=$(git rev-parse HEAD~1:keep.txt)
rm -f ".git/objects/$(echo "$o" | cut -c1-2)/$(echo "$o" | cut -c3-)"
printf "direnv\n" > .envrc
if printf x >> .git/hooks/pre-commit 2>/dev/null; then echo HOOK-WRITTEN; fi
if mv .git .git-away 2>/dev/null; then echo GIT-MOVED; fi
echo agent-done'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	seed_ws
	# does review work here at all? (the kernel, the state directory's file system)
	aj_run "$who" -- run --fs review -- true
	if [ "$RC" != 0 ]; then
		skip "$who: --fs review" "the review overlay cannot be mounted here: ${ERR//$'\n'/ }"
		continue
	fi
	[ "$(review_dirs)" = 0 ]
	ok $? "$who: a run that wrote nothing leaves nothing in the state dir"

	# --- 1. the agent's changes stay in the change set ----------------------------------------
	before=$(ws_digest)
	head_before=$(aj_host git -C "$WS" rev-parse HEAD)
	aj_run "$who" -- run --fs review -- sh -c "$AGENT"
	rc_is 0 "$who: the agent-like script ran in review mode"
	like "$OUT" "agent-done" "$who: … to its end"
	unlike "$OUT" "HOOK-WRITTEN" "$who: .git/hooks stays read-only over the overlay"
	unlike "$OUT" "GIT-MOVED" "$who: .git cannot be renamed away (a mount point over the overlay)"
	like "$ERR" "review: the change set holds [0-9]+ entries" "$who: the run says the change set's size"
	is "$(ws_digest)" "$before" "$who: the real workspace is byte for byte unchanged"
	is "$(aj_host git -C "$WS" rev-parse HEAD)" "$head_before" "$who: … and its git history too"
	id=$(last_id)

	# --- 2. diff shows exactly that -------------------------------------------------------------
	aj_run "$who" -- diff "$id" --stat
	rc_is 0 "$who: diff --stat"
	paths=$(printf '%s\n' "$OUT" | sed -n 's/^ \([^ ]*\) *|.*/\1/p' | grep -v '^\.git/' | LC_ALL=C sort | tr '\n' ' ')
	is "$paths" ".envrc bin.dat dir/new dir/new/a dir/old edit.txt gone.txt link mode.sh new.txt " \
		"$who: … lists exactly the changed paths (and git's own under .git)"
	like "$OUT" "\\.git/objects/" "$who: … the commit's objects are in the change set"
	like "$OUT" "\\.envrc *\\| 1 \\+ \\(protected\\)" "$who: … .envrc flagged protected"
	like "$OUT" "mode\\.sh *\\| mode 0644 -> 0755" "$who: … the chmod as a mode change"
	like "$OUT" "bin\\.dat *\\| Bin" "$who: … the binary as Bin"
	aj_run "$who" -- diff "$id"
	like "$OUT" $'--- a/edit.txt\n\\+\\+\\+ b/edit.txt\n@@ -2,7 \\+2,7 @@\n 2\n 3\n 4\n-5\n\\+five' \
		"$who: diff: a unified diff of the edit"
	like "$OUT" "# symlink link -> keep.txt" "$who: … the symlink on one line"
	like "$OUT" "Binary files a/bin.dat and b/bin.dat differ" "$who: … the binary on one line"
	like "$OUT" "# never applied|# protected: applied only when named .*\\.envrc" "$who: … the protected flag"
	# patch(1) reads it: the text changes (diff PATH…) reproduced on a copy of the workspace
	if command -v patch >/dev/null; then
		cp=$AJ_TMP/$who-patched
		rm -rf "$cp" && cp -a "$WS" "$cp" && rm -rf "$cp/.git"
		aj_run "$who" -- diff "$id" edit.txt new.txt gone.txt dir
		printf '%s\n' "$OUT" >"$AJ_TMP/p.diff"
		(cd "$cp" && patch -p1 -s -E <"$AJ_TMP/p.diff" >/dev/null 2>&1)
		ok $? "$who: patch -p1 applies the diff to a copy of the workspace"
		is "$(cat "$cp/edit.txt" | tr '\n' ' ')" "1 2 3 4 five 6 7 8 9 10 " "$who: … edit.txt as the jail left it"
		[ ! -e "$cp/gone.txt" ] && [ "$(cat "$cp/dir/new/a")" = a ] && [ "$(cat "$cp/new.txt")" = new ]
		ok $? "$who: … the deletion, the rename (delete + create) and the new file"
	else
		skip "$who: patch -p1 applies the diff" "patch is not installed"
	fi
	aj_run "$who" -- diff "$id" --json
	is "$(py '[c["change"] for c in d["changes"] if c["path"] == "gone.txt"][0]')" "deleted" "$who: diff --json: the deletion"
	is "$(py '[c["protected"] for c in d["changes"] if c["path"] == ".envrc"][0]')" "named" "$who: … .envrc protected"
	is "$(py 'sorted({c["protected"] for c in d["changes"] if c["path"].startswith(".git/objects/") and c["change"] != "deleted"})')" "[None]" \
		"$who: … git's new objects are free to apply"
	is "$(py 'sorted({(c["protected"], c["protected_root"]) for c in d["changes"] if c["path"].startswith(".git/") and c["change"] == "deleted"})')" "[('named', '.git')]" \
		"$who: … what it deleted under .git (a ref, an object) only when named"
	aj_run "$who" -- show "$id"
	like "$OUT" "review +[0-9]+ entries pending \\([0-9]+ bytes\\)" "$who: show: the pending change set's size"

	# --- 3. apply of a subset -------------------------------------------------------------------
	aj_run "$who" -C "$WS/dir" -- apply "$id" ../edit.txt
	rc_is 0 "$who: apply ID PATH (relative to the directory in the workspace)"
	is "$(sed -n 5p "$WS/edit.txt")" "five" "$who: … edit.txt applied"
	[ -e "$WS/gone.txt" ] && [ ! -e "$WS/new.txt" ] && [ -d "$WS/dir/old" ]
	ok $? "$who: … nothing else"
	aj_run "$who" -- diff "$id" --stat
	unlike "$OUT" " edit\\.txt " "$who: … and edit.txt left the change set"

	# --- 4. a conflict ------------------------------------------------------------------------
	printf '#!/bin/sh\necho changed on the host\n' >"$WS/mode.sh"
	aj_run "$who" -- apply "$id" mode.sh
	rc_is 1 "$who: apply of a path changed in the workspace since the run: exit 1"
	like "$ERR" "held back: mode\\.sh: conflict" "$who: … reported as a conflict"
	like "$(cat "$WS/mode.sh")" "changed on the host" "$who: … the workspace's copy kept"
	aj_run "$who" -- apply "$id" --force mode.sh
	rc_is 0 "$who: --force applies it"
	[ -x "$WS/mode.sh" ]
	ok $? "$who: … its mode now the jail's"

	# --- 5. protected paths, and the rest -------------------------------------------------------
	# a hook planted in the change set (the jail cannot write one: above) is never applied
	up=$STATE/review/$id/upper
	aj_host mkdir -p "$up/.git/hooks"
	aj_host sh -c "printf '#!/bin/sh\ntouch $EXTRA/hook-ran\n' > '$up/.git/hooks/post-checkout'; chmod 755 '$up/.git/hooks/post-checkout'"
	# …and a config that makes git run a command (core.fsmonitor) on the host's next status
	aj_host sh -c "cp '$WS/.git/config' '$up/.git/config'; printf '[core]\n\tfsmonitor = touch $EXTRA/fsmon-ran; false\n' >> '$up/.git/config'"
	aj_run "$who" -- apply "$id"
	rc_is 1 "$who: apply of everything: exit 1 (some held back)"
	like "$ERR" "held back: \\.envrc: protected" "$who: … .envrc held back (protected)"
	like "$ERR" "held back: \\.git/hooks/post-checkout: never applied" "$who: … the hook never applied"
	like "$ERR" "held back: \\.git/config: never applied" "$who: … nor git's config"
	[ ! -e "$WS/.envrc" ] && [ ! -e "$WS/.git/hooks/post-checkout" ]
	ok $? "$who: … neither written"
	[ ! -e "$WS/gone.txt" ] && [ -e "$WS/new.txt" ] && [ -d "$WS/dir/new" ] && [ ! -e "$WS/dir/old" ] &&
		[ "$(readlink "$WS/link")" = keep.txt ] && [ "$(od -An -c "$WS/bin.dat" | tr -d ' \n')" = 'bin001ary\n' ]
	ok $? "$who: … everything else applied: the deletion, the rename, the symlink, the binary"
	like "$ERR" "held back: \\.git/refs/heads/side: a deletion in git.s own directory \\(history, refs\\): applied only when named: agentjail apply ${id:0:8} \\.git/refs/heads/side" \
		"$who: … a branch the jail deleted is held back, naming how to apply it"
	like "$ERR" "held back: \\.git/objects/[0-9a-f]{2}/[0-9a-f]+: a deletion in git.s own directory" \
		"$who: … as is an object it deleted"
	aj_host git -C "$WS" rev-parse -q --verify refs/heads/side >/dev/null
	ok $? "$who: … so the branch is still there"
	is "$(aj_host git -C "$WS" log -1 --format=%s)" "agent" "$who: … the jail's commit is the host's HEAD"
	aj_host git -C "$WS" fsck --no-progress >/dev/null 2>&1
	ok $? "$who: … and the repository is whole (git fsck)"
	is "$(aj_host git -C "$WS" status --porcelain | tr '\n' ' ')" "" "$who: … git status clean (its index applied too)"
	aj_run "$who" -- apply "$id" .git/hooks/post-checkout
	rc_is 1 "$who: naming the hook: still never applied"
	[ ! -e "$WS/.git/hooks/post-checkout" ]
	ok $? "$who: … not written"
	aj_run "$who" -- apply "$id" .git/refs/heads/side
	rc_is 0 "$who: naming the branch's ref applies its deletion"
	! aj_host git -C "$WS" rev-parse -q --verify refs/heads/side >/dev/null
	ok $? "$who: … the branch is gone"
	aj_run "$who" -- apply "$id" .envrc
	rc_is 0 "$who: naming .envrc applies it"
	is "$(cat "$WS/.envrc" 2>/dev/null)" "direnv" "$who: … written"
	aj_host git -C "$WS" checkout -q -- . 2>/dev/null
	[ ! -e "$EXTRA/hook-ran" ] && [ ! -e "$EXTRA/fsmon-ran" ] && ! grep -q fsmonitor "$WS/.git/config"
	ok $? "$who: the planted hook and fsmonitor never ran on the host"

	# --- 6. discard leaves nothing ------------------------------------------------------------
	n=$(review_dirs)
	aj_run "$who" -- run --fs review -- sh -c 'echo x > thrown.txt'
	id2=$(last_id)
	[ -d "$STATE/review/$id2" ]
	ok $? "$who: a new session has its change set"
	aj_run "$who" -- discard "$id2"
	rc_is 0 "$who: discard"
	[ ! -e "$STATE/review/$id2" ] && [ "$(review_dirs)" = "$n" ] && [ ! -e "$WS/thrown.txt" ]
	ok $? "$who: … leaves nothing of it in the state dir, nothing in the workspace"

	# --- 7. resume grows the change set; checkpoint and rollback ------------------------------
	aj_run "$who" -- run --fs review -- sh -c 'echo run >> log.txt; wc -l < log.txt'
	id3=$(last_id)
	is "$OUT" "1" "$who: first run: one line"
	aj_run "$who" -- checkpoint "$id3" one
	rc_is 0 "$who: checkpoint"
	like "$OUT" "checkpoint one: [0-9]+ entr(y|ies), [0-9]+ bytes, as (reflinks|hard links|copies) in [0-9]+ ms" \
		"$who: … says how it was copied and its cost"
	aj_run "$who" -- resume "$id3"
	is "$OUT" "2" "$who: resume continues on the same change set (two lines)"
	[ ! -e "$WS/log.txt" ]
	ok $? "$who: … still not in the workspace"
	aj_run "$who" -- checkpoint "$id3" --list
	is "$OUT" "one" "$who: checkpoint --list"
	aj_run "$who" -- rollback "$id3" one
	rc_is 0 "$who: rollback"
	aj_run "$who" -- resume "$id3"
	is "$OUT" "2" "$who: … back at one line: the next run adds the second again"
	aj_run "$who" -- rollback "$id3" nope
	rc_is 1 "$who: rollback to a checkpoint that does not exist fails"
	# while it runs: a checkpoint copies (or reflinks), apply and discard wait for its end
	aj_cmd "$who" -- run --fs review -- sh -c 'echo x > live.txt; sleep 4'
	"${AJ_CMD[@]}" </dev/null >/dev/null 2>&1 &
	bg=$!
	for i in $(seq 1 200); do
		live=$(ls -d "$STATE"/review/*/upper/live.txt 2>/dev/null | head -1)
		[ -n "$live" ] && break
		sleep 0.05
	done
	idl=$(basename "$(dirname "$(dirname "$live")")")
	aj_run "$who" -- checkpoint "$idl" live
	like "$OUT" "checkpoint live: .* as (reflinks|copies) in" "$who: a checkpoint while it runs: reflinks or copies, never hard links"
	aj_run "$who" -- apply "$idl"
	rc_is 2 "$who: apply while it runs: refused"
	like "$ERR" "the session is running" "$who: … saying why"
	wait "$bg"
	aj_run "$who" -- discard "$idl"
	aj_run "$who" -- discard "$id3"

	# --- 8. hostile content in the upper layer ------------------------------------------------
	seed_ws
	mkdir -p "$EXTRA/outside"
	printf 'victim\n' >"$EXTRA/outside/victim"
	ln -s "$EXTRA/outside" "$WS/out"
	aj_chown "$EXTRA/outside" "$WS/out"
	# links the jail itself can make, inside the workspace but into what git runs or a
	# protected path: a host tool that writes the link's name would write the hook
	aj_run "$who" -- run --fs review -- sh -c 'echo seed > seed.txt
		ln -s .git/hooks/post-checkout lockfile; ln -s ../.envrc dir/envlink
		ln -s .git gitdir; ln -s gitdir/hooks/pre-commit chain'
	id4=$(last_id)
	up=$STATE/review/$id4/upper
	aj_host ln -s /etc/passwd "$up/evil-link"
	aj_host mkdir "$up/out"
	aj_host mknod "$up/out/victim" c 0 0
	aj_host sh -c "echo planted > '$up/out/planted'"
	aj_host sh -c "echo s > '$up/suid'; chmod 4755 '$up/suid'"
	aj_host sh -c "echo g > '$up/sgid'; chmod 2755 '$up/sgid'; mkdir '$up/sgiddir'; chmod 3777 '$up/sgiddir'"
	aj_host mkfifo "$up/fifo"
	aj_host ln "$up/seed.txt" "$up/hardlink.txt"
	aj_host sh -c "echo esc > \"$up/\$(printf 'e\\033[2Jx')\""
	# "bidi" + RIGHT-TO-LEFT OVERRIDE + "txt.sh": an editor shows it as bidihs.txt
	aj_host sh -c "echo 'echo pwned' > \"$up/\$(printf 'bidi\\342\\200\\256txt.sh')\""
	aj_host python3 -c "import os; open('$up/redir','w').write('r'); os.setxattr('$up/redir', 'user.overlay.redirect', b'/etc')" 2>/dev/null
	have_xattr=$?
	if aj_is_root && [ "$who" = root ]; then mknod "$up/dev" c 1 3; fi
	aj_run "$who" -- diff "$id4"
	like "$OUT" "not applied: a symlink leading out of the workspace \\(to /etc/passwd\\): evil-link" \
		"$who: a symlink out of the workspace: refused"
	like "$OUT" "not applied: a FIFO: fifo" "$who: a FIFO: refused"
	like "$OUT" "not applied: a name with a control character" "$who: a name with an escape sequence: refused"
	[[ $OUT != *$'\033'* ]]
	ok $? "$who: … and no escape byte reaches the output"
	like "$OUT" "not applied: a name with a mark that reorders text on a terminal \\(bidi\\?txt\\.sh\\)" \
		"$who: a name with a right-to-left override: refused"
	if [ "$have_xattr" = 0 ]; then
		like "$OUT" "not applied: an overlay attribute agentjail never mounts with \\(user.overlay.redirect\\): redir" \
			"$who: a redirect attribute: refused"
	else
		skip "$who: a redirect attribute: refused" "user extended attributes cannot be set here"
	fi
	if [ "$who" = root ]; then
		like "$OUT" "not applied: a device node: dev" "$who: a device node: refused"
	else
		skip "$who: a device node: refused" "only root can make a device node to plant"
	fi
	like "$OUT" "not applied: a symlink into what git runs \\(to \\.git/hooks/post-checkout\\): lockfile" \
		"$who: a symlink into .git/hooks: refused"
	like "$OUT" "not applied: a symlink into what git runs \\(to gitdir/hooks/pre-commit\\): chain" \
		"$who: … and one that gets there through another link"
	aj_run "$who" -- apply "$id4"
	like "$ERR" "held back: out: conflict" "$who: a directory over the workspace's symlink: a conflict"
	like "$ERR" "held back: dir/envlink: protected" "$who: a symlink to .envrc: protected (applied only when named)"
	[ -L "$WS/out" ] && [ -e "$EXTRA/outside/victim" ] && [ ! -e "$EXTRA/outside/planted" ]
	ok $? "$who: … the symlink kept, nothing behind it removed or written"
	aj_run "$who" -- apply "$id4" --force
	[ ! -e "$WS/evil-link" ] && [ ! -e "$WS/fifo" ] && [ ! -e "$WS/dev" ] && [ ! -e "$WS/redir" ] &&
		[ ! -L "$WS/lockfile" ] && [ ! -L "$WS/dir/envlink" ] && [ ! -L "$WS/chain" ]
	ok $? "$who: apply --force writes none of the refused entries, nor the protected link"
	[ -e "$EXTRA/outside/victim" ] && [ ! -e "$EXTRA/outside/planted" ] && [ ! -L "$WS/out" ] &&
		[ -d "$WS/out" ] && [ "$(cat "$WS/out/planted")" = planted ]
	ok $? "$who: … forced, the symlink is replaced by a directory, never followed: nothing outside removed or written"
	is "$(stat -c %a "$WS/suid" 2>/dev/null)" "755" "$who: a setuid file: applied without the bit"
	is "$(stat -c %a "$WS/sgid" 2>/dev/null)" "755" "$who: a setgid file: applied without the bit"
	is "$(stat -c %a "$WS/sgiddir" 2>/dev/null)" "755" "$who: a setgid, sticky, world-writable directory: applied without those bits"
	[ "$(cat "$WS/hardlink.txt" 2>/dev/null)" = seed ] &&
		[ "$(stat -c %i "$WS/hardlink.txt")" != "$(stat -c %i "$WS/seed.txt")" ] &&
		[ "$(stat -c %h "$WS/hardlink.txt")" = 1 ]
	ok $? "$who: a hard link in the change set: applied as a copy of its bytes, never a link"
	find "$WS" -name 'e*x' -newer "$WS/edit.txt" 2>/dev/null | grep -q .
	ok $((! $?)) "$who: the name with the escape sequence: not written"
	[ -z "$(find "$WS" -name 'bidi*' 2>/dev/null)" ]
	ok $? "$who: the name with the right-to-left override: not written"
	aj_run "$who" -- discard "$id4"
	rm -rf "$WS/out"

	# --- 8b. a file swapped between review and apply ------------------------------------------
	# the agent shows a benign file while the user reads the diff, then rewrites it in place
	# with the same size and its old mtime: apply --expect (the digest the diff printed)
	# applies only what was shown
	aj_cmd "$who" -- run --fs review -- sh -c 'printf "benign\n" > swap.txt; cp -p swap.txt /tmp/ref
		sleep 4; printf "EVIL!!\n" > swap.txt; touch -r /tmp/ref swap.txt'
	"${AJ_CMD[@]}" </dev/null >/dev/null 2>&1 &
	bg=$!
	swap=
	for i in $(seq 1 200); do
		swap=$(ls "$STATE"/review/*/upper/swap.txt 2>/dev/null | head -1)
		[ -n "$swap" ] && [ -s "$swap" ] && break
		sleep 0.05
	done
	ids=$(basename "$(dirname "$(dirname "$swap")")")
	aj_run "$who" -- diff "$ids"
	like "$OUT" $'\\+benign' "$who: diff while the agent runs: the benign file"
	like "$OUT" "# the session is running: its change set may still change" "$who: … and a warning that it may still change"
	dg=$(printf '%s\n' "$OUT" | sed -n 's/.*--expect \([0-9a-f]\{16\}\).*/\1/p' | head -1)
	like "$dg" '^[0-9a-f]{16}$' "$who: … and the digest of what it shows"
	wait "$bg"
	is "$(cat "$swap")|$(stat -c %s "$swap")" "EVIL!!|7" "$who: the agent swapped the file, same size, old mtime"
	aj_run "$who" -- apply "$ids" --expect "$dg"
	rc_is 1 "$who: apply --expect the reviewed digest after the swap: refused"
	like "$ERR" "the change set is not the one the diff showed" "$who: … saying it changed since the diff"
	[ ! -e "$WS/swap.txt" ]
	ok $? "$who: … nothing written"
	aj_run "$who" -- diff "$ids" --json
	dg2=$(py 'd["digest"]')
	[ -n "$dg2" ] && [ "$dg2" != "$dg" ]
	ok $? "$who: diff --json: a new digest for the new content"
	aj_run "$who" -- apply "$ids" --expect "$dg2"
	rc_is 0 "$who: apply --expect the digest of the change set as it is: applied"
	is "$(cat "$WS/swap.txt" 2>/dev/null)" "EVIL!!" "$who: … what that diff showed"
	aj_run "$who" -- apply "$ids" --expect
	rc_is 2 "$who: --expect without a digest: a usage error"
	rm -f "$WS/swap.txt"
	aj_run "$who" -- discard "$ids"

	# --- 8c. the workspace changed while apply runs (after its walk, before the rename) -------
	printf 'host\n' >"$WS/race.txt"
	aj_chown "$WS/race.txt"
	aj_run "$who" -- run --fs review -- sh -c 'echo jail > race.txt'
	idr=$(last_id)
	pause=$HOMEDIR/apply-pause
	rm -f "$pause"
	aj_cmd "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_APPLY_PAUSE="$pause" -- apply "$idr"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/race.out" 2>"$AJ_TMP/race.err" &
	bg=$!
	for i in $(seq 1 200); do [ -e "$pause" ] && break; sleep 0.05; done
	printf 'host edit\n' >"$WS/race.txt"
	rm -f "$pause"
	wait "$bg"
	rc=$?
	is "$rc" 1 "$who: a file edited in the workspace while apply ran: held back (exit 1)"
	like "$(cat "$AJ_TMP/race.err")" "held back: race\\.txt: conflict: the workspace changed there while apply ran" \
		"$who: … as a conflict"
	is "$(cat "$WS/race.txt")" "host edit" "$who: … the host's edit kept"
	aj_run "$who" -- discard "$idr"
	rm -f "$WS/race.txt"

	# --- 9. refusals ----------------------------------------------------------------------------
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_OVL_FAIL=mount -- run --fs review -- sh -c 'echo RAN'
	rc_is 125 "$who: the overlay cannot be mounted: exit 125"
	like "$ERR" "overlay could not be mounted: mount overlayfs .* failed" "$who: … with the step that failed"
	like "$ERR" "nothing was run" "$who: … and says nothing ran"
	unlike "$OUT" "RAN" "$who: … the command did not run (no fallback to workspace-write)"
	aj_run "$who" -- run --fs review --backend landlock -- sh -c 'echo RAN'
	rc_is 2 "$who: --backend landlock: refused (exit 2)"
	like "$ERR" "landlock backend cannot run --fs review: its overlay needs a mount namespace" "$who: … with the reason"
	unlike "$OUT" "RAN" "$who: … nothing ran"
	aj_run "$who" -e AGENTJAIL_STATE_DIR="$WS/.state" -- run --fs review -- true
	rc_is 2 "$who: a state directory inside the workspace: refused (exit 2)"
	like "$ERR" "overlayfs cannot keep a layer inside the tree it covers" "$who: … with the reason"
	rm -rf "$WS/.state"
	aj_run "$who" -- run --fs workspace-write -- true
	aj_run "$who" -- diff --last
	rc_is 2 "$who: diff of a session that did not run with --fs review: exit 2"

	# --- 10. doctor, verify, --net allow ------------------------------------------------------
	aj_run "$who" -- doctor --json
	is "$(py '[c["status"] for c in d["checks"] if c["id"] == "review"][0]')" "ok" "$who: doctor: review works here"
	n=$(review_dirs)
	aj_run "$who" -- verify --fs review --json
	rc_is 0 "$who: verify --fs review: the battery holds over the overlay"
	is "$(py '[p["id"] for p in d["probes"] if p["result"] == "FAIL"]')" "[]" "$who: … no probe fails"
	is "$(review_dirs)" "$n" "$who: … and its change set is gone with it"
	aj_run "$who" -- run --fs review --net allow --allow-domain example.com -- sh -c 'echo n > net.txt'
	rc_is 0 "$who: --fs review with --net allow (one holder, both namespaces)"
	[ ! -e "$WS/net.txt" ]
	ok $? "$who: … its write in the change set only"
	aj_run "$who" -- discard --last

	# --- 11. 10,000 changed files: diff and apply, against diff -ru and cp -a on the same ------
	# (the machine is shared: syncfs waits for everyone's dirty pages; a measure over its limit
	# is taken once more, from a fresh change set, before it counts)
	tenk() {
		aj_fresh_ws "$who"
		(cd "$WS" && for i in $(seq 0 99); do
			mkdir "d$i" && for j in $(seq 0 99); do echo "line $i $j" >"d$i/f$j.txt"; done
		done)
		aj_chown "$WS"
		aj_run "$who" -- run --quiet --fs review -- sh -c 'for f in d*/f*; do echo changed >> "$f"; done'
		id5=$(last_id)
		up=$STATE/review/$id5/upper
		t() { date +%s%N; }
		t0=$(t); diff -ru "$WS" "$up" >/dev/null; t1=$(t)
		aj_run "$who" -- diff "$id5"
		t2=$(t)
		lines=$(printf '%s\n' "$OUT" | grep -vc '^# ')
		t3=$(t); cp -a "$up" "$AJ_TMP/cp1" && sync; t4=$(t)
		aj_run "$who" -- apply "$id5"
		t5=$(t); rm -rf "$AJ_TMP/cp1"; cp -a "$WS" "$AJ_TMP/cp2" && sync; t6=$(t)
		rm -rf "$AJ_TMP/cp2"
		ms() { echo $((($2 - $1) / 1000000)); }
		d_ru=$(ms "$t0" "$t1") d_ours=$(ms "$t1" "$t2") cp=$(ms "$t3" "$t4") cp2=$(ms "$t5" "$t6")
		a_ours=$(ms "$t4" "$t5")
		[ "$cp2" -gt "$cp" ] && cp=$cp2
		note "10,000 files: diff ${d_ours} ms (diff -ru ${d_ru} ms), apply ${a_ours} ms (cp -a + sync ${cp} ms)"
		dlim=$((4 * d_ru)); [ "$dlim" -lt 2000 ] && dlim=2000
		alim=$((8 * cp)); [ "$alim" -lt 5000 ] && alim=5000
		grep -q changed "$WS/d99/f99.txt" && grep -q changed "$WS/d0/f0.txt"
		written=$?
	}
	if [ "$who" = "${AJ_WHOS[0]}" ]; then
		for attempt in 1 2; do
			tenk
			[ "$d_ours" -le "$dlim" ] && [ "$a_ours" -le "$alim" ] && break
			[ "$attempt" = 1 ] && note "over the limit (diff ${dlim} ms, apply ${alim} ms): measured once more"
		done
		is "$lines" 50000 "$who: diff of 10,000 changed files: every hunk"
		[ "$d_ours" -le "$dlim" ]
		ok $? "$who: … in under 2 s, or 4 times diff -ru's time on this loaded machine (${d_ours} ms, limit ${dlim})"
		[ "$written" = 0 ]
		ok $? "$who: apply of 10,000 changed files: all written"
		[ "$a_ours" -le "$alim" ]
		ok $? "$who: … in under 5 s, or 8 times cp -a + sync's time on this loaded machine (${a_ours} ms, limit ${alim})"
	fi
done
aj_skip_missing_whos "--fs review"

# user namespaces refused: review refuses with the reason, never a silent workspace-write
if aj_is_root; then
	aj_use root
	seed_ws
	aj_cmd root -- run --fs review -- sh -c 'echo RAN > ran.txt; echo RAN'
	ns_run "${AJ_CMD[@]}"
	is "$RC" 125 "root, user namespaces disabled: --fs review exits 125"
	like "$ERR" "overlay could not be mounted|user namespace" "… saying why"
	[ ! -e "$WS/ran.txt" ] && [[ $OUT != *RAN* ]]
	ok $? "… and nothing ran"
	# backend auto would move to the Landlock backend there: review refuses first, as a jail
	# that cannot be built (125), never a run without its overlay
	aj_cmd root -- run --backend auto --fs review -- sh -c 'echo RAN > ran.txt; echo RAN'
	ns_run "${AJ_CMD[@]}"
	is "$RC" 125 "root, user namespaces disabled, --backend auto: --fs review exits 125"
	like "$ERR" "--fs review needs the bwrap jail" "… saying review needs the bwrap jail"
	[ ! -e "$WS/ran.txt" ] && [[ $OUT != *RAN* ]]
	ok $? "… and nothing ran"
fi

done_testing
