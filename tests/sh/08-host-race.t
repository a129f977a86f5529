#!/usr/bin/env bash
# As root, a root-only file the plan masks that the host removes (or replaces) while bwrap mounts
# over it (a useradd rewriting /etc/gshadow, a package removing its root-only file): bwrap cannot
# bind /dev/null there and nothing runs. agentjail plans the jail again and builds it once more,
# saying so, in the same session, instead of failing with 125. A bwrap wrapper removes the file
# between the plan and bwrap's mounts, the window the host hits by chance. Alone in make check
# (CHECK_SEQ): it changes /etc, which every root jail masks.
. "$(dirname "$0")/lib.sh"
aj_setup

if ! aj_is_root; then
	plan 1
	skip "a masked root-only file removed while bwrap mounts: built again" "not running as root"
	exit 0
fi
plan 7
gone=/etc/agentjail-gone-$$
printf 'secret\n' >"$gone" && chmod 600 "$gone"
BWDIR=$(mktemp -d /run/agentjail-test-race.XXXXXX)
AJ_CLEAN+=("$BWDIR")
chmod 0755 "$BWDIR"
trap 'rm -f "$gone"; aj_cleanup' EXIT
cat >"$BWDIR/bwrap" <<EOF2
#!/bin/sh
# the first bwrap of the run only: the file goes after the plan saw it
if [ ! -e "$BWDIR/once" ]; then : >"$BWDIR/once"; rm -f "$gone"; fi
exec /usr/bin/bwrap "\$@"
EOF2
chmod 0755 "$BWDIR/bwrap"

aj_use root
aj_run root -- run --dry-run -- true
like "$OUT" "$gone" "the plan masks the root-only file"
aj_run root -- sessions --json
before=$(py 'len(d)')
aj_run root -e AGENTJAIL_BWRAP="$BWDIR/bwrap" -- run -- echo ran
rc_is 0 "removed while bwrap mounted over it: the run still runs"
like "$OUT" '^ran$' "… the command ran once"
like "$ERR" "the host replaced or removed $gone, which the jail masks, while bwrap mounted over it \\(a useradd, a package\\): building the jail again" \
	"… saying why the jail was built again"
[ -e "$BWDIR/once" ] && [ ! -e "$gone" ]
ok $? "… the wrapper did remove it after the plan"
aj_run root -- sessions --json
is "$(py 'len(d)')" "$((before + 1))" "… one session for both attempts"
is "$(py '(d[0]["status"], d[0]["exit_status"])')" "('exited', 0)" "… recorded as it ended"
done_testing
