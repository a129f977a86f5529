#!/usr/bin/env bash
# Configuration files (doc/design.md §8), as root and as an unprivileged user: the user's
# config.toml changes the default policy (seen in `run --dry-run`'s policy line); the project's
# .agentjail.toml narrows it; a project widening it (rw = ["../extra"], net = "on") is refused until
# `agentjail trust`, accepted after, refused again after an edit; AGENTJAIL_NET overrides the
# files and a flag overrides everything; `agentjail config` names each value's origin; a
# config file writable by its group, a syntax error, a project setting `bwrap` are refused.
. "$(dirname "$0")/lib.sh"
aj_setup

# the policy line of `run --dry-run true` as WHO (extra aj_run options before --)
dry() {
	local who=$1; shift
	aj_run "$who" "$@" -- run --dry-run true
	POL=$(printf '%s\n' "$OUT" | sed -n 's/^# policy: //p')
}

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	CFG=$HOMEDIR/.config/agentjail/config.toml
	aj_host mkdir -p "$HOMEDIR/.config/agentjail"
	aj_host chmod 0755 "$HOMEDIR/.config" "$HOMEDIR/.config/agentjail"

	dry "$who"
	like "$POL" '"fs":"workspace-write","net":"off"' "$who: without a config file, the built-in defaults"

	# --- the user's file
	aj_host sh -c "printf '%s\n' '[policy]' 'fs = \"read-only\"' 'net = \"allow\"' \
		'allow_domains = [\"example.com\"]' >'$CFG'"
	dry "$who"
	rc_is 0 "$who: run --dry-run with a user config"
	like "$POL" '"fs":"read-only","net":"allow"' "$who: the user config changes the default policy"
	like "$POL" '"allow_domains":\["example.com"\]' "$who: its allow_domains are the allow-list"

	# --- the project narrows
	aj_host sh -c "printf '%s\n' '[policy]' 'net = \"off\"' 'hide = [\"secret\"]' >'$WS/.agentjail.toml'"
	dry "$who"
	rc_is 0 "$who: a narrowing project file is accepted untrusted"
	like "$POL" '"net":"off"' "$who: the project file turns the network off"
	like "$POL" "\"hide\":\\[\"$WS/secret\"\\]" "$who: and hides a path of the workspace"

	# --- the project widens: refused until trusted
	aj_host sh -c "printf '%s\n' '[policy]' 'rw = [\"../extra\"]' 'net = \"on\"' >'$WS/.agentjail.toml'"
	dry "$who"
	rc_is 2 "$who: a project adding rw = [\"../extra\"] and net = \"on\" is refused untrusted"
	like "$ERR" "\\.agentjail\\.toml:2: \`rw\` entry \"\.\./extra\"" "$who: the refusal names rw at file:line"
	like "$ERR" "\\.agentjail\\.toml:3: \`net = on\`" "$who: and net at file:line"
	like "$ERR" "agentjail trust $WS" "$who: and the trust command"
	unlike "$OUT" '# policy' "$who: nothing planned"

	aj_run "$who" -- trust
	rc_is 0 "$who: agentjail trust"
	like "$OUT" "trusted $WS/.agentjail.toml" "$who: trust names the file"
	aj_use "$who"
	st=$(stat -c '%a %U' "$STATE/trusted" 2>&1)
	is "$st" "600 $RUN_NAME" "$who: the trust store is 0600, the user's"
	dry "$who"
	rc_is 0 "$who: the trusted project is accepted"
	like "$POL" '"net":"on"' "$who: its net = on applies"
	like "$POL" "\"rw\":\\[\"$EXTRA\"\\]" "$who: its rw = [\"../extra\"] applies"

	aj_run "$who" -- trust --list
	like "$OUT" "$WS/.agentjail.toml"$'\t'"[0-9a-f]{12}"$'\t'"trusted" "$who: trust --list shows it"

	# --- the environment and the flags
	dry "$who" -e AGENTJAIL_NET=off
	like "$POL" '"net":"off"' "$who: AGENTJAIL_NET=off overrides the files"
	dry "$who" -e AGENTJAIL_NET=off -e AGENTJAIL_FS=read-only
	aj_run "$who" -e AGENTJAIL_NET=off -e AGENTJAIL_FS=read-only -- run --dry-run --net on --fs rw true
	POL=$(printf '%s\n' "$OUT" | sed -n 's/^# policy: //p')
	like "$POL" '"fs":"workspace-write","net":"on"' "$who: a flag overrides the files and the environment"

	# --- config shows the origins
	aj_run "$who" -e AGENTJAIL_NET=off -- config
	rc_is 0 "$who: agentjail config"
	like "$OUT" "policy.fs = read-only"$'\t'"# $CFG:2" "$who: config: fs from the user file, FILE:LINE"
	like "$OUT" "policy.net = off"$'\t'"# env AGENTJAIL_NET" "$who: config: net from the environment"
	like "$OUT" "policy.rw \\+= \\.\\./extra"$'\t'"# $WS/.agentjail.toml:2" "$who: config: rw from the project"
	like "$OUT" "policy.pids = 4096"$'\t'"# default" "$who: config: a default says so"
	aj_run "$who" -- config --json
	like "$OUT" "\"origin\": \"$CFG:2\"" "$who: config --json gives the origins"

	# --- an edit: untrusted again
	aj_host sh -c "printf '%s\n' '# edited' >>'$WS/.agentjail.toml'"
	dry "$who"
	rc_is 2 "$who: the project file changed since trust: refused again"
	like "$ERR" 'not trusted' "$who: it says the project is not trusted"
	aj_run "$who" -- untrust
	like "$OUT" "untrusted $WS/.agentjail.toml" "$who: untrust forgets it"

	# --- never from a project, trusted or not
	aj_host sh -c "printf '%s\n' 'bwrap = \"/tmp/bwrap\"' >'$WS/.agentjail.toml'"
	aj_run "$who" -- trust
	rc_is 2 "$who: trust refuses a project file setting bwrap"
	dry "$who"
	rc_is 2 "$who: run refuses a project file setting bwrap"
	like "$ERR" '\.agentjail\.toml:1:1: `bwrap` may never be set' "$who: naming it at file:line:col"
	aj_host rm -f "$WS/.agentjail.toml"

	# --- broken or unsafe user files are errors, never skipped
	aj_host sh -c "printf '%s\n' '[policy]' 'allow_domain = [\"a.com\"]' >'$CFG'"
	dry "$who"
	rc_is 2 "$who: an unknown key is an error"
	like "$ERR" "$CFG:2:1: unknown key \`allow_domain\` in \\[policy\\] \\(did you mean \`allow_domains\`\\?\\)" \
		"$who: at file:line:col with a suggestion"
	aj_host sh -c "printf '%s\n' '[policy]' 'net = ' >'$CFG'"
	dry "$who"
	rc_is 2 "$who: a syntax error is an error"
	like "$ERR" "$CFG:2:" "$who: naming file:line:col"
	aj_run "$who" -- doctor
	like "$OUT" "fail +config +$CFG:2:" "$who: doctor fails its config check with file:line:col"

	aj_host sh -c "printf '%s\n' '[policy]' 'net = \"on\"' >'$CFG'"
	aj_host chmod 0664 "$CFG"
	dry "$who"
	rc_is 2 "$who: a group-writable config file is refused"
	like "$ERR" "refusing a configuration file writable by its group: $CFG" "$who: naming the file"
	like "$ERR" "chmod go-w $CFG" "$who: and the fix"
	aj_host chmod 0644 "$CFG"
	aj_run "$who" -- doctor
	like "$OUT" "ok +config +config files: .*$CFG \\(read\\)" "$who: doctor: the file read"
	aj_host rm -f "$CFG"
done
aj_skip_missing_whos "configuration files"

done_testing
