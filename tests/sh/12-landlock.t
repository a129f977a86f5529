#!/usr/bin/env bash
# Landlock, applied by the jail's init: the ABI seen inside is the kernel's and what agentjail
# says about it matches; with --net on, the host's abstract Unix sockets are refused where the ABI
# scopes them (6+); writes the mounts and file permissions would allow outside the writable view
# are refused (EACCES), and every writable place of the view still takes writes (workspace, --rw
# directories and files, the scratch tmpfs, $HOME). --fs read-only stays EROFS (the mount).
. "$(dirname "$0")/lib.sh"
aj_setup

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=$(command -v python3)

# --- the kernel's ABI, asked directly (landlock_create_ruleset(NULL, 0, VERSION)) ---------------
kernel_abi=
if [ -n "$PYTHON" ]; then
	kernel_abi=$("$PYTHON" - <<'EOF'
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
v = libc.syscall(ctypes.c_long(444), None, ctypes.c_size_t(0), ctypes.c_uint32(1))
print(v if v > 0 else 0)
EOF
	)
fi
probe_abi=$("$PROBE" landlock-abi 2>/dev/null)
[[ $probe_abi =~ ^[0-9]+$ ]] || probe_abi=0
if [[ $kernel_abi =~ ^[0-9]+$ ]]; then
	diag "Landlock ABI on this kernel: $kernel_abi (landlock_create_ruleset via python ctypes)"
	is "$probe_abi" "$kernel_abi" "the probe helper reads the same ABI as python ($kernel_abi)"
else
	skip "the probe helper reads the kernel's ABI" "python3 is not installed"
	kernel_abi=$probe_abi
	diag "Landlock ABI on this kernel: $kernel_abi (probe helper)"
fi
abi=$kernel_abi
if [ "$abi" -ge 1 ]; then
	_tap_result 0 "Landlock is available (ABI $abi)"
else
	skip "Landlock is available" "the kernel reports no Landlock (ABI 0: not built in or disabled at boot)"
fi

# What agentjail reports: `doctor --json`, check "landlock", detail "ABI N: …" (doc/design.md §3:
# "doctor reports the ABI").
aj_run "${AJ_WHOS[0]}" -- doctor --json
if [ "$RC" = 2 ] || ! [[ $OUT == *'"checks"'* ]]; then
	skip "agentjail doctor reports the kernel's Landlock ABI" "this build has no \`doctor --json\`"
elif [ -n "$PYTHON" ]; then
	reported=$(printf '%s' "$OUT" | "$PYTHON" -c '
import json, re, sys
d = json.load(sys.stdin)
c = [c for c in d["checks"] if c["id"] == "landlock"]
m = re.match(r"ABI ([0-9]+)", c[0]["detail"]) if c else None
print(m.group(1) if m else ("0" if c and "not available" in c[0]["detail"] else "?"))')
	is "$reported" "$abi" "agentjail doctor reports the kernel's Landlock ABI ($abi)"
else
	reported=$(printf '%s' "$OUT" | grep -o '"detail": *"ABI [0-9]*' | grep -o '[0-9]*$')
	is "$reported" "$abi" "agentjail doctor reports the kernel's Landlock ABI ($abi)"
fi

# A host abstract socket, for the scoping test.
ABS_NAME=agentjail-test-$$-ll-abstract
have_abs=
aj_listen abs listen-abstract "$ABS_NAME" && have_abs=1

# A workspace outside every scratch path of the jail (/tmp, /var/tmp, /run, /dev/shm, $HOME):
# only the workspace's own Landlock rule can let a write there through. Inside, its parents
# are made by bwrap on the jail's read-only root.
LLROOT=
if aj_is_root; then
	LLROOT=$(mktemp -d /var/lib/agentjail-test-ll.XXXXXX 2>/dev/null)
fi
if [ -n "$LLROOT" ]; then
	AJ_CLEAN+=("$LLROOT")
	chmod 0755 "$LLROOT"
fi

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	# --- the ABI inside, and what agentjail says ------------------------------------------
	aj_run "$who" -- run -- "$P" landlock-abi
	is "$OUT" "$abi" "$who: the ABI seen inside the jail is the kernel's ($abi)"
	aj_run "$who" -- run --net on -- "$P" exit 0
	if [ "$abi" -ge 6 ]; then
		like "$ERR" 'abstract Unix sockets are closed by Landlock' \
			"$who: --net on: agentjail says the abstract sockets are closed (ABI $abi ≥ 6)"
	else
		like "$ERR" 'no Landlock scoping' \
			"$who: --net on: agentjail says this kernel has no Landlock scoping (ABI $abi < 6)"
	fi

	# --- abstract Unix sockets with --net on ---------------------------------------------
	if [ -z "$have_abs" ]; then
		skip "$who: --net on: a host abstract socket is refused" "could not start the listener"
	elif [ "$abi" -lt 6 ]; then
		skip "$who: --net on: a host abstract socket is refused" "Landlock ABI $abi < 6: no scoping of abstract sockets on this kernel"
	else
		aj_host "$PROBE" connect-abstract "$ABS_NAME" >/dev/null
		ok $? "$who: control: the abstract socket @$ABS_NAME is reachable on the host"
		aj_run "$who" -- run --net on -- "$P" connect-abstract "$ABS_NAME"
		probe_denied "$who: --net on: the host abstract socket is refused inside (Landlock scope, EPERM)" 1
	fi

	if [ "$abi" -lt 1 ]; then
		skip "$who: Landlock refuses writes outside the writable view" "no Landlock on this kernel"
		continue
	fi

	# --- Landlock refuses what mounts and permissions would allow -----------------------------
	# The jail's /dev and /run are writable tmpfs owned by the jail's user: only Landlock stops a
	# new file there.
	aj_run "$who" -- run -- sh -c "test -w /dev && echo dev-writable; '$P' write /dev/agentjail-test-$$"
	like "$OUT" '^dev-writable' "$who: control: the jail's /dev is a tmpfs its user may write to"
	is "$(tail -n1 <<<"$OUT")" "errno=13 (Permission denied)" "$who: … yet creating a file in /dev is refused (Landlock: EACCES)"
	aj_run "$who" -- run -- sh -c "test -w /run && echo run-writable; '$P' write /run/agentjail-test-$$"
	like "$OUT" '^run-writable' "$who: control: the jail's private /run is a tmpfs its user may write to"
	# doc/design.md §3: private tmpfs on /tmp, /var/tmp, /run, /dev/shm, and Landlock "mirrors the
	# writable view": /run takes writes like the others.
	is "$(tail -n1 <<<"$OUT")" ok "$who: … and a file can be created in /run (Landlock mirrors the writable view)"

	# --- every writable place of the view still takes writes -----------------------------------
	aj_run "$who" -- run -- sh -c "for d in /tmp /var/tmp /dev/shm; do '$P' write \"\$d/ll-$$\" || echo \"failed: \$d\"; done; '$P' write /dev/null"
	rc_is 0 "$who: writes to /tmp, /var/tmp, /dev/shm and /dev/null are allowed"
	unlike "$OUT" 'failed:' "$who: … none refused"

	if [ -z "$LLROOT" ]; then
		skip "$who: Landlock lets the workspace and --rw paths be written" "no directory outside /tmp to put a workspace in (not root, no \$XDG_RUNTIME_DIR)"
		skip "$who: --fs read-only: EROFS outside /tmp" "no directory outside /tmp to put a workspace in"
		continue
	fi
	d=$LLROOT/$who
	mkdir -p "$d/ws" "$d/extra" "$d/home"
	printf 'before\n' >"$d/extra-file"
	install -m 0755 "$AJ_BIN/probe" "$d/ws/probe"
	aj_chown "$d"
	lp=$d/ws/probe
	aj_run "$who" -C "$d/ws" -- run --rw "$d/extra" --rw "$d/extra-file" -- sh -c \
		"'$lp' write '$d/ws/new' && '$lp' write '$d/extra/new' && '$lp' write '$d/extra-file' after"
	rc_is 0 "$who: a workspace outside the scratch paths, a --rw directory and a --rw file take writes"
	check "$who: … the workspace file is on the host" test -f "$d/ws/new"
	check "$who: … the --rw directory's file is on the host" test -f "$d/extra/new"
	is "$(cat "$d/extra-file")" after "$who: … the --rw file was rewritten"
	aj_run "$who" -C "$d/ws" -e HOME="$d/home" -- run -- "$lp" write "$d/home/new"
	probe_ok "$who: a \$HOME outside the scratch paths (a tmpfs inside) takes writes"
	aj_run "$who" -C "$d/ws" -- run -- "$lp" write "$d/outside-ws"
	probe_denied "$who: the workspace's parent is not writable"
	aj_run "$who" -C "$d/ws" -- run --fs read-only -- "$lp" write "$d/ws/ro-new"
	probe_denied "$who: --fs read-only: a workspace write fails with EROFS (the mount)" 30
	check "$who: … and nothing was created" test ! -e "$d/ws/ro-new"
done
aj_skip_missing_whos "Landlock"

done_testing
