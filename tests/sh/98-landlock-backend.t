#!/usr/bin/env bash
# run --backend landlock (issue 19, doc/design.md §4c): no bwrap, no namespaces; Landlock and
# seccomp only. Run where user namespaces are refused (max_user_namespaces = 0 in a test user
# namespace, as 20-doctor.t does), as root and as a user: writes confined to the workspace,
# $HOME unreadable (EACCES), the network refused under --net off, protected paths kept by the
# guard (a change moved aside and the original restored, a violation recorded) while the user's
# tools (git commit, npm) work, ptrace and namespace creation refused, the private TMPDIR removed
# afterwards.
. "$(dirname "$0")/lib.sh"
aj_setup

abi=$("$PROBE" landlock-abi 2>/dev/null)
[[ $abi =~ ^[0-9]+$ ]] || abi=0
if [ "$abi" -lt 3 ]; then
	skip "run --backend landlock" "the kernel's Landlock ABI is $abi (3 or later needed)"
	done_testing
fi

aj_llrun_setup # NS and llrun (lib.sh): runs where user namespaces are refused, when it can

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_host git -C "$WS" init -q
	aj_host sh -c "echo secret >'$HOMEDIR/secret'; echo x >'$EXTRA/file'; mkdir '$WS/src'; echo r >'$WS/README'"
	LL=(run --backend landlock)

	if [ -n "$NS" ]; then
		llrun "$who" -- run -- "$P" exit 0
		rc_is 125 "$who: the bwrap jail cannot start here (user namespaces refused)"
		like "$ERR" 'run --backend landlock.*no private /proc, PIDs, hostname or mounts' \
			"$who: … and the error names the landlock backend and what it does not protect"
	fi

	llrun "$who" -- "${LL[@]}" -- "$P" write "$WS/src/new" data
	probe_ok "$who: the workspace is writable (a new file in a directory of it)"
	llrun "$who" -- "${LL[@]}" -- "$P" read "$WS/src/new"
	probe_ok "$who: … and readable"
	llrun "$who" -- "${LL[@]}" -- "$P" write "$WS/README" data
	probe_ok "$who: … an existing file at its top is writable"
	llrun "$who" -- "${LL[@]}" -- "$P" write "$WS/new" data
	probe_ok "$who: … and a new entry at its top (protected paths are kept by the guard, issue 19)"
	llrun "$who" -- "${LL[@]}" -- "$P" read /etc/hostname
	probe_ok "$who: system files are readable"
	llrun "$who" -- "${LL[@]}" -- "$P" read "$HOMEDIR/secret"
	probe_denied "$who: \$HOME is unreadable" 13
	llrun "$who" -- "${LL[@]}" -- "$P" write "$HOMEDIR/planted" x
	probe_denied "$who: \$HOME is unwritable" 13
	llrun "$who" -- "${LL[@]}" -- "$P" write "$EXTRA/file" x
	probe_denied "$who: a file outside the allowlist is unwritable" 13
	if [ "$who" = root ]; then
		llrun "$who" -- "${LL[@]}" -- "$P" read /etc/shadow
		probe_denied "$who: /etc/shadow (masked in the bwrap jail) is unreadable" 13
	fi
	llrun "$who" -- "${LL[@]}" -- "$P" read "$WS/.git/config"
	probe_ok "$who: … protected files stay readable"

	llrun "$who" -- "${LL[@]}" -- "$P" socket 2
	probe_denied "$who: --net off: no AF_INET socket"
	llrun "$who" -- "${LL[@]}" -- "$P" socket 10
	probe_denied "$who: --net off: no AF_INET6 socket"
	llrun "$who" -- "${LL[@]}" -- "$P" socket 1
	probe_denied "$who: no AF_UNIX socket (pathname sockets of the host unreachable)"
	llrun "$who" -- "${LL[@]}" -- "$P" unshare-user
	probe_denied "$who: no new user namespace (unshare)"
	llrun "$who" -- "${LL[@]}" -- "$P" clone-newuser
	probe_denied "$who: no new user namespace (clone)"
	llrun "$who" -- "${LL[@]}" -- "$P" caps
	like "$OUT" 'CapInh=0+ CapPrm=0+ CapEff=0+ ' "$who: no capability, inheritable, permitted or effective"
	if [ "$who" = root ]; then
		like "$OUT" 'CapBnd=0+ CapAmb=0+$' "$who: … and none in the bounding set"
	fi
	llrun "$who" -- "${LL[@]}" -- "$P" nnp
	probe_ok "$who: no_new_privs is set"
	if command -v python3 >/dev/null; then
		llrun "$who" -- "${LL[@]}" -- python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(0, 0, None, None)  # PTRACE_TRACEME
print("ok" if r == 0 else "errno=%d ptrace" % ctypes.get_errno())
raise SystemExit(0 if r == 0 else 1)'
		probe_denied "$who: ptrace is refused"
	else
		skip "$who: ptrace is refused" "python3 is not installed"
	fi

	llrun "$who" -- "${LL[@]}" -- sh -c 'echo "$TMPDIR" && echo t >"$TMPDIR/f" && cat "$TMPDIR/f"'
	tmp=$(printf '%s\n' "$OUT" | head -n1)
	like "$OUT" $'^/tmp/agentjail-ll-[A-Za-z0-9]+\nt$' "$who: TMPDIR is a private, writable directory"
	[ -n "$tmp" ] && [ ! -e "$tmp" ]
	ok $? "$who: … removed after the run"

	llrun "$who" -- "${LL[@]}" --dry-run -- true
	rc_is 0 "$who: --dry-run works"
	like "$OUT" "landlock write +$WS"$'(\n|$)' "$who: … the workspace itself is writable (its protected paths are the guard's)"
	like "$OUT" 'Unix sockets: socket\(AF_UNIX\) is refused' "$who: … and says what happens to Unix sockets"

	llrun "$who" -- "${LL[@]}" -- "$P" exit 7
	rc_is 7 "$who: the command's exit status is agentjail's"
done

# --- the user's tools work; protected paths are kept by the guard (issue 19) ----------------
# pstate: what the protected paths hold (config, hooks with their modes and bytes, .envrc).
pstate() {
	(cd "$WS" && cat .git/config && find .git/hooks -printf '%P %y %s %m\n' | LC_ALL=C sort &&
		find .git/hooks -type f -exec cat {} + | sha256sum && ls -a | grep -x '\.envrc' &&
		cat .envrc) 2>&1
}
# last_show WHO: `show` of the newest session, in OUT.
last_show() {
	llrun "$1" -- sessions --json
	local id
	id=$(printf '%s' "$OUT" | grep -o '"id": *"[0-9a-f-]*"' | head -n1 | grep -o '[0-9a-f-]\{36\}')
	llrun "$1" -- show "$id"
}
# guarded WHO NAME PATH SCRIPT: SCRIPT (sh -c, in the workspace) attacks the protected PATH; the
# protected state afterwards is what it was, and the session records a violation of PATH.
guarded() {
	local who=$1 name=$2 path=$3 script=$4 before after
	before=$(pstate)
	llrun "$who" -- run --backend landlock -- sh -c "$script"
	after=$(pstate)
	is "$after" "$before" "$who: $name: the protected paths are as they were before the run"
	like "$ERR" "violation: protected path $WS/$path " "$who: … the run says so"
	last_show "$who"
	like "$OUT" "VIOL .* violation\.protected_path $WS/$path" "$who: … and the session records it"
}
for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	aj_host git -C "$WS" init -q
	aj_host sh -c "echo a >'$WS/a'; echo 'export A=1' >'$WS/.envrc'"
	llrun "$who" -- run --backend landlock -- sh -c 'touch newfile && mkdir sub && echo x >sub/f &&
		mv newfile nf && rm nf && rm -r sub && touch .git/x && mv .git/x .git/y && rm .git/y &&
		mkdir .git/d && rmdir .git/d && echo ok'
	is "$OUT" ok "$who: touch, mkdir, rename and rm work at the workspace's top and in .git"
	llrun "$who" -- run --backend landlock -- sh -c 'git add a && git -c user.name=t \
		-c user.email=t@t.invalid commit -qm first && git log --oneline | wc -l'
	is "$OUT" 1 "$who: git add and git commit work inside"
	unlike "$ERR" violation "$who: … and are no violation"
	if command -v npm >/dev/null; then
		llrun "$who" -- run --backend landlock -- sh -c 'npm init -y >/dev/null && test -f package.json && echo ok'
		is "$OUT" ok "$who: npm init -y works in the workspace"
	elif command -v python3 >/dev/null; then
		llrun "$who" -- run --backend landlock -- sh -c 'python3 -m venv --without-pip venv && venv/bin/python -c "print(\"ok\")"'
		is "$OUT" ok "$who: a python venv can be made in the workspace"
	else
		skip "$who: npm init / python venv in the workspace" "neither npm nor python3 is installed"
	fi

	guarded "$who" "a hook written in .git/hooks" .git/hooks \
		'printf "#!/bin/sh\necho pwned\n" >.git/hooks/pre-commit; chmod +x .git/hooks/pre-commit'
	guarded "$who" ".git/config replaced by rename" .git/config \
		'printf "[core]\n\tfsmonitor = evil\n" >c2 && mv c2 .git/config'
	guarded "$who" ".git/config written in place" .git/config \
		'printf "[core]\n\tpager = evil\n" >>.git/config'
	guarded "$who" ".envrc removed" .envrc 'rm .envrc'
	guarded "$who" ".git/hooks renamed away and a new one made" .git/hooks \
		'mv .git/hooks .git/hooks.away; mkdir -p .git/hooks; printf "evil\n" >.git/hooks/post-checkout'
	aj_host rm -f "$WS/.envrc"
	guarded "$who" "a missing protected name (.envrc) created" .envrc 'echo evil >.envrc'

	# the checks after a bwrap run hold here too: a nested repository, a setuid bit
	llrun "$who" -- run --backend landlock -- sh -c 'git init -q nested &&
		printf "[core]\n\tfsmonitor = evil\n" >>nested/.git/config'
	! grep -qs fsmonitor "$WS/nested/.git/config"
	ok $? "$who: a nested repository made inside is not left for the host's git"
	like "$ERR" "violation: .*nested/\.git" "$who: … and it is reported"
	(
		# as 62-setuid.t: seccomp refuses the bits inside, so a host process sets them
		for _ in $(seq 1 500); do [ -e "$WS/made" ] && break; sleep 0.02; done
		chmod 6755 "$WS/made" && touch "$WS/go"
	) &
	helper=$!
	AJ_PIDS+=("$helper")
	llrun "$who" -- run --backend landlock -- sh -c 'cp /bin/true made.tmp && mv made.tmp made;
		for i in $(seq 1 500); do [ -e go ] && exit 0; sleep 0.02; done; exit 3'
	wait "$helper"
	is "$(stat -c %a "$WS/made")" 755 "$who: a setuid bit gained during the run is removed after it"
	like "$ERR" "violation: .*$WS/made.*setuid and setgid bits" "$who: … and it is reported"
done

# --- --net allow: the proxy on the host's loopback, Landlock's TCP rules (ABI >= 4) ------------
if [ "$abi" -ge 4 ]; then
	aj_listen host listen-tcp 127.0.0.1 0
	hport=$(printf '%s' "$LISTEN_OUT" | grep -o '[0-9]*$')
	for who in "${AJ_WHOS[@]}"; do
		aj_use "$who"
		LA=(run --backend landlock --net allow --allow-domain example.com)
		llrun "$who" -- "${LA[@]}" -- sh -c '"$0" connect-tcp 127.0.0.1 "${HTTP_PROXY##*:}"' "$P"
		probe_ok "$who: --net allow: the proxy (HTTP_PROXY's port on 127.0.0.1) is reachable"
		like "$ERR" 'a direct connection to another host on that same port is not stopped' \
			"$who: … and the run says plainly what Landlock's port rule does not stop"
		llrun "$who" -- "${LA[@]}" -- "$P" connect-tcp 127.0.0.1 "$hport"
		probe_denied "$who: --net allow: another port on loopback is refused" 13
		llrun "$who" -- "${LA[@]}" -- timeout 5 "$P" listen-tcp 127.0.0.1 0
		probe_denied "$who: --net allow: no TCP listener (bind refused)" 13
		if command -v python3 >/dev/null; then
			llrun "$who" -- "${LA[@]}" -- python3 -c '
import socket
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    print("ok")
except OSError as e:
    print("errno=%d udp" % e.errno)
    raise SystemExit(1)'
			probe_denied "$who: --net allow: no UDP socket (Landlock does not see UDP)"
		fi
		llrun "$who" -- "${LA[@]}" --dry-run -- true
		like "$OUT" 'network allow: .*WARNING: Landlock matches ports, not addresses' \
			"$who: --dry-run says the same"
	done
else
	skip "--net allow with the landlock backend" "the kernel's Landlock ABI is $abi (4 needed)"
fi

# --- never silent, recorded, resumed, reported ------------------------------------------------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	llrun "$who" -- run --backend landlock -- sh -c 'echo "$AGENTJAIL_LANDLOCK"; exit 3'
	rc_is 3 "$who: a landlock run ends with the command's status"
	llrun "$who" -- sessions --json
	sid=$(printf '%s' "$OUT" | grep -o '"id": *"[0-9a-f-]*"' | head -n1 | grep -o '[0-9a-f-]\{36\}')
	llrun "$who" -- show "$sid" --json
	like "$OUT" '\\?"backend\\?": *\\?"landlock' "$who: the session row records the backend"
	llrun "$who" -- resume --last
	like "$OUT" 'backend' "$who: resume runs it with the landlock backend again"
	rc_is 3 "$who: … with the command's status"
	llrun "$who" -- doctor
	like "$OUT" 'landlock .*`run --backend landlock` works here' "$who: doctor says the landlock backend works here"
	like "$OUT" 'a direct connection to another host on that same port is not stopped' \
		"$who: … and what its --net allow does not stop"
done

# --- verify --backend landlock: PASS or SKIP (with the reason), no FAIL ------------------------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	llrun "$who" -- verify --backend landlock
	rc_is 0 "$who: verify --backend landlock exits 0"
	unlike "$OUT" '(^|'$'\n'')FAIL ' "$who: … no probe FAILs"
	like "$OUT" 'SKIP +pid\.init +no PID namespace in the landlock backend' \
		"$who: … a probe that needs namespaces is a SKIP with the reason"
	like "$OUT" 'PASS +inherit\.fds' "$who: … no inherited descriptor reaches the command"
	like "$OUT" 'PASS +pid\.no_survivors' "$who: … nothing the command leaves behind survives it"
	like "$OUT" 'PASS +fs\.canary' "$who: … the canary in \$HOME is out of reach"
	if [ "$abi" -ge 4 ]; then
		llrun "$who" -- verify --backend landlock --net allow --allow-domain example.com
		unlike "$OUT" '(^|'$'\n'')FAIL ' "$who: verify --backend landlock --net allow: no FAIL"
		like "$OUT" 'WARN +net\.landlock_port +.*a direct connection to another host on that same port is not stopped' \
			"$who: … and a WARN says what the port rule does not stop"
	fi
done

# --- the configuration's `backend` ------------------------------------------------------------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_host mkdir -p "$HOMEDIR/.config/agentjail"
	aj_host sh -c "printf 'backend = \"landlock\"\n' >'$HOMEDIR/.config/agentjail/config.toml'"
	llrun "$who" -- run -- sh -c 'echo "$AGENTJAIL_LANDLOCK"'
	like "$OUT" 'backend' "$who: backend = \"landlock\" in the user's config runs this backend"
	aj_host sh -c "mkdir -p '$HOMEDIR/bin' && printf '#!/bin/sh\necho ran\n' >'$HOMEDIR/bin/claude' && chmod 0755 '$HOMEDIR/bin/claude'"
	llrun "$who" -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- claude --dry-run
	like "$OUT" '# backend: landlock' "$who: … agents run in it too (issue 28: tests/sh/98-landlock-agents.t)"
	llrun "$who" -- run --backend local -- sh -c 'echo "$AGENTJAIL_LANDLOCK"'
	if [ -n "$NS" ]; then
		rc_is 125 "$who: … --backend local overrides it (the bwrap jail, which cannot start here)"
	else
		unlike "$OUT" 'backend' "$who: … --backend local overrides it"
	fi
	aj_host rm -f "$HOMEDIR/.config/agentjail/config.toml"
	aj_host sh -c "printf 'backend = \"landlock\"\n' >'$WS/.agentjail.toml'"
	llrun "$who" -- run -- true
	rc_is 2 "$who: a project's .agentjail.toml cannot choose the backend"
	like "$ERR" '`backend` may never be set in a project' "$who: … and says so"
	aj_host rm -f "$WS/.agentjail.toml"
done

llrun "${AJ_WHOS[0]}" -- run --backend nope -- true
rc_is 2 "an unknown backend is a usage error"
done_testing
