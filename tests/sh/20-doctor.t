#!/usr/bin/env bash
# agentjail doctor: correct on this host (as root and as an unprivileged user), and on simulated
# broken hosts: no bwrap, a bwrap writable by a user, user namespaces disabled, and a bwrap that
# fails exactly as AppArmor's unprivileged-userns restriction makes it fail.
. "$(dirname "$0")/lib.sh"
aj_setup
# doctor looks for the agents on PATH: none is there unless a test puts one (the host may have
# any of them installed: a system PATH would find it)
AJ_XENV=(PATH="$AJ_NO_PATH")
# the bwrap agentjail finds without AGENTJAIL_BWRAP (launch_find_bwrap's order)
BWRAP=/usr/bin/bwrap
[ -e "$BWRAP" ] || BWRAP=/usr/local/bin/bwrap
BWRAP_RE=${BWRAP//./\\.}

IDS='bwrap bwrap_version userns apparmor jail netns review seccomp landlock backend_auto limits pty state_dir config etcscan agent.claude
agent.codex agent.gemini agent.kiro agent.pi agent.opencode agent.aider toolchain cache tls ca
ssh_agent gpg_agent'

# json_check FILE EXPECT_OK — the documented schema (doc/doctor-json.md); prints problems
json_check() {
	python3 - "$1" "$2" "$IDS" <<'EOF'
import json, sys
path, want_ok, ids = sys.argv[1], sys.argv[2] == "true", sys.argv[3].split()
problems = []
try:
    d = json.load(open(path))
except Exception as e:
    print("not JSON: %s" % e); sys.exit(1)
if list(d.keys()) != ["version", "ok", "checks"]:
    problems.append("top-level keys %s" % list(d.keys()))
if d.get("version") != 1:
    problems.append("version %r" % d.get("version"))
if d.get("ok") is not want_ok:
    problems.append("ok %r, expected %r" % (d.get("ok"), want_ok))
checks = d.get("checks", [])
seen = []
for c in checks:
    if list(c.keys()) != ["id", "status", "detail", "fix"]:
        problems.append("check keys %s" % list(c.keys()))
        continue
    seen.append(c["id"])
    if c["status"] not in ("ok", "warn", "fail"):
        problems.append("%s: status %r" % (c["id"], c["status"]))
    if not isinstance(c["detail"], str) or not c["detail"]:
        problems.append("%s: empty detail" % c["id"])
    if (c["status"] == "ok") != (c["fix"] is None):
        problems.append("%s: status %s with fix %r" % (c["id"], c["status"], c["fix"]))
    if c["fix"] is not None and (not isinstance(c["fix"], str) or not c["fix"]):
        problems.append("%s: empty fix" % c["id"])
if seen != ids:
    problems.append("ids %s" % seen)
if any(c.get("status") == "fail" for c in checks) == want_ok:
    problems.append("ok does not match the failed checks")
print("\n".join(problems))
sys.exit(1 if problems else 0)
EOF
}

# line ID — the human output's line for check ID (and its fix line, if any)
line() { printf '%s\n' "$OUT" | grep -E "^(ok|warn|fail)  +$1 "; }
# fixof ID — the fix line printed under check ID
fixof() { printf '%s\n' "$OUT" | grep -E -A1 "^(ok|warn|fail)  +$1 " | sed -n '2p' | grep -E '^ +fix: ' ; }

avail_dirs() { find /tmp -maxdepth 1 -name 'agentjail-avail-*' 2>/dev/null | sort; }

# --- this host: every check ok or warn, exit 0 ---------------------------------------------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	before=$(avail_dirs)
	tree_before=$(aj_tree "$WS")
	aj_run "$who" -- doctor
	rc_is 0 "$who: doctor exits 0 on this host"
	bad=$(printf '%s\n' "$OUT" | grep -E '^[a-z]' | grep -E -v '^(ok|warn)  ' | grep -v '^a sandboxed run works here')
	is "$bad" "" "$who: every check is ok or warn"
	for id in $IDS; do
		like "$(line "$id")" "^(ok|warn)  +$id  +[^ ]" "$who: a line for $id" || break
	done
	like "$(line jail)" "^ok .*ran /bin/true with $BWRAP_RE" "$who: the availability probe ran the real jail"
	like "$(line netns)" '^ok +netns +--net allow works here' "$who: the --net allow namespace can be built here"
	like "$(line bwrap)" "^ok .*$BWRAP_RE.*trusted" "$who: bwrap path and trust"
	like "$(line bwrap_version)" '^ok .*bubblewrap [0-9]+\.[0-9]+' "$who: bwrap version"
	like "$(line userns)" '^ok .*max_user_namespaces = [0-9]+' "$who: user namespace knobs"
	like "$(line landlock)" "(ABI [0-9]+: filesystem \\(1\\)|Landlock is not available)" "$who: Landlock ABI and features"
	like "$(line state_dir)" "^ok +state_dir +$STATE \\(AGENTJAIL_STATE_DIR\\)" "$who: the state directory"
	like "$(line config)" "$HOMEDIR/.config/agentjail/config.toml" "$who: the config file's place"
	like "$(line agent.claude)" 'not installed' "$who: a missing agent is reported as not installed"
	like "$(printf '%s\n' "$OUT" | tail -n1)" '^a sandboxed run works here' "$who: summary line"
	is "$(avail_dirs)" "$before" "$who: the probe's scratch directory is removed"
	is "$(aj_tree "$WS")" "$tree_before" "$who: nothing is created in the cwd"

	aj_run "$who" -- doctor --json
	rc_is 0 "$who: doctor --json exits 0 on this host"
	printf '%s' "$OUT" >"$AJ_TMP/doctor.json"
	problems=$(json_check "$AJ_TMP/doctor.json" true)
	ok $? "$who: --json parses and has the documented schema"
	[ -n "$problems" ] && diag "$problems"

	# under a terminal: the probe and the version checks stay off the user's tty
	aj_run "$who" -t -- doctor
	rc_is 0 "$who: doctor under a terminal exits 0"
	like "$(line jail)" '^ok ' "$who: … and the probe works there"
done
aj_skip_missing_whos "doctor on this host"

aj_run "${AJ_WHOS[0]}" -- doctor --bogus
rc_is 2 "an unknown argument is a usage error (2)"

# --- state directory: judged, not created; the /etc scan cache refreshed as root ----------------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	sd=$STATE/not/yet
	aj_run "$who" -e AGENTJAIL_STATE_DIR="$sd" -- doctor
	rc_is 0 "$who: doctor with a state directory that does not exist yet"
	like "$(line state_dir)" "^ok +state_dir +$sd .*not created yet.* below $STATE" "$who: … says it will be created below the nearest existing directory"
	if [ "$who" = root ]; then
		# root's scan caches are the machine's (etcscan.h: treescan_cache_dir), whatever the
		# state directory
		like "$(line etcscan)" "^ok .*cache refreshed: /var/cache/agentjail/etcscan.cache" "root: the /etc scan cache is refreshed"
		check "root: … at /var/cache/agentjail/etcscan.cache" test -s /var/cache/agentjail/etcscan.cache
		check "root: … and the state directory is not created for it" test ! -e "$STATE/not"
	else
		check "$who: doctor does not create the state directory" test ! -e "$STATE/not"
		like "$(line etcscan)" '^ok .*not needed' "$who: no /etc scan for an unprivileged user"
	fi
	rm -rf -- "$STATE/not"
	chmod 0777 "$STATE"
	aj_run "$who" -- doctor
	like "$(line state_dir)" "^warn .*writable by group or others" "$who: a group/other-writable state directory is a warning"
	like "$(fixof state_dir)" "chmod go-w $STATE" "$who: … with the chmod fix"
	rc_is 0 "$who: … which does not fail doctor"
	chmod 0755 "$STATE"
done

# --- agents: found on PATH, version asked without the tty, with only PATH and HOME -------------
AG=$AJ_TMP/agents
mkdir -m 0755 "$AG"
cat >"$AG/claude" <<'EOF'
#!/bin/sh
if (: </dev/tty) 2>/dev/null; then t=yes; else t=no; fi
if read -r x; then s=data; else s=eof; fi
printf '\n\033[1mclaude 9.9.9\033[0m (tty=%s stdin=%s secret=%s home=%s)\n' "$t" "$s" "${AJ_SECRET-unset}" "$HOME"
EOF
printf '#!/bin/sh\nexec %s 31.%s\n' "$(command -v sleep)" "$$" >"$AG/gemini"
# 4 s: what node agents took on a loaded machine (issue 26), a warning under the old 3 s
printf '#!/bin/sh\n%s 4\necho "pi 0.1.0"\n' "$(command -v sleep)" >"$AG/pi"
printf '#!/bin/sh\necho "aider: broken install" >&2\nexit 3\n' >"$AG/aider"
printf '#!/bin/sh\necho "codex-cli 0.0.1"\n' >"$AG/codex"
chmod 0755 "$AG"/*
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	start=$(date +%s)
	aj_run "$who" -t -e PATH="$AG:$AJ_NO_PATH" -e AJ_SECRET=s3cret -- doctor
	took=$(( $(date +%s) - start ))
	rc_is 0 "$who: doctor with agents installed exits 0"
	like "$OUT" $'(^|\n)\e\\[33mwarn\e\\[0m  +agent.gemini ' "$who: on a terminal a warning is in colour"
	OUT=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$OUT")
	like "$(line agent.claude)" "^ok +agent.claude +$AG/claude: claude 9.9.9 \\(tty=no stdin=eof secret=unset home=$HOMEDIR\\)$" \
		"$who: agent version read without a terminal, stdin at EOF, only PATH and HOME"
	like "$(line agent.codex)" "^ok .*$AG/codex: codex-cli 0.0.1" "$who: a second agent"
	like "$(line agent.gemini)" "^warn .*$AG/gemini: slow to answer: \`gemini --version\` said nothing in 10 s \\(stopped\\)" \
		"$who: an agent that hangs is a warning after 10 s, said as slow to answer"
	like "$(line agent.pi)" "^ok .*$AG/pi: pi 0.1.0" "$who: an agent that takes 4 s to answer is fine"
	like "$(fixof agent.gemini)" 'gemini --version' "$who: … with a fix"
	like "$(line agent.aider)" '^warn .*exited 3: aider: broken install' "$who: an agent whose --version fails is a warning"
	like "$(line agent.kiro)" '^ok .*not installed' "$who: a missing agent is ok"
	[ "$took" -lt 25 ]
	ok $? "$who: the version checks run together under one 10 s deadline (took ${took}s)"
	check "$who: the hanging agent was killed" sh -c "! pgrep -f 'sleep 3[1].$$' >/dev/null"
	aj_run "$who" -t -e PATH="$AG:$AJ_NO_PATH" -e NO_COLOR=1 -- doctor
	unlike "$OUT" $'\e\\[' "$who: NO_COLOR: no colour on the terminal"
	aj_run "$who" -e PATH="$AG:$AJ_NO_PATH" -- doctor
	unlike "$OUT" $'\e\\[' "$who: into a pipe: no colour"
done

# --- no bwrap ----------------------------------------------------------------------------------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_run "$who" -e AGENTJAIL_BWRAP=/nonexistent/bwrap -- doctor
	rc_is 1 "$who: no bwrap: doctor exits 1"
	like "$(line bwrap)" '^fail +bwrap +.*/nonexistent/bwrap.*No such file' "$who: … the bwrap check fails naming it"
	like "$(fixof bwrap)" 'apt-get install bubblewrap' "$who: … with the apt-get fix"
	like "$(line jail)" '^fail +jail +not attempted' "$who: … the jail is not attempted"
	like "$(printf '%s\n' "$OUT" | tail -n1)" 'cannot work here; failed: bwrap jail' "$who: … summary names the failures"
	aj_run "$who" -e AGENTJAIL_BWRAP=/nonexistent/bwrap -- doctor --json
	rc_is 1 "$who: no bwrap: doctor --json exits 1"
	printf '%s' "$OUT" >"$AJ_TMP/doctor.json"
	problems=$(json_check "$AJ_TMP/doctor.json" false)
	ok $? "$who: … and its JSON says ok: false in the documented schema"
	[ -n "$problems" ] && diag "$problems"
done

# --- a bwrap writable by a user: refused as untrusted, never run ---------------------------------
if aj_is_root; then
	TDIR=$(mktemp -d /run/agentjail-test-doctor.XXXXXX)
	AJ_CLEAN+=("$TDIR")
	chmod 0755 "$TDIR"
	UDIR=$TDIR/userdir
	mkdir -m 0755 "$UDIR"
	chown "${AJ_USER:-nobody}:" "$UDIR"
else
	UDIR=$AJ_TMP/userdir
	mkdir -m 0755 "$UDIR"
fi
cp "$BWRAP" "$UDIR/bwrap"
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_run "$who" -e AGENTJAIL_BWRAP="$UDIR/bwrap" -- doctor
	rc_is 1 "$who: a bwrap in a user's directory: doctor exits 1"
	if aj_is_root; then
		like "$(line bwrap)" "^fail +bwrap +.*not trusted: $UDIR is not owned by root" "$who: … refused as untrusted, naming the offending directory"
	else
		like "$(line bwrap)" "^fail +bwrap +.*not trusted: $UDIR" "$who: … refused as untrusted, naming the offending path"
	fi
	like "$(line bwrap_version)" '^warn .*not run' "$who: … and it is never executed"
	like "$(line jail)" '^fail ' "$who: … the jail check fails"
done

# --- user namespaces disabled (user.max_user_namespaces = 0 inside a test user namespace) --------
if aj_is_root && [ "$(id -u "${AJ_USER:-root}")" -lt 65536 ]; then
	host_max=$(cat /proc/sys/user/max_user_namespaces)
	for who in "${AJ_WHOS[@]}"; do
		aj_cmd "$who" -- doctor
		ns_run "${AJ_CMD[@]}"
		rc_is 1 "$who: user namespaces disabled: doctor exits 1"
		like "$(line userns)" '^fail +userns +.*max_user_namespaces = 0.*user namespaces are disabled' "$who: … the userns check names the cause"
		like "$(fixof userns)" 'sysctl -w user.max_user_namespaces=' "$who: … with the sysctl fix"
		like "$(line jail)" '^fail +jail +.*could not start the jail: ".*namespace.*"; cause: user namespaces are disabled' "$who: … the probe fails with bwrap's message and the translated cause"
		like "$(fixof jail)" 'sysctl -w user.max_user_namespaces=.*/etc/sysctl.d/' "$who: … and the fix"
		like "$(line netns)" '^warn +netns +--net allow .*cannot work here.*unshare\(CLONE_NEWUSER\|CLONE_NEWNET\) failed' "$who: … the netns check names the step that failed"
		like "$(line netns)" 'failed \(user namespaces are disabled' "$who: … and the cause"
		like "$(fixof netns)" 'sysctl -w user.max_user_namespaces=' "$who: … with the fix"
	done
	is "$(cat /proc/sys/user/max_user_namespaces)" "$host_max" "the host's user.max_user_namespaces is untouched"
else
	skip "user namespaces disabled" "needs root (a namespace mapping root and the test user)"
fi

# --- a bwrap that fails as AppArmor's userns restriction makes it fail ---------------------------
# A root-owned stub in root-owned 0755 directories (trusted), and the AppArmor sysctl simulated
# through the test build's AGENTJAIL_TEST_PROCFS (the kernel here has no such knob).
FAKE=$AJ_TMP/fakeproc
mkdir -p "$FAKE/sys/kernel" "$FAKE/sys/user" "$FAKE/agentjail-test"
echo 1 >"$FAKE/sys/kernel/apparmor_restrict_unprivileged_userns"
echo 15000 >"$FAKE/sys/user/max_user_namespaces"
echo 0 >"$FAKE/agentjail-test/userns_works"
chmod -R a+rX "$FAKE"
if aj_is_root; then
	STUB=$TDIR/stub
	mkdir -m 0755 "$STUB"
	cat >"$STUB/bwrap" <<'EOF'
#!/bin/sh
if [ "$1" = --version ]; then echo "bubblewrap 0.8.0"; exit 0; fi
echo 'bwrap: setting up uid map: Permission denied' >&2
exit 1
EOF
	chmod 0755 "$STUB/bwrap"
	for who in "${AJ_WHOS[@]}"; do
		aj_use "$who"
		aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_BWRAP="$STUB/bwrap" \
			-e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor
		rc_is 1 "$who: AppArmor-like failure: doctor exits 1"
		like "$(line bwrap)" "^ok +bwrap +$STUB/bwrap" "$who: … the stub is trusted"
		like "$(line jail)" '^fail +jail +.*"bwrap: setting up uid map: Permission denied"' "$who: … the probe shows bwrap's message"
		if [ "$who" = root ]; then
			unlike "$(line jail)" 'AppArmor' "root: … root is not subject to AppArmor's userns restriction"
			like "$(line jail)" 'cause: bubblewrap could not set up the jail' "root: … so the cause is the generic one"
		else
			like "$(line jail)" 'cause: AppArmor blocks unprivileged user namespaces \(kernel.apparmor_restrict_unprivileged_userns = 1' "$who: … translated to AppArmor's restriction"
			like "$(fixof jail)" 'profile bwrap /usr/bin/bwrap .*userns.*apparmor_parser -r /etc/apparmor.d/bwrap' "$who: … with the AppArmor profile fix"
			like "$(fixof jail)" 'sysctl -w kernel.apparmor_restrict_unprivileged_userns=0' "$who: … and the sysctl alternative"
			like "$(line userns)" '^fail +userns +.*apparmor_restrict_unprivileged_userns = 1.*AppArmor blocks' "$who: … the userns check says the same"
			aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_BWRAP="$STUB/bwrap" \
				-e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor --json
			printf '%s' "$OUT" >"$AJ_TMP/doctor.json"
			jf=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); j=[c for c in d["checks"] if c["id"]=="jail"][0]; print(j["status"], "apparmor_parser" in j["fix"], "AppArmor blocks unprivileged user namespaces" in j["detail"])' "$AJ_TMP/doctor.json")
			is "$jf" "fail True True" "$who: … the same in --json"
		fi
	done
else
	skip "AppArmor-like bwrap failure" "needs root for a root-owned stub"
fi
# --- a wildcard allow rule: names under it reach the host's resolver (issue 24 item 7) ----------
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	cfg=$HOMEDIR/.config/agentjail/config.toml
	mkdir -p "${cfg%/*}"
	printf '[policy]\nallow_domains = ["api.example.com", "*.example.org"]\n' >"$cfg"
	aj_chown "$HOMEDIR/.config"
	aj_run "$who" -- doctor
	rc_is 0 "$who: doctor with a wildcard allow rule exits 0"
	like "$(line dns_wildcard)" "^warn +dns_wildcard +\\*\\.example\\.org: any name under example\\.org is looked up by the host's resolver, which asks example\\.org's name servers: a jail can send them data in the names it looks up .*; set in $cfg:2" \
		"$who: … a warning names the wildcard, the name servers it reaches, and where it was set"
	like "$(fixof dns_wildcard)" 'exact host names' "$who: … with the fix"
	aj_run "$who" -- run --net allow --dry-run -- true
	like "$OUT" $'\n# note: \\*\\.example\\.org: any name under example\\.org is looked up by the host.s resolver' \
		"$who: run --dry-run notes it too"
	rm -f "$cfg"
	aj_run "$who" -- doctor
	is "$(line dns_wildcard)" "" "$who: … and without one there is no such line"
	aj_run "$who" -- run --net allow --allow-domain api.example.com --dry-run -- true
	unlike "$OUT" '# note:' "$who: … nor a note"
done

# the override exists only in the test build: the release binary reads the real host
aj_run "${AJ_WHOS[0]}" -e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor
rc_is 0 "the release build ignores AGENTJAIL_TEST_PROCFS"
like "$(line userns)" '^ok ' "… its userns check reads the real host"

done_testing
