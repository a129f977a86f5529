#!/usr/bin/env bash
# The battery can fail: `agentjail __probe` run inside deliberately weak jails — raw bwrap with
# `--ro-bind / /` and the host's /dev, no seccomp, capabilities kept (root), no Landlock, the
# host's network and pid namespace — against bait this test plants itself, reports FAIL in every
# category. Only probes shown to FAIL here count toward the 40 the battery must have; the count
# is printed.
#
# Two weak jails: A shares the host's pid namespace (the processes probes fail there); B adds
# --unshare-pid, so PID 1 is bwrap's own process, which the PID 1 ptrace probes may touch (a PID
# 1 that is not a jail's is never touched).
. "$(dirname "$0")/lib.sh"
aj_setup

MIN_COUNTED=40
GIT_ID=(-c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main)
CATEGORIES=(privileges terminal namespaces mount-api kernel ptrace processes inheritance filesystem
	devices proc network)

if ! aj_is_root; then
	skip "weak jails" "needs root (a weak jail keeps root's capabilities)"
	done_testing
fi
BWRAP=$(command -v bwrap) || bail "bwrap is not installed"

aj_use root
aj_fresh_ws root
aj_host git -C "$WS" "${GIT_ID[@]}" init -q
mkdir -p "$HOMEDIR/.ssh"
printf 'not a real key\n' >"$HOMEDIR/.ssh/id_test"
chmod 0700 "$HOMEDIR/.ssh"

# --- the bait, planted by the test -------------------------------------------------------------
TOKEN=$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
[ ${#TOKEN} = 16 ] || bail "no random token"
CANARY=$HOMEDIR/.agentjail-verify-canary-$TOKEN
SOCK_RUN=/run/agentjail-verify-$TOKEN.sock
SOCK_TMP=/tmp/agentjail-verify-$TOKEN.sock
ABSTRACT=agentjail-verify-$TOKEN
printf 'agentjail verify canary %s\n' "$TOKEN" >"$CANARY"
tree_before=$(aj_tree "$WS" "$HOMEDIR")
AJ_CLEAN+=("$CANARY" "$SOCK_RUN" "$SOCK_TMP")
aj_listen run listen-unix "$SOCK_RUN" || bail "no listener on $SOCK_RUN"
aj_listen tmp listen-unix "$SOCK_TMP" || bail "no listener on $SOCK_TMP"
aj_listen abs listen-abstract "$ABSTRACT" || bail "no abstract listener"
aj_listen tcp listen-tcp 127.0.0.1 0 || bail "no loopback listener"
PORT=${LISTEN_OUT#ready }
(exec -a "ajs-${TOKEN:0:11}" sleep 300) &
SENTINEL=$!
AJ_PIDS+=("$SENTINEL")
for _ in $(seq 1 100); do # until the exec has named it
	[ "$(tr '\0' '\n' <"/proc/$SENTINEL/cmdline" 2>/dev/null | head -n1)" = "ajs-${TOKEN:0:11}" ] &&
		break
	sleep 0.01
done

BAIT_ENV=(GITHUB_TOKEN AWS_SECRET_ACCESS_KEY ANTHROPIC_API_KEY)
ARGS=(--fs ro --net off --workspace "$WS" --home "$HOMEDIR" --token "$TOKEN"
	--canary "$CANARY" --ssh-dir "$HOMEDIR/.ssh" --unix-run "$SOCK_RUN" --unix-tmp "$SOCK_TMP"
	--abstract "$ABSTRACT" --tcp-port "$PORT" --sentinel "$SENTINEL" --bait-fd 9)
ENV=(PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" LD_LIBRARY_PATH=/nonexistent-agentjail-verify)
for v in "${BAIT_ENV[@]}"; do
	ARGS+=(--env-bait "$v")
	ENV+=("$v=verify-$TOKEN")
done

# weak_run NAME [BWRAP-OPTION…]: the battery in a weak jail, then the host's survivor check;
# the JSON lines go to $AJ_TMP/NAME.jsonl. Sets RC, OUT, ERR and AJ_LAST for lib.sh's assertions.
# shellcheck disable=SC2034
weak_run() {
	local name=$1 out=$AJ_TMP/$1.jsonl
	shift
	env -i "${ENV[@]}" "$BWRAP" --ro-bind / / --dev-bind /dev /dev --proc /proc "$@" \
		--bind "$WS" "$WS" --chdir "$WS" -- "$AJ_BIN/agentjail" __probe "${ARGS[@]}" \
		9<"$HOMEDIR" </dev/null >"$out" 2>"$AJ_TMP/$name.err"
	RC=$?
	"$AJ_BIN/agentjail" __probe --host-check --token "$TOKEN" >"$AJ_TMP/$name.host" \
		2>>"$AJ_TMP/$name.err"
	OUT=$(cat "$out")
	ERR=$(cat "$AJ_TMP/$name.err")
	AJ_LAST="weak jail $name: bwrap --ro-bind / / --dev-bind /dev /dev --proc /proc $*"
}

CORE_BEFORE=$(cat /proc/sys/kernel/core_pattern)
t0=$EPOCHREALTIME
weak_run A
t1=$EPOCHREALTIME
rc_is 0 "weak jail A (host pid namespace): the battery ran to the end"
diag "weak jail A: $(((${t1/./} - ${t0/./}) / 1000)) ms"
weak_run B --unshare-pid
rc_is 0 "weak jail B (--unshare-pid): the battery ran to the end"

# Merge: the host's verdict on the orphan replaces the battery's "left an orphan behind".
REPORT=$(python3 - "$AJ_TMP" "${CATEGORIES[@]}" <<'EOF'
import json, sys
tmp, cats = sys.argv[1], sys.argv[2:]
fails, total, bad = {}, set(), []
for run in ("A", "B"):
    probes = {}
    for line in open(f"{tmp}/{run}.jsonl"):
        try:
            o = json.loads(line)
        except ValueError:
            bad.append(f"{run}: {line.strip()}")
            continue
        probes[o["id"]] = o
    for line in open(f"{tmp}/{run}.host"):
        h = json.loads(line)
        if probes.get(h["id"], {}).get("result") == "PASS":
            probes[h["id"]] = {**h, "category": probes[h["id"]]["category"]}
    for o in probes.values():
        total.add(o["id"])
        if o["result"] == "FAIL":
            fails.setdefault(o["id"], (o["category"], run, o["detail"]))
print(f"total {len(total)}")
print(f"counted {len(fails)}")
for c in cats:
    ids = sorted(i for i, v in fails.items() if v[0] == c)
    print(f"category {c} {len(ids)} {' '.join(ids)}")
for i in sorted(total - set(fails)):
    print(f"notfailed {i}")
for i, (c, run, d) in sorted(fails.items()):
    print(f"fail {run} {i}: {d}")
for b in bad:
    print(f"unparsed {b}")
EOF
)
[ -n "$REPORT" ] || bail "could not read the weak jails' results"
counted=$(sed -n 's/^counted //p' <<<"$REPORT")
total=$(sed -n 's/^total //p' <<<"$REPORT")

for c in "${CATEGORIES[@]}"; do
	line=$(grep "^category $c " <<<"$REPORT")
	n=$(awk '{print $3}' <<<"$line")
	ok $((${n:-0} > 0 ? 0 : 1)) "category $c: ${n:-0} probe(s) FAIL in a weak jail (${line#category "$c" * })"
done
unlike "$REPORT" $'(^|\n)unparsed ' "every line of the battery is JSON"
ok $((counted >= MIN_COUNTED ? 0 : 1)) \
	"$counted of $total probes are shown to FAIL against a weak jail (>= $MIN_COUNTED count)"
diag "probes shown to FAIL against a weak jail (they count toward the battery's size): $counted"
grep '^fail ' <<<"$REPORT" | while IFS= read -r l; do diag "  ${l#fail }"; done
diag "not shown to FAIL here (they do not count):"
grep '^notfailed ' <<<"$REPORT" | while IFS= read -r l; do diag "  ${l#notfailed }"; done

# --- the probes cleaned up after themselves, even where nothing stopped them ----------------------
is "$(aj_tree "$WS" "$HOMEDIR")" "$tree_before" "the workspace and home are as before (.git renamed back)"
left=$(for p in /proc/[0-9]*; do # alive: a zombie waiting for its reaper is dead already
	[ "$(cat "$p/comm" 2>/dev/null)" = "ajo-${TOKEN:0:11}" ] &&
		[ "$(awk '{print $3}' "$p/stat" 2>/dev/null)" != Z ] && echo "${p#/proc/}"
done)
is "$left" "" "the orphans the weak jails let survive were killed by the host check"
is "$(cat /proc/sys/kernel/core_pattern)" "$CORE_BEFORE" \
	"core_pattern unchanged (the probe writes back the value it read)"

done_testing
