#!/usr/bin/env bash
# backend = "auto" (issue 28 item 2, doc/design.md §2a): the bwrap jail where it can be built,
# else the Landlock backend, else exit 125 — never unsandboxed; the start line says which and
# why; the session records it and resume runs there again, saying so; doctor says what auto
# would choose. As root and as a user: where bwrap works (the host), where user namespaces are
# refused (max_user_namespaces = 0 in a test user namespace, root only), and where Landlock is
# missing too (the test build's AGENTJAIL_TEST_LANDLOCK_ABI makes the kernel look older).
. "$(dirname "$0")/lib.sh"
aj_setup

abi=$("$PROBE" landlock-abi 2>/dev/null)
[[ $abi =~ ^[0-9]+$ ]] || abi=0
NS=
if aj_is_root && [ "$(id -u "${AJ_USER:-root}")" -lt 65536 ]; then NS=1; fi
nsrun() { aj_cmd "$@"; ns_run "${AJ_CMD[@]}"; }
line() { printf '%s\n' "$OUT" | grep -E "^(ok|warn|fail) +$1 " | head -n1; }
last_id() {
	aj_run "$1" -- sessions --json
	printf '%s' "$OUT" | grep -o '"id": *"[0-9a-f-]*"' | head -n1 | grep -o '[0-9a-f-]\{36\}'
}
WHERE='echo "where=${AGENTJAIL_LANDLOCK:-none}"'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	# --- where the bwrap jail works: it is chosen -------------------------------------------
	aj_run "$who" -- run --backend auto -- sh -c "$WHERE"
	rc_is 0 "$who: run --backend auto where bwrap works"
	like "$ERR" '^agentjail: backend auto: the bwrap jail \(its test jail ran here in [0-9]+ ms\)' \
		"$who: … the start line says the bwrap jail was chosen"
	unlike "$OUT" 'where=.*,backend' "$who: … and it ran there (not the Landlock backend)"
	aj_run "$who" -- run --backend auto --quiet -- true
	is "$ERR" "" "$who: … --quiet: no line for the default choice"
	aj_run "$who" -- resume --last
	like "$ERR" "resume: session .* ran on the local backend, chosen by backend = auto \(backend auto: the bwrap jail" \
		"$who: resume of an auto session says where it ran and that it resumes there"
	aj_run "$who" -- doctor
	like "$(line backend_auto)" '^ok +backend_auto +backend = "auto" would choose the bwrap jail' \
		"$who: doctor says auto would choose the bwrap jail"
	# a project cannot choose it
	aj_host sh -c "printf 'backend = \"auto\"\n' >'$WS/.agentjail.toml'"
	aj_run "$who" -- run -- true
	rc_is 2 "$who: a project's .agentjail.toml cannot set backend = \"auto\""
	aj_host rm -f "$WS/.agentjail.toml"

	if [ -z "$NS" ]; then
		skip "$who: auto where user namespaces are refused" "needs root (a user namespace with max_user_namespaces = 0)"
		continue
	fi
	# --- where user namespaces are refused: the Landlock backend, said ----------------------
	if [ "$abi" -lt 4 ]; then
		skip "$who: auto chooses the Landlock backend" "the kernel's Landlock ABI is $abi (4 needed)"
		continue
	fi
	# a session auto put in the bwrap jail resumes there or not at all: never re-chosen
	aj_run "$who" -- run --backend auto -- sh -c "echo ran >>'$WS/resumed'"
	id=$(last_id "$who")
	rm -f "$WS/resumed"
	nsrun "$who" -- resume "$id"
	rc_is 125 "$who: resume of an auto session that ran in the bwrap jail, where user namespaces are now refused: exit 125"
	[ ! -e "$WS/resumed" ]
	ok $? "$who: … nothing ran (not moved to the Landlock backend behind the user's back)"
	like "$ERR" "resume: session $id ran on the local backend, chosen by backend = auto .*it resumes there" \
		"$who: … it says the session resumes where auto put it"
	like "$ERR" 'max_user_namespaces = 0' "$who: … and why that backend cannot run here"

	nsrun "$who" -- run --backend auto -- sh -c "$WHERE"
	rc_is 0 "$who: run --backend auto where user namespaces are refused"
	like "$ERR" 'backend auto: bubblewrap cannot build its jail here \(user namespaces are disabled on this host \(user\.max_user_namespaces = 0\)\); using the landlock backend: no private /proc, PIDs or mounts' \
		"$who: … the start line says the Landlock backend was chosen, why, and what it does not protect"
	like "$OUT" 'where=abi=[0-9]+,fs,backend' "$who: … and the command ran there"
	id=$(last_id "$who")
	aj_run "$who" -- show "$id" --json
	like "$OUT" 'backend_auto.{0,8}: *.{0,4}backend auto: bubblewrap cannot build its jail here' "$who: the session records why auto chose it"
	like "$OUT" '\\?"backend\\?": *\\?"landlock' "$who: … and the backend"
	nsrun "$who" -- resume --last
	like "$ERR" "resume: session $id ran on the landlock backend, chosen by backend = auto" \
		"$who: resume says where the session ran and that it resumes there"
	like "$OUT" 'where=abi=[0-9]+,fs,backend' "$who: … and runs it on the Landlock backend again"
	# the user's configuration: the agents too
	aj_host mkdir -p "$HOMEDIR/.config/agentjail" "$HOMEDIR/bin"
	aj_host sh -c "printf 'backend = \"auto\"\n' >'$HOMEDIR/.config/agentjail/config.toml'"
	aj_host sh -c "printf '#!/bin/sh\n$WHERE\n' >'$HOMEDIR/bin/claude' && chmod 0755 '$HOMEDIR/bin/claude'"
	nsrun "$who" -e PATH="$HOMEDIR/bin:$AJ_SYS_PATH" -- claude -- --version
	rc_is 0 "$who: backend = \"auto\" in the user's config: agentjail claude runs"
	like "$ERR" 'using the landlock backend' "$who: … the start line says where"
	like "$OUT" 'where=abi=[0-9]+,fs,backend' "$who: … on the Landlock backend"
	aj_host rm -f "$HOMEDIR/.config/agentjail/config.toml"
	nsrun "$who" -- doctor
	like "$(line backend_auto)" '^warn +backend_auto +backend = "auto" would choose the Landlock backend \(no private /proc, PIDs or mounts\)' \
		"$who: doctor says auto would choose the Landlock backend here"

	# --- where Landlock is missing too: exit 125, nothing runs ------------------------------
	rm -f "$WS/ran"
	nsrun "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_LANDLOCK_ABI=2 -- run --backend auto -- touch "$WS/ran"
	rc_is 125 "$who: Landlock ABI 2 (simulated) and no user namespaces: auto exits 125"
	[ ! -e "$WS/ran" ]
	ok $? "$who: … and nothing ran, sandboxed or not"
	like "$ERR" 'backend auto: bubblewrap cannot build its jail here .*, and the landlock backend needs Landlock ABI 3 \(this kernel: 2\): nothing was run \(never without a sandbox\)' \
		"$who: … saying why for both backends"
	like "$ERR" 'fix: as root: sysctl -w user.max_user_namespaces=' "$who: … and the fix"
	nsrun "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_LANDLOCK_ABI=3 -- run --backend auto --net allow --allow-domain example.com -- touch "$WS/ran"
	rc_is 125 "$who: Landlock ABI 3 (simulated) and --net allow: auto exits 125"
	like "$ERR" 'needs Landlock ABI 4 for --net allow \(this kernel: 3\)' "$who: … naming what --net allow needs"
	nsrun "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_LANDLOCK_ABI=2 -- doctor
	like "$(line backend_auto)" '^fail +backend_auto +backend = "auto" would refuse to run \(exit 125\)' \
		"$who: doctor says auto would refuse to run"
done
aj_skip_missing_whos "backend = auto"
done_testing
