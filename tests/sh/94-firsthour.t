#!/usr/bin/env bash
# A new user's first hour, second pass (issue 26, items 6-22): what the command line prints when
# a user slips, as root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	# --- item 6: `shim remove` with no name removes every agent's shim ----------------------
	sd=$HOMEDIR/shims-$who
	aj_run "$who" -- shim install --dir "$sd" codex gemini pi opencode
	rc_is 0 "$who: shim install of four agents"
	aj_run "$who" -- shim remove --dir "$sd"
	rc_is 0 "$who: shim remove with no name"
	left=$(ls -A "$sd" 2>/dev/null)
	is "$left" "" "$who: … removes all four shims (claude's was not among them)"
	is "$(grep -c '^removed: ' <<<"$OUT")" 4 "$who: … and says so for each"
done
aj_skip_missing_whos "the first hour's stumbles"
done_testing
