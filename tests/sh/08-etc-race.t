#!/usr/bin/env bash
# As root, a root-only file in /etc that the host rewrites by rename (write NAME+, rename it
# over NAME: what passwd and useradd do) must stay unreadable in the jail. A mount over the old
# file is detached by the kernel when the name is renamed over, so the mask alone fails here
# (measured: most runs read it); init's Landlock read-deny (rules on inodes, none for files
# others could not read) keeps it closed. Shown failing against the mask-only jail first: with
# AGENTJAIL_TEST_NO_DENY_READ in the test build the same loop reads the secret.
. "$(dirname "$0")/lib.sh"
aj_setup

if ! aj_is_root; then
	plan 1
	skip "a root-only /etc file rewritten by rename stays unreadable" "not running as root"
	exit 0
fi
abi=$("$PROBE" landlock-abi 2>/dev/null | tail -n1)
if ! [[ $abi =~ ^[0-9]+$ ]] || [ "$abi" -lt 1 ]; then
	plan 1
	skip "a root-only /etc file rewritten by rename stays unreadable" "no Landlock on this kernel ($abi)"
	exit 0
fi

plan 3
secret=/etc/agentjail-race-$$
token="race-token-$$-$RANDOM"
printf '%s\n' "$token" >"$secret" && chmod 600 "$secret"
trap 'rm -f "$secret" "$secret+"; aj_cleanup' EXIT
(
	for _ in $(seq 20000); do
		cp -p "$secret" "$secret+" 2>/dev/null && mv -f "$secret+" "$secret" 2>/dev/null
	done
) >/dev/null 2>&1 &
churn=$!
AJ_PIDS+=("$churn")

aj_use root
count_reads() { # N [aj_run options…]: runs the probe N times, sets reads/denied/other
	local n=$1
	shift
	reads=0 denied=0 other=0
	for _ in $(seq "$n"); do
		aj_run root "$@" -- run -- "$P" read "$secret"
		case "$(printf '%s' "$OUT" | tail -n1)" in
		ok) reads=$((reads + 1)) ;;
		errno=*) denied=$((denied + 1)) ;;
		*) other=$((other + 1)) ;;
		esac
	done
}
# the weak jail first: the same loop against masks alone must be able to read it
count_reads 20 -b agentjail-testbuild -e AGENTJAIL_TEST_NO_DENY_READ=1
diag "mask only: read $reads, denied $denied, other $other"
ok $([ "$reads" -gt 0 ] && echo 0 || echo 1) "root: with masks alone the rewritten file is readable (the test can fail)"
count_reads 40
kill "$churn" 2>/dev/null
wait "$churn" 2>/dev/null
diag "40 runs while $secret is renamed over in a loop: read $reads, denied $denied, other $other (bwrap losing a race with the rename fails closed: 125)"
is "$reads" 0 "root: a root-only /etc file rewritten by rename is never readable in the jail"
ok $([ "$denied" -ge 20 ] && echo 0 || echo 1) "root: … and most runs got as far as trying (denied $denied of 40)"
rm -f "$secret" "$secret+"
