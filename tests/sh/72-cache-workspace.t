#!/bin/bash
# The private package caches are each workspace's own (issue 24 item 4): what project A's jail
# plants in its npm, pip or cargo cache (npx runs what it finds in ~/.npm/_npx; cargo builds
# the sources in ~/.cargo/registry/src) is not what project B's jail sees. The key is the
# canonical workspace path, hashed: a symlink to A is A. `cache = "shared"` in the user's
# configuration shares them (never from a project's .agentjail.toml), the session keeps the
# choice for resume, and `agentjail cache` lists each workspace's and removes one or all.
# npm (the system's) and python3 on PATH ask for the npm and pip caches.
. "$(dirname "$0")/lib.sh"
aj_setup

command -v npm >/dev/null 2>&1 || { skip "per-workspace caches" "npm is not installed (its cache is the one planted)"; done_testing; }

plant='mkdir -p ~/.npm/_npx/0123/node_modules/.bin ~/.cache/pip/wheels &&
	echo "$1" >~/.npm/_npx/0123/node_modules/.bin/tool && echo "$1" >~/.cache/pip/wheels/w &&
	echo planted'
look='cat ~/.npm/_npx/0123/node_modules/.bin/tool ~/.cache/pip/wheels/w 2>&1'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	A=$AJ_TMP/$who/proj-a
	B=$AJ_TMP/$who/proj-b
	mkdir -m 0755 "$A" "$B"
	ln -s "$A" "$AJ_TMP/$who/link-a"
	aj_chown "$A" "$B" "$AJ_TMP/$who/link-a"

	aj_run "$who" -C "$A" -- run -- sh -c "$plant" sh "from A"
	is "$OUT" planted "$who: project A's jail writes its npm and pip caches"
	aj_run "$who" -C "$B" -- run -- sh -c "$look"
	unlike "$OUT" 'from A' "$who: project B's jail does not see what A's jail planted in the caches"
	aj_run "$who" -C "$A" -- run -- sh -c "$look"
	is "$OUT" $'from A\nfrom A' "$who: A's next jail finds its own caches again"
	aj_run "$who" -C "$AJ_TMP/$who/link-a" -- run -- sh -c "$look"
	is "$OUT" $'from A\nfrom A' "$who: a symlink to A is A (the key is the canonical path)"
	aj_run "$who" -C "$B" -- run --dry-run -- true
	key_b=$(printf '%s' "$B" | sha256sum | cut -c1-32)
	like "$OUT" "--bind-fd [0-9]+ $HOMEDIR/\\.npm +# fd [0-9]+ = $STATE/cache/ws/$key_b/npm: private package cache \\(npm\\), this workspace's own" \
		"$who: --dry-run: B's npm cache is <state>/cache/ws/<sha256 of B's path, 32 hex>/npm"

	# agentjail cache size: one line per workspace
	aj_run "$who" -- cache size
	rc_is 0 "$who: cache size"
	like "$OUT" "MiB +[0-9-]{10} +$A"$'\n' "$who: cache size lists A's caches with its size and last use"
	like "$OUT" "MiB +[0-9-]{10} +$B"$'(\n|$)' "$who: ... and B's"

	# the project's file may not choose the shared caches, trusted or not
	printf 'cache = "shared"\n' >"$B/.agentjail.toml"
	aj_chown "$B/.agentjail.toml"
	aj_run "$who" -C "$B" -- run -- true
	rc_is 2 "$who: cache = \"shared\" in a project's .agentjail.toml is refused"
	like "$ERR" '`cache` may never be set in a project' "$who: ... saying so"
	rm -f "$B/.agentjail.toml"

	# the user's configuration may: A's and B's jails then share one set
	mkdir -p "$HOMEDIR/.config/agentjail"
	printf 'cache = "shared"\n' >"$HOMEDIR/.config/agentjail/config.toml"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -C "$A" -- run -- sh -c "$plant" sh "shared from A"
	aj_run "$who" -C "$B" -- run -- sh -c "$look"
	is "$OUT" $'shared from A\nshared from A' "$who: cache = \"shared\" in the user's config: B sees A's"
	aj_run "$who" -C "$B" -- run --dry-run -- true
	like "$OUT" '"cache":"shared"' "$who: the session's policy records the shared caches (for resume)"
	like "$OUT" "fd [0-9]+ = $STATE/cache/shared/npm: private package cache \\(npm\\), shared by every workspace's jails" \
		"$who: --dry-run names the shared cache"
	aj_run "$who" -- cache size
	like "$OUT" 'every workspace \(cache = "shared"\)' "$who: cache size lists the shared caches"
	rm -rf "$HOMEDIR/.config"
	# resume keeps the session's choice, whatever the configuration says now
	aj_run "$who" -C "$B" -- resume --last --quiet
	aj_run "$who" -C "$B" -- run -- true # (a new session, per workspace again)
	aj_run "$who" -C "$B" -- sessions --json
	sid=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)[1]["id"])' 2>/dev/null)
	aj_run "$who" -C "$B" -- resume "$sid" --dry-run --quiet
	like "$OUT" "fd [0-9]+ = $STATE/cache/shared/npm" "$who: resume of a shared-cache session uses the shared caches"

	# clean: one workspace, then all; an older agentjail's shared caches are listed and go too
	mkdir -p "$STATE/cache/npm/_cacache" && echo old >"$STATE/cache/npm/_cacache/x"
	aj_chown "$STATE/cache/npm"
	aj_run "$who" -- cache size
	like "$OUT" 'left by an older agentjail.*\(npm\)' "$who: cache size names an older agentjail's shared caches"
	aj_run "$who" -C "$B" -- cache clean
	like "$OUT" "removed \\($B\\)" "$who: cache clean removes the current directory's caches"
	[ ! -e "$STATE/cache/ws/$key_b" ] && [ -n "$(ls -A "$STATE/cache/ws")" ]
	ok $? "$who: ... B's directory is gone, A's is still there"
	aj_run "$who" -- cache clean --workspace "$AJ_TMP/$who/link-a"
	like "$OUT" "removed \\($A\\)" "$who: cache clean --workspace LINK removes the workspace it points to"
	aj_run "$who" -- cache clean --all
	rc_is 0 "$who: cache clean --all"
	is "$(find "$STATE/cache" -type f | wc -l)" 0 "$who: ... no file is left in <state>/cache"
	[ ! -e "$STATE/cache/npm" ]
	ok $? "$who: ... an older agentjail's caches are gone"
	aj_run "$who" -- cache clean --all --workspace x
	rc_is 2 "$who: cache clean --all --workspace is a usage error"
done
aj_skip_missing_whos "per-workspace caches"
done_testing
