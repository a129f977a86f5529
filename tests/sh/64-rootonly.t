#!/usr/bin/env bash
# Root-only files outside /etc (issue 10, item 7). As root, the jail's uid 0 passes the owner
# check of every file, so a file only root can read on the host is readable inside unless it is
# masked: in /opt, in /usr (/usr/local), and the root-only files of /proc. The root half asserts
# they are unreadable (and that the scan cache notices a chmod made after a run); the
# unprivileged half checks the user still cannot read them and that nothing else broke. Both
# check that ordinary tools still work (nothing world-readable was masked).
. "$(dirname "$0")/lib.sh"
aj_setup

PROC_ROOT_ONLY=(/proc/slabinfo /proc/kpageflags /proc/kpagecount /proc/kpagecgroup
	/proc/pagetypeinfo /proc/vmallocinfo /proc/program_cpu)

OPTD= ULE= MADE_ULE=
cleanup_host() {
	[ -n "$OPTD" ] && rm -rf -- "$OPTD"
	[ -n "$ULE" ] && rm -rf -- "$ULE"
	[ -n "$MADE_ULE" ] && rmdir /usr/local/etc 2>/dev/null
	aj_cleanup
}
if aj_is_root; then
	trap cleanup_host EXIT
	# a 0600 file, and a world-readable one made root-only between two runs, in /opt
	OPTD=$(mktemp -d /opt/agentjail-test-XXXXXX) || bail "mktemp in /opt failed"
	chmod 0755 "$OPTD"
	printf 'opt-secret\n' >"$OPTD/secret"
	chmod 0600 "$OPTD/secret"
	printf 'opt-flip\n' >"$OPTD/flip"
	chmod 0644 "$OPTD/flip"
	printf 'opt-public\n' >"$OPTD/public"
	chmod 0644 "$OPTD/public"
	# a world-readable file in a 0700 directory under /usr/local/etc: the directory is masked
	if [ ! -d /usr/local/etc ]; then
		mkdir -m 0755 /usr/local/etc && MADE_ULE=1
	fi
	ULE=/usr/local/etc/agentjail-test-$$
	mkdir -m 0700 "$ULE"
	printf 'ule-secret\n' >"$ULE/conf"
	chmod 0644 "$ULE/conf"
	# a scan that meets a directory changed within the last moment is not cached (etcscan.h)
	sleep 0.3
fi

read_denied() { # WHO PATH DESC
	aj_run "$1" -- run -- "$P" read "$2"
	probe_denied "$3"
}

proc_unreadable() { # WHO — the root-only /proc files this kernel has
	local f
	for f in "${PROC_ROOT_ONLY[@]}"; do
		if [ ! -e "$f" ]; then
			skip "$1: $f is unreadable in the jail" "not on this kernel"
			continue
		fi
		read_denied "$1" "$f" "$1: $f (root-only on the host) is unreadable in the jail"
	done
}

tools_work() { # WHO
	local who=$1
	if command -v python3 >/dev/null; then
		aj_run "$who" -- run -- python3 -c 'import json, ssl, sqlite3, hashlib; print("py-ok")'
		is "$OUT" py-ok "$who: python3 imports json, ssl, sqlite3, hashlib (nothing under /usr/lib masked by mistake)"
	else
		skip "$who: python3 works" "no python3 on this host"
	fi
	if command -v gcc >/dev/null; then
		aj_run "$who" -- run -- sh -c 'printf "#include <stdio.h>\nint main(void){puts(\"cc-ok\");return 0;}\n" >/tmp/t.c && gcc -o /tmp/t /tmp/t.c && /tmp/t'
		is "$OUT" cc-ok "$who: gcc compiles and links a program (headers, crt files, libc)"
	else
		skip "$who: gcc works" "no gcc on this host"
	fi
	if command -v git >/dev/null; then
		aj_run "$who" -- run -- sh -c 'cd /tmp && git init -q r && cd r && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git log --oneline | wc -l'
		is "$OUT" 1 "$who: git init and commit in /tmp work"
	else
		skip "$who: git works" "no git on this host"
	fi
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	if [ "$who" = root ]; then
		read_denied root "$OPTD/secret" "root: a 0600 file in /opt is unreadable in the jail"
		aj_run root -- run -- "$P" read "$OPTD/flip"
		probe_ok "root: a world-readable file in /opt is still readable"
		read_denied root "$ULE/conf" "root: a file in a 0700 directory under /usr/local/etc is unreadable"
		aj_run root -- run --dry-run -- true
		like "$OUT" "--tmpfs $ULE( |$)" "root: the 0700 directory is masked whole (one mount)"
		unlike "$OUT" "$ULE/conf" "root: … not file by file"
		proc_unreadable root
		# the cache: the scan above was stored; a chmod of a file changes no directory, so only
		# a cache that checks every entry of /opt notices it (one that small: etcscan.h)
		optcache=/var/cache/agentjail/treescan-%2Fopt.cache
		ok $([ -s "$optcache" ] && echo 0 || echo 1) "root: the /opt scan is cached in the machine's scan directory"
		if grep -q '^check 1 ' "$optcache" 2>/dev/null; then
			chmod 0600 "$OPTD/flip"
			read_denied root "$OPTD/flip" "root: a file in /opt made root-only (chmod 0600) after a cached run is masked in the next run"
			# the cache is the machine's: a run with a state directory of its own (a first
			# run) trusts it no more than the run that wrote it
			printf 'opt-new\n' >"$OPTD/new"
			chmod 0600 "$OPTD/new"
			aj_run root -e AGENTJAIL_STATE_DIR="$STATE/other" -- run -- "$P" read "$OPTD/new"
			probe_denied "root: a root-only file created in /opt after a cached run is masked in a first run with a new state directory"
		else
			skip "root: a file in /opt made root-only after a cached run is masked" \
				"/opt has too many entries here to be checked entry by entry ($(sed -n 3p "$optcache" 2>/dev/null))"
		fi
		chmod 0644 "$OPTD/flip"
		aj_run root -- run -- "$P" read "$OPTD/flip"
		probe_ok "root: … and readable again once it is world-readable again"
		aj_run root -- run -- "$P" read "$OPTD/public"
		probe_ok "root: the other world-readable file in the same directory stays readable"
		# /usr's cache (checked by stamps, trusted for an hour): one past half its age is still
		# used, and renewed by a detached scan, so that no run waits for the scan of /usr
		usrcache=/var/cache/agentjail/treescan-%2Fusr.cache
		if grep -q '^check 3 ' "$usrcache" 2>/dev/null; then
			old=$(($(date +%s) - 2400))
			sed -i "3s/^check 3 .*/check 3 $old/" "$usrcache"
			t0=$(date +%s)
			aj_run root -- run -- "$P" read "$OPTD/public"
			probe_ok "root: a run with a /usr scan cache 40 minutes old uses it"
			now=
			for _ in $(seq 1 150); do
				now=$(sed -n '3s/^check 3 //p' "$usrcache" 2>/dev/null)
				[ -n "$now" ] && [ "$now" -ge "$t0" ] && break
				sleep 0.2
			done
			ok $([ -n "$now" ] && [ "$now" -ge "$t0" ] && echo 0 || echo 1) \
				"root: … and a detached scan renews that cache (check time ${now:-?}, the run's $t0)"
		else
			skip "root: an aging /usr scan cache is renewed in the background" \
				"/usr is checked otherwise here ($(sed -n 3p "$usrcache" 2>/dev/null))"
		fi
		# a PATH directory under $HOME is bound read-only: its root-only files are masked too
		mkdir -m 0755 "$HOMEDIR/bin"
		printf '#!/bin/sh\necho tool-ok\n' >"$HOMEDIR/bin/tool"
		chmod 0755 "$HOMEDIR/bin/tool"
		printf 'home-secret\n' >"$HOMEDIR/bin/secret"
		chmod 0600 "$HOMEDIR/bin/secret"
		aj_run root -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- run -- "$P" read "$HOMEDIR/bin/secret"
		probe_denied "root: a 0600 file in a PATH directory under \$HOME is unreadable in the jail"
		aj_run root -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- run -- tool
		is "$OUT" tool-ok "root: … and the directory's world-readable program runs"
	else
		if aj_is_root; then
			read_denied user "$OPTD/secret" "user: a 0600 root file in /opt is unreadable (as on the host)"
			read_denied user "$ULE/conf" "user: a file in a root 0700 directory is unreadable (as on the host)"
			aj_run user -- run -- "$P" read "$OPTD/public"
			probe_ok "user: a world-readable file in /opt is readable"
		fi
		proc_unreadable user
	fi
	tools_work "$who"
done
aj_skip_missing_whos "root-only files stay unreadable and tools work"
done_testing
