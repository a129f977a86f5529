#!/usr/bin/env bash
# The command line as a new user meets it (issue 16): every command's --help, the wording of
# usage errors.
. "$(dirname "$0")/lib.sh"
aj_setup

# the commands of src/main.c's table (the __internal ones are not the user's)
mapfile -t CMDS < <(sed -n '/^} commands\[\] = {/,/^};/p' "$AJ_SRC/src/main.c" |
	grep -o '{"[a-z][a-z_-]*"' | tr -d '{"')
check "the command table of src/main.c is found" test "${#CMDS[@]}" -gt 10

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	# --- every command: --help prints usage, options and an example to stdout, exits 0 -------
	for c in "${CMDS[@]}"; do
		for h in --help -h; do
			aj_run "$who" -- "$c" "$h"
			rc_is 0 "$who: $c $h exits 0"
			like "$OUT" "^usage: " "$who: $c $h prints its usage to stdout"
			like "$OUT" "agentjail $c( |$)" "$who: $c $h names the command"
			like "$OUT" 'example' "$who: $c $h shows an example"
			is "$ERR" "" "$who: $c $h prints nothing on stderr"
		done
	done
done
done_testing
