#!/usr/bin/env bash
# Directories the jail's view has only because something is mounted below them (issue 26): a
# --ro, --rw, workspace or command directory whose parent the view does not give (/srv, /mnt),
# and the directories on the way to binds inside the private $HOME. bwrap makes a bind's
# missing parents 0700; run as root, init's Landlock gives a directory others cannot read no
# read rule, so everything below /srv was unreadable ("cannot run /srv/tools/tool: Permission
# denied", 126). The plan makes them itself, 0755.
. "$(dirname "$0")/lib.sh"
aj_setup

# Top-level host directories outside the jail's view, one test tree in each (removed at exit).
TOPS=()
if aj_is_root; then
	for top in /srv /mnt; do
		[ -d "$top" ] && [ ! -L "$top" ] || continue
		t=$(mktemp -d "$top/agentjail-test.XXXXXX") || continue
		AJ_CLEAN+=("$t")
		chmod 0755 "$t"
		TOPS+=("$t")
	done
fi

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	if [ ${#TOPS[@]} -eq 0 ]; then
		skip "$who: --ro, --rw, a workspace and a command below /srv or /mnt" \
			"needs root to make a test tree there (neither exists, or not root)"
	fi
	for t in "${TOPS[@]}"; do
		top=${t%/*}
		d=$t/$who
		rm -rf "$d"
		mkdir -p "$d/tools" "$d/out" "$d/ws"
		printf '#!/bin/sh\necho tool ran\n' >"$d/tools/tool"
		chmod 0755 "$d/tools/tool"
		echo data-in-tools >"$d/tools/data"
		echo data-in-ws >"$d/ws/file"
		aj_chown "$d"

		aj_run "$who" -- run --ro "$d/tools" -- "$d/tools/tool"
		rc_is 0 "$who: --ro $top/…/tools: a program in it runs"
		like "$OUT" '^tool ran$' "$who: … and prints"
		aj_run "$who" -- run --ro "$d/tools" -- cat "$d/tools/data"
		is "$OUT" data-in-tools "$who: --ro $top/…/tools: a file in it is readable"
		aj_run "$who" -- run --ro "$d/tools" -- stat -c %a "$top" "$t" "$d"
		is "$(echo $OUT)" "755 755 755" "$who: … the directories the jail made on the way are 0755"
		aj_run "$who" -- run -- "$d/tools/tool"
		is "$RC/$OUT" "0/tool ran" "$who: a program below $top, no --ro: it runs"
		aj_run "$who" -- run --rw "$d/out" -- sh -c "echo w >'$d/out/f' && cat '$d/out/f'"
		is "$RC/$OUT" "0/w" "$who: --rw $top/…/out: writable and readable"
		is "$(cat "$d/out/f" 2>/dev/null)" w "$who: … and the write reached the host"
		aj_run "$who" -C "$d/ws" -- run -- cat file
		is "$RC/$OUT" "0/data-in-ws" "$who: a workspace below $top: readable"
	done

	# $HOME: the directories on the way to a PATH directory bound inside the private $HOME
	mkdir -p "$HOMEDIR/.ajt26/bin"
	printf '#!/bin/sh\necho home tool ran\n' >"$HOMEDIR/.ajt26/bin/ajt26-tool"
	chmod 0755 "$HOMEDIR/.ajt26/bin/ajt26-tool"
	aj_chown "$HOMEDIR/.ajt26"
	aj_run "$who" -e "PATH=$HOMEDIR/.ajt26/bin:$AJ_SYS_PATH" -- run -- \
		sh -c "ajt26-tool && stat -c %a '$HOMEDIR/.ajt26'"
	is "$RC/$(echo $OUT)" "0/home tool ran 755" \
		"$who: a PATH directory under \$HOME runs; the directory made above it is 0755"
	rm -rf "$HOMEDIR/.ajt26"
done

done_testing
