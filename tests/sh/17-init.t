#!/usr/bin/env bash
# The jail's init is agentjail-init (doc/design.md §2, §7), not agentjail: a small static
# binary, found beside agentjail, bound read-only at /run/agentjail/init as PID 1. Without it
# (or with one anybody may have rewritten) agentjail runs no jail at all and says why; agentjail
# itself no longer answers `__init`. agentjail is bound into a jail only for verify's battery.
# A jail cannot rewrite or plant the init a later run would use.
. "$(dirname "$0")/lib.sh"
aj_setup

INIT=$AJ_BIN/agentjail-init

# --- the binary itself --------------------------------------------------------------------
if [ "${AJ_SAN:-}" = 1 ]; then
	skip "agentjail-init is linked statically" "a sanitizer build links it dynamically"
elif command -v readelf >/dev/null 2>&1; then
	hdr=$(readelf -lW "$INIT" 2>&1)
	unlike "$hdr" 'INTERP|Requesting program interpreter' \
		"agentjail-init is linked statically (no program interpreter)"
else
	skip "agentjail-init is linked statically" "readelf is not installed"
fi
"$INIT" >/dev/null 2>"$AJ_TMP/usage.err"
is "$?" 2 "agentjail-init without a verb is a usage error (exit 2)"
like "$(cat "$AJ_TMP/usage.err")" '__init .*__connect' "… naming its two verbs"

# Outside a jail it refuses to run anything: capabilities (root) or no_new_privs (a user).
rm -f "$AJ_TMP/ran"
"$INIT" __init -- touch "$AJ_TMP/ran" 2>"$AJ_TMP/init.err"
rc=$?
is "$rc" 125 "agentjail-init __init outside a jail refuses (exit 125)"
like "$(cat "$AJ_TMP/init.err")" 'capabilities are not empty|no_new_privs is not set' \
	"… because the jail's conditions do not hold"
[ ! -e "$AJ_TMP/ran" ]
ok $? "… and the command did not run"

# agentjail no longer is an init: no fallback to `agentjail __init`
"$AJ_BIN/agentjail" __init -- true >/dev/null 2>"$AJ_TMP/old.err"
is "$?" 2 "agentjail __init is an unknown command (exit 2)"
like "$(cat "$AJ_TMP/old.err")" 'unknown command: __init' "… said as such"

init_size=$(stat -c %s "$INIT")
for who in "${AJ_WHOS[@]}"; do
	# --- a run: PID 1 is agentjail-init, read-only, and agentjail itself is not there ------
	aj_run "$who" -- run -- sh -c 'tr "\0" " " </proc/1/cmdline; echo; stat -c "%s %a" /run/agentjail/init;
		[ -e /run/agentjail/agentjail ] && echo self-bound || echo no-self'
	is "$RC" 0 "$who: a run works with agentjail-init as PID 1" || _last_run_diag
	like "$OUT" $'^/run/agentjail/init __init --control 7 ' "$who: PID 1 is /run/agentjail/init __init"
	like "$OUT" $'\n'"$init_size 755"$'\n' "$who: /run/agentjail/init is agentjail-init ($init_size bytes), not agentjail"
	like "$OUT" $'\nno-self$' "$who: agentjail itself is not bound into a run"
	aj_run "$who" -- run -- "$P" write /run/agentjail/init x
	probe_denied "$who: /run/agentjail/init cannot be written from inside"

	# --- the command starts with every signal at its default, even when init was started
	# ignoring some (it resets only those: its SigIgn; a caught one exec resets itself). Run
	# directly, under the conditions a jail gives it: no capability in any set, no_new_privs.
	ign=$(aj_host unshare -r setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all \
		--bounding-set=-all bash -c "trap '' HUP INT PIPE USR2 TERM
			grep SigIgn /proc/self/status
			exec $(printf %q "$INIT") __init -- grep SigIgn /proc/self/status" 2>&1)
	if [[ $ign == *"Operation not permitted"* || $ign == *"unshare failed"* ]]; then
		skip "$who: a command starts with no signal ignored" "no user namespace here: $ign"
	elif [[ $ign =~ ^SigIgn:.([0-9a-f]{16})$'\n'SigIgn:.([0-9a-f]{16})$ ]]; then
		# signals 1-31: 32 and 33 are the C library's own (musl's sigaction refuses them, and
		# the suite's parent may leave them ignored), not the command's to see
		is "$(printf %x $((0x${BASH_REMATCH[1]} & 0x7fffffff)))" 5803 \
			"$who: init started ignoring HUP INT PIPE USR2 TERM"
		is "$(printf %x $((0x${BASH_REMATCH[2]} & 0x7fffffff)))" 0 \
			"$who: … the command it runs starts ignoring none of signals 1-31"
	else
		ok 1 "$who: init started ignoring signals ran the command" || diag "$ign"
	fi

	# --- agentjail without its init: exit 125, the places looked at, nothing run -----------
	lone=$AJ_TMP/$who/lone
	mkdir -p "$lone" && install -m 0755 "$AJ_BIN/agentjail" "$lone/agentjail" && aj_chown "$lone"
	aj_run "$who" -B "$lone/agentjail" -- run -- touch "$WS/ran-without-init"
	is "$RC" 125 "$who: agentjail without agentjail-init beside it exits 125" || _last_run_diag
	like "$ERR" "cannot find the jail's init \\(agentjail-init\\): not at $lone/agentjail-init nor $AJ_TMP/$who/libexec/agentjail/init" \
		"$who: … naming both places it looked" || _last_run_diag
	like "$ERR" 'runs no jail without it' "$who: … and that there is no fallback"
	[ ! -e "$WS/ran-without-init" ]
	ok $? "$who: … and the command did not run"

	# --- an init that others may rewrite is refused -----------------------------------------
	install -m 0775 "$INIT" "$lone/agentjail-init" && aj_chown "$lone"
	aj_run "$who" -B "$lone/agentjail" -- run -- touch "$WS/ran-with-gw-init"
	is "$RC" 125 "$who: a group-writable agentjail-init is refused (exit 125)" || _last_run_diag
	like "$ERR" "writable by group or others.*chmod go-w $lone/agentjail-init" \
		"$who: … with the chmod that fixes it"
	[ ! -e "$WS/ran-with-gw-init" ]
	ok $? "$who: … and the command did not run"
	chmod 0755 "$lone/agentjail-init"
	aj_run "$who" -B "$lone/agentjail" -- run -- true
	is "$RC" 0 "$who: with agentjail-init beside it, the copy runs a jail" || _last_run_diag

	# --- verify binds agentjail for its battery, beside the init ----------------------------
	aj_run "$who" -- verify --dry-run
	like "$OUT" $'\n--ro-bind-fd [0-9]+ /run/agentjail/agentjail ' \
		"$who: verify binds agentjail at /run/agentjail/agentjail" || _last_run_diag
	like "$OUT" $'\n-- /run/agentjail/init __init .* -- /run/agentjail/agentjail __probe ' \
		"$who: … and runs it under the init"

	# --- agentjail in the writable view: the places of its init are as safe as itself ------
	# (a jail that rewrote or planted one would choose the next jail's PID 1)
	aj_fresh_ws "$who"
	pfx=$WS/pfx
	mkdir -p "$pfx/bin" "$pfx/libexec/agentjail"
	install -m 0755 "$AJ_BIN/agentjail" "$pfx/bin/agentjail"
	install -m 0755 "$INIT" "$pfx/libexec/agentjail/init"
	cp /bin/true "$pfx/libexec/agentjail/fake"
	aj_chown "$pfx"
	# (written in place it is busy anyway, being PID 1: replaced by a rename it is not)
	aj_run "$who" -B "$pfx/bin/agentjail" -- run -- "$P" rename "$pfx/libexec/agentjail/fake" "$pfx/libexec/agentjail/init"
	probe_denied "$who: agentjail installed in the workspace: its init cannot be replaced inside"
	cmp -s "$pfx/libexec/agentjail/init" "$INIT"
	ok $? "$who: … and is unchanged afterwards"
	aj_run "$who" -B "$pfx/bin/agentjail" -- run -- "$P" write "$pfx/bin/agentjail-init" x
	[ ! -e "$pfx/bin/agentjail-init" ]
	ok $? "$who: an agentjail-init planted beside it (the first place looked at) does not stay" ||
		_last_run_diag
	like "$ERR" "pfx/bin/agentjail-init" "$who: … and the run says so" || _last_run_diag
done
aj_skip_missing_whos "agentjail-init as the jail's PID 1"
done_testing
