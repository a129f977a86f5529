#!/usr/bin/env bash
# The filesystem view: writes outside the workspace, read-only mode, $HOME, /etc secrets,
# /proc/sys, extra binds, masks, and nothing left behind on the host.
. "$(dirname "$0")/lib.sh"
aj_setup

if aj_is_root; then
	# A non-world-readable entry in /etc: must be masked when agentjail runs as root.
	ETC_SECRET=/etc/agentjail-test-$$.secret
	ETC_SECRET_LATE=/etc/agentjail-test-$$.late
	ETC_DIR=/etc/agentjail-test-$$.d
	ETC_FLIP=/etc/agentjail-test-$$.flip
	AJ_CLEAN+=("$ETC_SECRET" "$ETC_SECRET_LATE" "$ETC_DIR" "$ETC_FLIP")
	printf 'readable for now\n' >"$ETC_FLIP"
	chmod 0644 "$ETC_FLIP"
	printf 'etc-secret\n' >"$ETC_SECRET"
	chmod 0600 "$ETC_SECRET"
fi

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	before=$(aj_tree "$WS" "$HOMEDIR")

	# --- the workspace ---------------------------------------------------------------------
	aj_run "$who" -- run -- "$P" write "$WS/created" hello
	probe_ok "$who: the workspace is writable (default workspace-write)"
	is "$(cat "$WS/created" 2>/dev/null)" hello "$who: … and the file is on the host"
	rm -f "$WS/created"

	aj_run "$who" -- run --fs read-only -- "$P" write "$WS/created"
	probe_denied "$who: --fs read-only: the workspace is not writable"
	check "$who: … and nothing was created on the host" test ! -e "$WS/created"
	aj_run "$who" -- run --fs ro -- "$P" read "$WS/probe"
	probe_ok "$who: --fs ro: the workspace is readable"
	aj_run "$who" -- run --fs ro -- "$P" write "$WS/created"
	probe_denied "$who: --fs ro (alias): the workspace is not writable"
	aj_run "$who" -e AGENTJAIL_FS=read-only -- run -- "$P" write "$WS/created"
	probe_denied "$who: AGENTJAIL_FS=read-only: the workspace is not writable"
	aj_run "$who" -e AGENTJAIL_FS=read-only -- run --fs rw -- "$P" write "$WS/created"
	probe_ok "$who: --fs rw overrides AGENTJAIL_FS=read-only"
	rm -f "$WS/created"
	aj_run "$who" -- run -- "$P" mknod "$WS/nulldev"
	probe_denied "$who: mknod of a device in the workspace fails"
	rm -f "$WS/nulldev"

	# --- writes outside the workspace fail and leave nothing ------------------------------------
	name=agentjail-test-$$-outside
	# (The workspace's parent directories are not in this list: the fixture lives under /tmp, which
	# is a private tmpfs inside, covered below.)
	for dir in / /usr /usr/local /bin /etc /var /opt /lib /root /home /srv /mnt; do
		[ -d "$dir" ] || continue
		aj_run "$who" -- run -- "$P" write "${dir%/}/$name"
		probe_denied "$who: write to ${dir%/}/$name fails"
		check "$who: … and ${dir%/}/$name does not exist on the host" test ! -e "${dir%/}/$name"
		rm -f "${dir%/}/$name"
	done
	# /tmp and $HOME are private tmpfs inside: writable there, never reaching the host.
	aj_run "$who" -- run -- sh -c "'$P' write /tmp/$name && '$P' write /var/tmp/$name && '$P' write /dev/shm/$name && '$P' write '$HOMEDIR/$name'"
	rc_is 0 "$who: /tmp, /var/tmp, /dev/shm and \$HOME are writable scratch space inside"
	aj_run "$who" -- run -- sh -c "'$P' write '$AJ_TMP/$name'; '$P' write '$(dirname "$WS")/$name'"
	for f in "/tmp/$name" "/var/tmp/$name" "/dev/shm/$name" "$HOMEDIR/$name" "$AJ_TMP/$name" \
		"$(dirname "$WS")/$name"; do
		check "$who: … $f was not created on the host" test ! -e "$f"
		rm -f "$f"
	done
	aj_run "$who" -- run -- "$P" write "/run/$name"
	check "$who: a write to /run does not reach the host" test ! -e "/run/$name"
	rm -f "/run/$name"

	# --- $HOME is empty: a canary is unreachable ------------------------------------------------
	printf 'canary\n' >"$HOMEDIR/canary"
	mkdir -p "$HOMEDIR/.ssh"
	printf 'private key\n' >"$HOMEDIR/.ssh/id_ed25519"
	chmod 0644 "$HOMEDIR/canary" "$HOMEDIR/.ssh/id_ed25519"
	aj_chown "$HOMEDIR/canary" "$HOMEDIR/.ssh"
	aj_run "$who" -- run -- "$P" read "$HOMEDIR/canary"
	probe_denied "$who: a canary file in \$HOME is unreachable"
	aj_run "$who" -- run -- "$P" read "$HOMEDIR/.ssh/id_ed25519"
	probe_denied "$who: \$HOME/.ssh is unreachable"
	# (but for the empty mount points of the private package caches of the tools on PATH)
	aj_run "$who" -- run -- sh -c 'find "$HOME" -mindepth 1 ! -type d; ls -A "$HOME" |
		grep -vxE "\.cache|\.npm|\.m2|\.gradle|\.cargo|go"'
	is "$OUT" "" "$who: \$HOME is empty inside"
	# PATH directories under $HOME come back read-only, the rest of $HOME does not.
	mkdir -p "$HOMEDIR/bin"
	printf '#!/bin/sh\necho hello-from-home-bin\n' >"$HOMEDIR/bin/aj-home-tool"
	chmod 0755 "$HOMEDIR/bin/aj-home-tool"
	aj_chown "$HOMEDIR/bin"
	aj_run "$who" -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- run -- aj-home-tool
	is "$OUT" hello-from-home-bin "$who: a PATH directory under \$HOME is available inside"
	aj_run "$who" -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- run -- "$P" write "$HOMEDIR/bin/planted"
	probe_denied "$who: … read-only"
	check "$who: … nothing planted on the host" test ! -e "$HOMEDIR/bin/planted"
	aj_run "$who" -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- run -- "$P" read "$HOMEDIR/canary"
	probe_denied "$who: … while the canary beside it stays unreachable"
	rm -rf "${HOMEDIR:?}/bin" "${HOMEDIR:?}/canary" "${HOMEDIR:?}/.ssh"

	# --- /etc ------------------------------------------------------------------------------------
	aj_run "$who" -- run -- "$P" read /etc/passwd
	probe_ok "$who: /etc/passwd is readable"
	for f in /etc/shadow /etc/gshadow /etc/sudoers /etc/ssh/ssh_host_ed25519_key /etc/ssh/ssh_host_rsa_key; do
		[ -e "$f" ] || continue
		aj_run "$who" -- run -- "$P" read "$f"
		probe_denied "$who: $f is unreadable"
	done
	if [ "$who" = root ]; then
		aj_run "$who" -- run -- "$P" read "$ETC_SECRET"
		probe_denied "$who: a root-only (0600) file in /etc is masked when run as root"
		aj_run "$who" -- run -- sh -c 'cat /etc/shadow /etc/gshadow /etc/sudoers 2>/dev/null; exit 0'
		unlike "$OUT" 'root:' "$who: no content of shadow/gshadow/sudoers can be read"
	fi

	if [ "$who" = root ]; then
		# The /etc scan is cached in the state directory: a new root-only entry must still be masked.
		mkdir -m 0755 "$ETC_DIR"
		printf 'etc-secret-2\n' >"$ETC_DIR/secret"
		chmod 0600 "$ETC_DIR/secret"
		printf 'etc-secret-3\n' >"$ETC_SECRET_LATE"
		chmod 0600 "$ETC_SECRET_LATE"
		aj_run "$who" -- run -- "$P" read "$ETC_DIR/secret"
		probe_denied "$who: a root-only file created in a new /etc subdirectory after a run is masked (cache revalidated)"
		aj_run "$who" -- run -- "$P" read "$ETC_SECRET_LATE"
		probe_denied "$who: a root-only file created in /etc after a run is masked (cache revalidated)"
		# A world-readable file made root-only (chmod changes no directory's mtime) after a run.
		chmod 0600 "$ETC_FLIP"
		aj_run "$who" -- run -- "$P" read "$ETC_FLIP"
		probe_denied "$who: a file in /etc made root-only (chmod 0600) after a run is masked"
	fi

	# --- /proc, /sys, leaked fds, hostname --------------------------------------------------------
	aj_run "$who" -- run -- sh -c 'ls -A /sys 2>/dev/null'
	is "$OUT" "" "$who: /sys is absent or empty"
	aj_run "$who" -- run -- sh -c 'ls /dev | tr "\n" " "'
	unlike "$OUT" '(^| )(loop[0-9]*|sd[a-z]+|nvme[0-9a-z]*|vd[a-z]+|zram[0-9]+|kmsg|mem|kvm|fuse)( |$)' \
		"$who: /dev is minimal (no disks, kmsg, mem, kvm, fuse)"
	aj_run "$who" -- run -- cat /proc/sys/kernel/hostname
	is "$OUT" agentjail "$who: the hostname inside is agentjail"
	printf 'canary\n' >"$HOMEDIR/fd-canary"
	aj_cmd "$who" -- run -- sh -c "ls /proc/self/fd/ | tr '\n' ' '; echo; '$P' read /proc/self/fd/7/fd-canary"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/out" 2>"$AJ_TMP/err" 7<"$HOMEDIR"
	RC=$?; OUT=$(cat "$AJ_TMP/out"); ERR=$(cat "$AJ_TMP/err"); AJ_LAST="[$who] 7<\$HOME ${AJ_CMD[*]}"
	probe_denied "$who: a directory fd (7 → \$HOME) inherited by agentjail does not reach the jail"
	rm -f "$HOMEDIR/fd-canary"

	# --- /proc/sys ------------------------------------------------------------------------------
	for f in /proc/sys/kernel/core_pattern /proc/sys/kernel/modprobe /proc/sys/vm/overcommit_memory \
		/proc/sys/kernel/hostname; do
		[ -e "$f" ] || continue
		cur=$(cat "$f")
		aj_run "$who" -- run -- "$P" write "$f" "$cur"$'\n'
		probe_denied "$who: writing $f's current value back fails"
		is "$(cat "$f")" "$cur" "$who: … and $f is unchanged on the host"
	done
	aj_run "$who" -- run -- sh -c 'for f in /proc/sys/kernel/*; do [ -w "$f" ] && [ -f "$f" ] && echo "$f"; done; exit 0'
	is "$OUT" "" "$who: no file under /proc/sys/kernel is writable (access(W_OK))"

	# --- extra binds, masks ------------------------------------------------------------------------
	printf 'extra\n' >"$EXTRA/file"
	aj_chown "$EXTRA/file"
	aj_run "$who" -- run -- "$P" read "$EXTRA/file"
	probe_denied "$who: a path outside the workspace is invisible without --ro/--rw"
	aj_run "$who" -- run --ro "$EXTRA" -- "$P" read "$EXTRA/file"
	probe_ok "$who: --ro DIR: readable"
	aj_run "$who" -- run --ro "$EXTRA" -- "$P" write "$EXTRA/new"
	probe_denied "$who: --ro DIR: not writable"
	aj_run "$who" -- run --rw "$EXTRA" -- "$P" write "$EXTRA/new" via-rw
	probe_ok "$who: --rw DIR: writable"
	is "$(cat "$EXTRA/new" 2>/dev/null)" via-rw "$who: … and the write reached the host"
	rm -f "$EXTRA/new"
	mkdir -p "$WS/ro-sub" "$WS/hidden"
	printf 'hidden\n' >"$WS/hidden/secret"
	aj_chown "$WS/ro-sub" "$WS/hidden"
	aj_run "$who" -- run --ro "$WS/ro-sub" -- "$P" write "$WS/ro-sub/x"
	probe_denied "$who: --ro narrows a directory inside the writable workspace"
	aj_run "$who" -- run --hide "$WS/hidden" -- "$P" read "$WS/hidden/secret"
	probe_denied "$who: --hide masks a directory inside the workspace"
	aj_run "$who" -- run --hide "$WS/hidden" -- "$P" write "$WS/hidden/new"
	check "$who: … and nothing written there reaches the host" test ! -e "$WS/hidden/new"
	rm -rf "$WS/ro-sub" "$WS/hidden"

	# agentjail's own state directory is out of reach when it falls under the workspace.
	mkdir -p "$WS/.state"
	printf 'state\n' >"$WS/.state/record"
	aj_chown "$WS/.state"
	aj_run "$who" -e AGENTJAIL_STATE_DIR="$WS/.state" -- run -- "$P" read "$WS/.state/record"
	probe_denied "$who: agentjail's state directory inside the workspace is masked"
	aj_run "$who" -e AGENTJAIL_STATE_DIR="$WS/.state" -- run -- "$P" write "$WS/.state/planted"
	check "$who: … and nothing can be planted in it" test ! -e "$WS/.state/planted"
	rm -rf "$WS/.state"

	# agentjail's own binary is read-only when it lies under a writable root (its init beside it:
	# tests/sh/17-init.t).
	mkdir -p "$WS/tools"
	install -m 0755 "$AJ_BIN/agentjail" "$AJ_BIN/agentjail-init" "$WS/tools/"
	aj_chown "$WS/tools"
	aj_run "$who" -B "$WS/tools/agentjail" -- run -- "$P" write "$WS/tools/agentjail" planted
	probe_denied "$who: agentjail run from inside the workspace cannot overwrite its own binary"
	cmp -s "$AJ_BIN/agentjail" "$WS/tools/agentjail"
	ok $? "$who: … and the binary is unchanged on the host"
	rm -rf "$WS/tools"

	# --- nothing left behind -------------------------------------------------------------------
	aj_run "$who" -- run -- "$P" exit 0
	aj_run "$who" -- run --fs ro -- "$P" exit 0
	aj_run "$who" -- run --dry-run -- "$P" exit 0
	after=$(aj_tree "$WS" "$HOMEDIR")
	is "$after" "$before" "$who: no file was left behind in the workspace or \$HOME"
done
aj_skip_missing_whos "filesystem view"

done_testing
