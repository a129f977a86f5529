#!/usr/bin/env bash
# No setuid or setgid file comes out of a jail (issue 10, item 4): the bits cannot be set from
# inside (seccomp refuses chmod/fchmodat/fchmodat2/open(O_CREAT)/mknod with them: EPERM, and each
# rule answers the test build's errno by itself), one set some other way during the run is
# reported and removed after it, and ordinary modes (755, 644, +x, sticky directories, cp -p,
# install -m, tar x, git checkout) keep working. Also: a large sparse protected file moved aside
# stays sparse, and the quarantine's copy cap is loud (issue 10, item 9).
. "$(dirname "$0")/lib.sh"
aj_setup

TEST_ERRNO=4000
tb=(-b agentjail-testbuild -e "AGENTJAIL_TEST_SECCOMP_ERRNO=$TEST_ERRNO")
setid() { stat -c %A "$1" | grep -q '[sS]' && echo setid || echo plain; }

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"

	# --- the issue's reproduction -------------------------------------------------------------
	aj_run "$who" -- run -- sh -c 'cp /bin/sh x && chmod 6755 x'
	isnt "$RC" 0 "$who: chmod 6755 inside fails"
	like "$ERR" "[Oo]peration not permitted" "$who: … with EPERM"
	is "$(setid "$WS/x")" plain "$who: … and no setuid/setgid file is left in the workspace ($(stat -c %A "$WS/x" 2>&1))"
	rm -f "$WS/x"

	# --- each way to set the bit, refused ------------------------------------------------------
	aj_host cp /bin/true "$WS/t"
	for how in chmod fchmodat2; do
		for m in 4755 2755 6711; do
			aj_run "$who" -- run -- "$P" mode "$how" "$m" "$WS/t"
			probe_denied "$who: $how $m is refused" 1
		done
	done
	for how in open-creat mknod-reg; do
		aj_run "$who" -- run -- "$P" mode "$how" 4755 "$WS/new-$how"
		probe_denied "$who: $how 4755 is refused" 1
		check "$who: … and created nothing" test ! -e "$WS/new-$how"
	done
	is "$(setid "$WS/t")" plain "$who: the target never got a bit"
	# file capabilities: the jail has no CAP_SETFCAP, so the kernel refuses the xattr itself
	aj_run "$who" -- run -- "$P" setcap-xattr "$WS/t"
	probe_denied "$who: setxattr security.capability is refused (no CAP_SETFCAP)" 1

	# --- the test build: each rule by itself -------------------------------------------------
	for how in chmod fchmodat2; do
		aj_run "$who" "${tb[@]}" -- run -- "$P" mode "$how" 4755 "$WS/t"
		probe_denied "$who: seccomp rule: $how 4755 → errno $TEST_ERRNO" $TEST_ERRNO
		aj_run "$who" "${tb[@]}" -- run -- "$P" mode "$how" 2755 "$WS/t"
		probe_denied "$who: seccomp rule: $how 2755 → errno $TEST_ERRNO" $TEST_ERRNO
	done
	for how in open-creat mknod-reg; do
		aj_run "$who" "${tb[@]}" -- run -- "$P" mode "$how" 4755 "$WS/new-$how"
		probe_denied "$who: seccomp rule: $how 4755 → errno $TEST_ERRNO" $TEST_ERRNO
	done
	aj_run "$who" "${tb[@]}" -- run -- "$P" mode chmod 755 "$WS/t"
	probe_ok "$who: test build: chmod 755 is allowed"

	# --- ordinary modes still work -----------------------------------------------------------
	aj_run "$who" -- run -- sh -ec '
		echo "#!/bin/sh" > s && chmod 755 s && chmod 644 s && chmod +x s && test -x s
		mkdir -p d && chmod 1777 d && test -k d
		cp -p s s2 && test -x s2
		install -m 755 s s3 && test -x s3
		mkdir -p a && echo hi > a/f && chmod 750 a/f && tar cf a.tar a && rm -rf a
		tar xf a.tar && test "$(stat -c %a a/f)" = 750
		umask 022; : > plain && test "$(stat -c %a plain)" = 644
		echo fine'
	is "$OUT" fine "$who: chmod 755/644/+x, sticky 1777, cp -p, install -m 755, tar x work"
	[ "$RC" = 0 ] || diag "$ERR"
	if command -v git >/dev/null 2>&1; then
		aj_run "$who" -- run -- sh -ec '
			export GIT_CONFIG_NOSYSTEM=1 HOME=$PWD/gh; mkdir -p gh
			git init -q r && cd r && git config user.email a@b && git config user.name a
			printf "#!/bin/sh\necho ran\n" > tool && chmod +x tool && git add tool
			git commit -qm one && rm tool && git checkout -q -- tool && ./tool'
		is "$OUT" ran "$who: git checkout of an executable file works"
	else
		skip "$who: git checkout of an executable file" "git is not installed"
	fi

	# --- a setuid bit set some other way during the run: reported and removed ------------------
	aj_fresh_ws "$who"
	aj_host cp /bin/true "$WS/old-suid"
	chmod 4755 "$WS/old-suid" # the user's own, from before the run: left alone
	sleep 1.1                 # older than the scan's one-second margin (suidscan_mark)
	(
		# the file appears whole (a rename): a write after the chmod would clear the bits itself
		for _ in $(seq 1 500); do [ -e "$WS/made" ] && break; sleep 0.02; done
		chmod 6755 "$WS/made" && touch "$WS/go"
	) &
	helper=$!
	AJ_PIDS+=("$helper")
	aj_run "$who" -- run -- sh -c 'cp /bin/true made.tmp && mv made.tmp made; for i in $(seq 1 500); do [ -e go ] && exit 0; sleep 0.02; done; exit 3'
	wait "$helper"
	rc_is 0 "$who: a host process made a file setuid during the run"
	is "$(setid "$WS/made")" plain "$who: … the bits are gone after it ($(stat -c %A "$WS/made"))"
	like "$ERR" "violation: .*$WS/made.*setuid and setgid bits" "$who: … and it is reported"
	is "$(setid "$WS/old-suid")" setid "$who: a setuid file from before the run is left alone"
	unlike "$ERR" "old-suid" "$who: … and not reported"
	chmod 0755 "$WS/old-suid"

	# --- item 9: a protected path moved aside across filesystems ------------------------------
	qs=$(mktemp -d /dev/shm/agentjail-q.XXXXXX)
	AJ_CLEAN+=("$qs")
	chmod 0755 "$qs"
	aj_chown "$qs"
	if [ "$(stat -c %d "$qs")" = "$(stat -c %d "$WS")" ]; then
		skip "$who: sparse and capped quarantine copies" "/dev/shm is on the workspace's filesystem"
		continue
	fi
	rm -f "$WS/.envrc"
	t0=$(date +%s%N)
	aj_run "$who" -e "AGENTJAIL_STATE_DIR=$qs" -- run -- sh -c \
		'truncate -s 1G .e.tmp && printf "export X=1\n" | dd of=.e.tmp conv=notrunc 2>/dev/null && mv .e.tmp .envrc'
	ms=$((($(date +%s%N) - t0) / 1000000))
	diag "$who: a run leaving a 1 GiB sparse .envrc took $ms ms"
	like "$ERR" "violation: .*/\.envrc appeared.*moved aside (at once )?to $qs" "$who: a 1 GiB sparse .envrc is moved aside to the quarantine on another filesystem"
	q=$(find "$qs" -name .envrc -type f | head -n1)
	is "$(stat -c %s "$q" 2>&1)" 1073741824 "$who: … whole (1 GiB apparent size)"
	kb=$(du -k "$q" 2>/dev/null | cut -f1)
	ok $(( ${kb:-999999} < 1024 ? 0 : 1 )) "$who: … and sparse (du: ${kb:-?} KiB)"
	ok $(( ms < 5000 ? 0 : 1 )) "$who: … fast ($ms ms)"
	check "$who: … and gone from the workspace" test ! -e "$WS/.envrc"

	aj_run "$who" -e "AGENTJAIL_STATE_DIR=$qs" -- run -- sh -c 'head -c 70M /dev/zero > .e.tmp && mv .e.tmp .envrc'
	like "$ERR" "violation: .*/\.envrc appeared .*too large to copy into the quarantine: renamed in place to $WS/\.envrc\.agentjail-too-large-" \
		"$who: 70 MiB of data is above the copy cap: the violation says so, loudly"
	check "$who: … the .envrc is no longer there under its name" test ! -e "$WS/.envrc"
	n=$(find "$WS" -maxdepth 1 -name '.envrc.agentjail-too-large-*' -size 70M | wc -l)
	is "$n" 1 "$who: … it was renamed in place, whole, not deleted"
	rm -f "$WS"/.envrc.agentjail-too-large-*
done
aj_skip_missing_whos "setuid and setgid bits"

done_testing
