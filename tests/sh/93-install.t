#!/usr/bin/env bash
# `make install DESTDIR=… PREFIX=/usr/local` gives a tree with the binary (which runs a jail, as
# root and as the unprivileged user, with the jail's init from PREFIX/libexec/agentjail/init and
# none without it), the remote backend at PREFIX/libexec/agentjail/remote (which the installed
# binary runs for --backend opensandbox), the TLS inspector at PREFIX/libexec/agentjail/tls
# (which it runs for a run that adds a secret at the proxy), the manual pages and the shell
# completions;
# `make uninstall` with the same DESTDIR removes every file it installed.
. "$(dirname "$0")/lib.sh"
aj_setup

if ! command -v make >/dev/null 2>&1; then
	skip "make install" "make is not installed"
	done_testing
fi
dest=$AJ_TMP/dest
mk() { make -s --no-print-directory -C "$AJ_SRC" SAN="${AJ_SAN:-}" DESTDIR="$dest" PREFIX=/usr/local "$@"; }

out=$(mk install 2>&1)
ok $? "make install DESTDIR=… PREFIX=/usr/local succeeds" || diag "$out"
bin=$dest/usr/local/bin/agentjail
[ -x "$bin" ]
ok $? "the binary is installed at PREFIX/bin/agentjail"
init=$dest/usr/local/libexec/agentjail/init
[ -f "$init" ] && [ "$(stat -c %a "$init")" = 755 ]
ok $? "the jail's init is installed at PREFIX/libexec/agentjail/init, mode 0755"
cmp -s "$init" "$AJ_BUILD/agentjail-init"
ok $? "… and it is agentjail-init"
remote=$dest/usr/local/libexec/agentjail/remote
[ -f "$remote" ] && [ "$(stat -c %a "$remote")" = 755 ]
ok $? "the remote backend is installed at PREFIX/libexec/agentjail/remote, mode 0755"
cmp -s "$remote" "$AJ_BUILD/agentjail-remote"
ok $? "… and it is agentjail-remote"
tls=$dest/usr/local/libexec/agentjail/tls
[ -f "$tls" ] && [ "$(stat -c %a "$tls")" = 755 ]
ok $? "the TLS inspector is installed at PREFIX/libexec/agentjail/tls, mode 0755"
cmp -s "$tls" "$AJ_BUILD/agentjail-tls"
ok $? "… and it is agentjail-tls"
for f in share/man/man1/agentjail.1 share/man/man5/agentjail.toml.5 \
	share/bash-completion/completions/agentjail share/zsh/site-functions/_agentjail \
	share/fish/vendor_completions.d/agentjail.fish; do
	if command -v scdoc >/dev/null 2>&1 || [ "${f#share/man}" = "$f" ]; then
		[ -f "$dest/usr/local/$f" ]
		ok $? "installed: PREFIX/$f"
	else
		skip "installed: PREFIX/$f" "scdoc is not installed"
	fi
done

chmod -R a+rX "$dest"
init_size=$(stat -c %s "$init")
for who in "${AJ_WHOS[@]}"; do
	aj_run "$who" -B "$bin" -- run -- true
	is "$RC" 0 "$who: the installed binary runs a jail (run -- true)"
	aj_run "$who" -B "$bin" -- run -- stat -c %s /run/agentjail/init
	is "$OUT" "$init_size" "$who: … with the installed PREFIX/libexec/agentjail/init as its init" ||
		_last_run_diag
	aj_run "$who" -B "$bin" -- run --net allow -- /run/agentjail/init __connect denied.example 22
	is "$RC" 1 "$who: … whose __connect answers in a --net allow jail (refused: exit 1)" ||
		_last_run_diag
done
aj_skip_missing_whos "the installed binary runs a jail"
# without its init, the installed binary runs nothing and says where it looked
mv "$init" "$init.away"
aj_run "${AJ_WHOS[0]}" -B "$bin" -- run -- touch "$WS/ran"
is "$RC" 125 "the installed binary without libexec/agentjail/init exits 125" || _last_run_diag
like "$ERR" "not at $dest/usr/local/bin/agentjail-init nor $init" "… naming both places it looked"
[ ! -e "$WS/ran" ]
ok $? "… and ran nothing"
mv "$init.away" "$init"
# the installed binary runs the installed remote backend: with no [opensandbox] url, its error;
# without it, the error names both places it looked
aj_run "${AJ_WHOS[0]}" -B "$bin" -- run --backend opensandbox -- touch "$WS/ran"
like "$ERR" "the opensandbox backend needs the service's URL" "the installed binary runs PREFIX/libexec/agentjail/remote for --backend opensandbox" ||
	_last_run_diag
mv "$remote" "$remote.away"
aj_run "${AJ_WHOS[0]}" -B "$bin" -- run --backend opensandbox -- touch "$WS/ran"
is "$RC" 125 "the installed binary without libexec/agentjail/remote: --backend opensandbox exits 125"
like "$ERR" "not at $dest/usr/local/bin/agentjail-remote nor $remote" "… naming both places it looked"
[ ! -e "$WS/ran" ]
ok $? "… and ran nothing"
mv "$remote.away" "$remote"
# the installed binary runs the installed TLS inspector for a run that adds a secret (its CA
# made in the state directory); without it, nothing runs and the error names both places
aj_run "${AJ_WHOS[0]}" -B "$bin" -e ANTHROPIC_API_KEY=sk-test -- run --net allow \
	--env ANTHROPIC_API_KEY -- sh -c 'echo "$ANTHROPIC_API_KEY"'
is "$OUT" "agentjail-placeholder-ANTHROPIC_API_KEY" "the installed binary runs PREFIX/libexec/agentjail/tls for a secret" ||
	_last_run_diag
[ -f "$STATE/ca/ca.pem" ] && [ "$(stat -c %a "$STATE/ca/ca.key")" = 600 ]
ok $? "… which made the CA in the state directory, its key 0600"
mv "$tls" "$tls.away"
aj_run "${AJ_WHOS[0]}" -B "$bin" -e ANTHROPIC_API_KEY=sk-test -- run --net allow \
	--env ANTHROPIC_API_KEY -- touch "$WS/ran"
is "$RC" 125 "the installed binary without libexec/agentjail/tls: a run with a secret exits 125"
like "$ERR" "not at $dest/usr/local/bin/agentjail-tls nor $tls" "… naming both places it looked"
[ ! -e "$WS/ran" ]
ok $? "… and ran nothing"
mv "$tls.away" "$tls"
aj_use root
out=$(env HOME="$HOMEDIR" AGENTJAIL_STATE_DIR="$STATE" "$bin" shim install --dir "$AJ_TMP/shims" claude 2>&1)
ok $? "the installed binary installs a shim" || diag "$out"
is "$(readlink "$AJ_TMP/shims/claude")" "$bin" "the shim points at the installed binary"

out=$(mk uninstall 2>&1)
ok $? "make uninstall DESTDIR=… succeeds" || diag "$out"
left=$(find "$dest" -mindepth 1 ! -type d 2>/dev/null)
is "$left" "" "make uninstall leaves no file behind"
left=$(find "$dest" -mindepth 1 2>/dev/null)
is "$left" "" "nor a directory it created"
out=$(mk uninstall 2>&1)
ok $? "a second make uninstall is harmless" || diag "$out"
# ./quickstart install: installs under PREFIX (here a temporary one), says where and that its
# bin directory is not on PATH, and runs the installed binary
qs=$AJ_TMP/qs
out=$(cd "$AJ_TMP" && PREFIX=$qs PATH=$AJ_SYS_PATH "$AJ_SRC/quickstart" install 2>&1)
ok $? "./quickstart install succeeds" || diag "$out"
like "$out" "installed $qs/bin/agentjail" "it says where agentjail went"
like "$out" "$qs/bin is not on PATH" "it says that the bin directory is not on PATH"
is "$(head -n1 <<<"$out")" "agentjail: building agentjail (about a minute the first time)" \
	"its first line says it is building (issue 26: 40-90 s of silence)"
mkdir -p "$AJ_TMP/other-bin"
printf '#!/bin/sh\necho other\n' >"$AJ_TMP/other-bin/agentjail"
chmod 0755 "$AJ_TMP/other-bin/agentjail"
out=$(cd "$AJ_TMP" && PREFIX=$qs PATH=$AJ_TMP/other-bin:$qs/bin:$AJ_SYS_PATH "$AJ_SRC/quickstart" install 2>&1)
like "$out" "warning: \`agentjail\` on PATH is $AJ_TMP/other-bin/agentjail, not $qs/bin/agentjail" \
	"another agentjail earlier on PATH: a warning"
like "$out" $'\n  export PATH="'"$qs/bin"':\$PATH"(\n|$)' "… with the export PATH= line to copy"
out=$(cd "$AJ_TMP" && PREFIX=$qs PATH=$qs/bin:$AJ_SYS_PATH "$AJ_SRC/quickstart" install 2>&1)
like "$out" "$qs/bin is on PATH" "and when it is"
"$qs/bin/agentjail" --version >/dev/null 2>&1
ok $? "the installed agentjail runs"
out=$(mk uninstall PREFIX="$qs" DESTDIR= 2>&1)
ok $? "make uninstall PREFIX=… removes it" || diag "$out"
left=$(find "$qs" -mindepth 1 ! -type d 2>/dev/null)
is "$left" "" "no file is left"
done_testing
