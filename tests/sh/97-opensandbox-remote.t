#!/usr/bin/env bash
# agentjail-remote (doc/design.md §4b, §7), as root and as an unprivileged user: agentjail is a
# static PIE without libcurl, so `run --backend opensandbox`, `resume` of a remote session and
# doctor's opensandbox check run agentjail-remote, found like the jail's init (beside agentjail,
# else PREFIX/libexec/agentjail/remote; 93-install.t) and with its checks. agentjail passes its
# environment through (the key's variable) and the key never goes into an argv. Without
# agentjail-remote the remote backend is exit 125 naming both places and nothing runs; the local
# backend does not need it. A remote binary owned by someone else or writable by group is refused;
# a jail cannot replace or plant the one a later run would use.
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/osblib.sh"

KEY=sk-osbr-$$-$RANDOM-secret
STANDIN_API_KEY=$KEY osb_start main --ping 0.5

# agentjail and its init, without agentjail-remote
alt=$AJ_TMP/alt
mkdir -m 0755 "$alt"
install -m 0755 "$AJ_BUILD/agentjail" "$AJ_BUILD/agentjail-init" "$alt/"
miss="not at $alt/agentjail-remote nor $AJ_TMP/libexec/agentjail/remote"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	mkdir -p "$HOMEDIR/.config/agentjail"
	printf 'backend = "opensandbox"\n[opensandbox]\nurl = "%s"\napi_key_env = "OSB_TEST_KEY"\n' \
		"$OSB_URL" >"$HOMEDIR/.config/agentjail/config.toml"
	aj_chown "$HOMEDIR/.config"
	aj_fresh_ws "$who"

	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c 'echo $((6 * 7)); exit 4'
	is "$RC:$OUT" "4:42" "$who: agentjail runs the command remotely through agentjail-remote (with the key from the environment)" ||
		_last_run_diag
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- resume --last --quiet
	is "$RC:$OUT" "4:42" "$who: resume of the remote session runs it again there" || _last_run_diag

	aj_run "$who" -B "$AJ_BIN/agentjail-remote" -- run --backend local -- touch "$WS/ran"
	is "$RC" 2 "$who: agentjail-remote runs no local jail (exit 2)" || _last_run_diag
	like "$ERR" "agentjail-remote runs only --backend opensandbox" "$who: … saying so"
	aj_run "$who" -B "$AJ_BIN/agentjail" -- run --backend local -- true
	aj_run "$who" -B "$AJ_BIN/agentjail-remote" -- resume --last
	is "$RC" 2 "$who: nor resumes a local session (exit 2)" || _last_run_diag
	[ ! -e "$WS/ran" ]
	ok $? "$who: … and nothing ran"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- true

	aj_run "$who" -B "$alt/agentjail" -e OSB_TEST_KEY="$KEY" -- run -- touch "$WS/ran"
	is "$RC" 125 "$who: without agentjail-remote, run --backend opensandbox exits 125" || _last_run_diag
	like "$ERR" "cannot find the remote backend \\(agentjail-remote\\): $miss" \
		"$who: … naming both places it looked"
	[ ! -e "$WS/ran" ] && [ -z "$(osb_live)" ]
	ok $? "$who: … and nothing ran, no sandbox was created"
	aj_run "$who" -B "$alt/agentjail" -e OSB_TEST_KEY="$KEY" -- resume --last
	is "$RC" 125 "$who: resume of a remote session without agentjail-remote exits 125" || _last_run_diag
	like "$ERR" "$miss" "$who: … naming both places"
	aj_run "$who" -B "$alt/agentjail" -- run --backend local -- sh -c 'echo local'
	is "$RC:$OUT" "0:local" "$who: the local backend does not need agentjail-remote" || _last_run_diag
	aj_run "$who" -B "$alt/agentjail" -e OSB_TEST_KEY="$KEY" -- doctor
	like "$OUT" "fail +opensandbox +cannot find the remote backend \\(agentjail-remote\\): $miss" \
		"$who: doctor's opensandbox check fails naming where agentjail-remote was looked for"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- doctor
	like "$OUT" "ok +opensandbox +the service at $OSB_URL answers and accepts the key" \
		"$who: with agentjail-remote, doctor's opensandbox check reaches the service" || _last_run_diag
	unlike "$OUT$ERR" "$KEY" "$who: … never showing the key"

	# agentjail installed in the workspace: a local jail cannot replace or plant the remote
	# backend a later run would give the key to
	pfx=$WS/pfx
	mkdir -p "$pfx/bin" "$pfx/libexec/agentjail"
	install -m 0755 "$AJ_BIN/agentjail" "$pfx/bin/agentjail"
	install -m 0755 "$AJ_BIN/agentjail-init" "$pfx/libexec/agentjail/init"
	install -m 0755 "$AJ_BIN/agentjail-remote" "$pfx/libexec/agentjail/remote"
	cp /bin/true "$pfx/libexec/agentjail/fake"
	aj_chown "$pfx"
	aj_run "$who" -B "$pfx/bin/agentjail" -- run --backend local -- "$P" rename \
		"$pfx/libexec/agentjail/fake" "$pfx/libexec/agentjail/remote"
	probe_denied "$who: agentjail installed in the workspace: its remote backend cannot be replaced inside"
	cmp -s "$pfx/libexec/agentjail/remote" "$AJ_BIN/agentjail-remote"
	ok $? "$who: … and is unchanged afterwards"
	aj_run "$who" -B "$pfx/bin/agentjail" -- run --backend local -- "$P" write "$pfx/bin/agentjail-remote" x
	[ ! -e "$pfx/bin/agentjail-remote" ]
	ok $? "$who: an agentjail-remote planted beside it (the first place looked at) does not stay" ||
		_last_run_diag
	like "$ERR" "pfx/bin/agentjail-remote" "$who: … and the run says so" || _last_run_diag
done
aj_skip_missing_whos "the remote backend through agentjail-remote"

# the same checks as the jail's init: owned by root or agentjail's owner, writable by no one else
if aj_is_root && [ -n "${AJ_USER:-}" ]; then
	aj_use root
	install -m 0755 "$AJ_BUILD/agentjail-remote" "$alt/agentjail-remote"
	chown "$AJ_USER" "$alt/agentjail-remote"
	aj_run root -B "$alt/agentjail" -e OSB_TEST_KEY="$KEY" -- run -- touch "$WS/ran"
	is "$RC" 125 "an agentjail-remote owned by another user is refused (exit 125)"
	like "$ERR" "the remote backend is owned by uid [0-9]+, neither root nor agentjail's owner \\(uid 0\\): refusing to run it with the service's API key" \
		"… saying why" || _last_run_diag
	chown root "$alt/agentjail-remote"
	chmod g+w "$alt/agentjail-remote"
	aj_run root -B "$alt/agentjail" -e OSB_TEST_KEY="$KEY" -- run -- touch "$WS/ran"
	is "$RC" 125 "a group-writable agentjail-remote is refused (exit 125)"
	like "$ERR" "writable by group or others" "… saying why" || _last_run_diag
	[ ! -e "$WS/ran" ]
	ok $? "… and nothing ran"
else
	skip "a foreign or group-writable agentjail-remote is refused" "needs root and the test user"
fi
done_testing
