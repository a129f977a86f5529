#!/usr/bin/env bash
# agentjail verify: the integrity battery passes for every --fs ro|rw x --net off|on, as root and
# as an unprivileged user (no FAIL; WARN only for the exposures net on has by design), in under
# two seconds per policy; --json is one parseable document with at least 40 probes; the bait is
# gone afterwards, even when verify is interrupted; and verify's jail is run's: the two
# --dry-run outputs are equal apart from the command and the session id.
. "$(dirname "$0")/lib.sh"
aj_setup

GIT_ID=(-c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main)
MIN_PROBES=40
MAX_MS=2000
[ "${AJ_SAN:-}" = 1 ] && MAX_MS=8000 # sanitizer builds are several times slower

# What the bait named TOKEN leaves if it is not removed: files and sockets (the canary in $HOME,
# sockets in /tmp and /run), the sentinel (comm ajs-…) and the battery's orphan (ajo-…). Only this
# run's: other test runs on the machine plant bait of their own.
leftovers() { # TOKEN
	local t=$1 d p
	[ ${#t} = 16 ] || { echo "no token"; return 0; }
	for d in "$HOMEDIR" /tmp /run; do
		find "$d" -maxdepth 1 -name "*agentjail-verify-*$t*" 2>/dev/null
	done
	for p in /proc/[0-9]*; do
		case $(cat "$p/comm" 2>/dev/null) in "ajs-${t:0:11}" | "ajo-${t:0:11}") echo "process ${p#/proc/}" ;; esac
	done
	return 0
}

# The bait token of the last run, read from its report (the abstract socket is named after it).
token_of() { grep -oE 'agentjail-verify-[0-9a-f]{16}' <<<"$OUT" | head -n1 | cut -d- -f3; }

# Lines of the human report that are probe results.
results() { grep -E '^(PASS|WARN|FAIL|SKIP)  ' <<<"$OUT"; }

# The dry-run text with the command lines (init's, and the first: "would run: …") dropped and
# the session id masked; verify's one extra bind, agentjail itself for its battery (last of the
# binds, so the other fd numbers are run's), left out.
plan_only() {
	sed -E -e '/^-- /d' -e '/^would run: /d' -e 's/(AGENTJAIL_SESSION )[0-9a-f-]+/\1<session>/' \
		-e '\|^--ro-bind-fd [0-9]+ /run/agentjail/agentjail |d' <<<"$1"
}

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	# something for every probe to aim at: a git repository with hooks, a ~/.ssh with a key
	aj_host git -C "$WS" "${GIT_ID[@]}" init -q
	mkdir -p "$HOMEDIR/.ssh"
	printf 'not a real key\n' >"$HOMEDIR/.ssh/id_test"
	chmod 0700 "$HOMEDIR/.ssh"
	chmod 0600 "$HOMEDIR/.ssh/id_test"
	aj_chown "$WS" "$HOMEDIR"
	tree_before=$(aj_tree "$WS" "$HOMEDIR")

	# --- every policy of the CI matrix --------------------------------------------------------
	# two seconds, or 20 plain runs' time when the machine is that busy now (lib.sh): the plain
	# runs are timed just before and just after each verify, and the slower counts (the load
	# of a shared machine changes within seconds: one baseline for all four, taken in a quiet
	# moment, failed a verify made in a busy one: 2240 ms against 20 x 111)
	for fs in ro rw; do
		for net in off on; do
			base=$(aj_base_ms "$who")
			t0=$EPOCHREALTIME
			aj_run "$who" -- verify --fs "$fs" --net "$net"
			t1=$EPOCHREALTIME
			ms=$(((${t1/./} - ${t0/./}) / 1000))
			b1=$(aj_base_ms "$who") # a subshell: OUT and RC stay verify's
			[ "$b1" -gt "$base" ] && base=$b1
			max_ms=$(aj_limit_ms "$MAX_MS" "$base" 20)
			tag="$who fs=$fs net=$net"
			rc_is 0 "$tag: verify exits 0"
			unlike "$OUT" $'(^|\n)FAIL  ' "$tag: no probe FAILs"
			n=$(results | wc -l)
			ok $((n >= MIN_PROBES ? 0 : 1)) "$tag: $n probes ran (>= $MIN_PROBES)"
			like "$OUT" $'(^|\n)PASS  pid.no_survivors ' "$tag: nothing outlived the jail"
			like "$OUT" $'(^|\n)PASS  fs.protected ' "$tag: protected paths were tested"
			like "$OUT" $'(^|\n)PASS  fs.git_rename ' "$tag: the .git rename was tested"
			like "$OUT" $'(^|\n)PASS  fs.canary ' "$tag: the canary was tested"
			like "$OUT" $'(^|\n)PASS  fs.ssh ' "$tag: ~/.ssh was tested"
			if [ "$net" = on ]; then
				like "$OUT" $'(^|\n)WARN  net.loopback_tcp +net on' \
					"$tag: host loopback exposure is a WARN naming it"
			else
				like "$OUT" $'(^|\n)PASS  net.egress_ipv4 +no route' \
					"$tag: no route out"
			fi
			ok $((ms <= max_ms ? 0 : 1)) "$tag: took ${ms} ms (<= $max_ms; a plain run $base ms)"
			tok=$(token_of)
			is "$(leftovers "$tok")" "" "$tag: its bait ($tok) is gone"
			diag "$tag: $(tail -n1 <<<"$OUT"), ${ms} ms"
			printf '%s\n' "$OUT" | grep -E '^(WARN|SKIP|FAIL)  ' | while IFS= read -r l; do
				diag "  $l"
			done
		done
	done
	is "$(aj_tree "$WS" "$HOMEDIR")" "$tree_before" \
		"$who: workspace and home unchanged (bait and probe files removed)"

	# --- --json -------------------------------------------------------------------------------
	aj_run "$who" -- verify --json
	rc_is 0 "$who: verify --json exits 0"
	summary=$(python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["probes"]
assert d["version"] == 1 and isinstance(d["policy"], dict)
for o in p:
    assert set(o) >= {"id", "category", "result", "detail"}, o
    assert o["result"] in ("PASS", "WARN", "FAIL", "SKIP"), o
s = d["summary"]
assert s["total"] == len(p) and s["fail"] == sum(o["result"] == "FAIL" for o in p)
print(len(p), s["fail"])
' <<<"$OUT" 2>&1)
	read -r njson nfail <<<"$summary"
	ok $(((${njson:-0} >= MIN_PROBES) ? 0 : 1)) "$who: --json parses, $njson probes (>= $MIN_PROBES)"
	is "${nfail:-?}" 0 "$who: --json summary: 0 fail"
	[ "${njson:-0}" -ge "$MIN_PROBES" ] || diag "$summary"

	# --- policy-aware probes --------------------------------------------------------------------
	aj_run "$who" -- verify --allow-ptrace --only-not-an-option 2>/dev/null
	rc_is 2 "$who: an unknown option is a usage error"
	aj_run "$who" -- verify --allow-ptrace
	like "$OUT" $'(^|\n)PASS  ptrace.child_attach +PTRACE_ATTACH to a child works, as --allow-ptrace says' \
		"$who: --allow-ptrace: tracing a child works, as the policy says"
	unlike "$OUT" $'(^|\n)FAIL  ' "$who: --allow-ptrace: no probe FAILs"

	# --- verify's jail is run's -----------------------------------------------------------------
	# The host may change between two runs (another test adding a user locks /etc, and root's
	# /etc masks follow): verify's plan must equal the plan run prints right before or right
	# after it, in one of three tries.
	for pol in "--fs rw --net off" "--fs ro --net on"; do
		same=1
		for _ in 1 2 3; do
			# shellcheck disable=SC2086
			aj_run "$who" -- run $pol --dry-run -- true
			before=$(plan_only "$OUT")
			# shellcheck disable=SC2086
			aj_run "$who" -- verify $pol --dry-run
			vrc=$RC vout=$OUT
			# shellcheck disable=SC2086
			aj_run "$who" -- run $pol --dry-run -- true
			after=$(plan_only "$OUT")
			OUT=$vout RC=$vrc
			if [ "$(plan_only "$vout")" = "$before" ] || [ "$(plan_only "$vout")" = "$after" ]; then
				same=0
				break
			fi
		done
		rc_is 0 "$who: verify $pol --dry-run exits 0"
		like "$OUT" $'\n-- /run/agentjail/init __init .* -- /run/agentjail/agentjail __probe --fs ' \
			"$who: verify's command is agentjail __probe, bound beside the jail's init"
		is "$same" 0 "$who: verify $pol builds the same bwrap argv as run --dry-run"
		[ "$same" = 0 ] || diag "$(diff <(printf '%s\n' "$before") <(plan_only "$vout"))"
	done

	# --- refused policies ---------------------------------------------------------------------
	aj_run "$who" -- verify --fs full
	rc_is 2 "$who: danger-full-access is not a jail: verify refuses it"
	aj_run "$who" -- verify /bin/true
	rc_is 2 "$who: verify takes no command"

	# --- interrupted: the bait still goes -------------------------------------------------------
	# (the test build takes the bait's name from AGENTJAIL_TEST_VERIFY_TOKEN)
	for delay in 0.01 0.05 0.15; do
		tok=$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')
		aj_cmd "$who" -b agentjail-testbuild -e "AGENTJAIL_TEST_VERIFY_TOKEN=$tok" -- verify
		"${AJ_CMD[@]}" </dev/null >/dev/null 2>&1 &
		vpid=$!
		sleep "$delay"
		kill -TERM "$vpid" 2>/dev/null
		wait "$vpid"
		# a killed jail's processes are reaped by the kernel as its pid namespace goes:
		# allow that a moment, no more
		left=$(leftovers "$tok")
		for _ in $(seq 20); do
			[ -z "$left" ] && break
			sleep 0.1
			left=$(leftovers "$tok")
		done
		is "$left" "" "$who: SIGTERM after ${delay}s: no bait left behind"
	done
	is "$(aj_tree "$WS" "$HOMEDIR")" "$tree_before" "$who: … and nothing left in the workspace or home"
done
aj_skip_missing_whos "verify"

done_testing
