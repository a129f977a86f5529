#!/usr/bin/env bash
# --gpg-agent (doc/design.md §4d, issue 29): the jail gets gpg-agent's restricted "extra" socket
# (found with the host's gpgconf) as its agent and the public keyring read-only, in a gpg home of
# its own; `git commit -S` works inside and the signature verifies on the host; the secret keys
# stay out of the jail: no private-keys-v1.d, `gpg --export-secret-keys` refused by the agent,
# the keyring not writable. Without the jail's own home (--workspace ~) it is refused. As root
# and as an unprivileged user; skipped (with the reason) without gnupg.
. "$(dirname "$0")/lib.sh"
aj_setup

if ! command -v gpg >/dev/null 2>&1 || ! command -v gpgconf >/dev/null 2>&1 ||
	! command -v gpg-agent >/dev/null 2>&1; then
	for who in "${AJ_WHOS[@]}"; do skip "$who: --gpg-agent" "gnupg is not installed (gnupg, gpg-agent)"; done
	aj_skip_missing_whos "--gpg-agent"
	done_testing
fi
NL=$'\n'

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	G=$HOMEDIR/.gnupg
	rm -rf "$G"
	mkdir -m 0700 "$G"
	aj_chown "$G"
	aj_host env GNUPGHOME="$G" gpg --batch --quiet --passphrase '' \
		--quick-gen-key "AJ Test $who <aj-$who@test.invalid>" ed25519 sign never 2>/dev/null ||
		bail "gpg could not make the test key"
	FPR=$(aj_host env GNUPGHOME="$G" gpg --list-secret-keys --with-colons | awk -F: '/^fpr/ {print $10; exit}')
	[ -n "$FPR" ] || bail "no fingerprint for the test key"
	aj_host git -c init.defaultBranch=main init -q "$WS"

	aj_run "$who" -e GNUPGHOME="$G" -- run --gpg-agent -- sh -c "
echo \"home=\$GNUPGHOME\"; ls -A \"\$GNUPGHOME\" | tr '\\n' ' '; echo
git -c user.name=t -c user.email=aj-$who@test.invalid -c user.signingkey=$FPR commit -q -S --allow-empty -m signed-inside 2>&1; echo \"commit=\$?\"
gpg --batch --export-secret-keys $FPR 2>&1 | grep -a -c 'BEGIN PGP\\|Forbidden\\|nothing exported'
gpg --batch --armor --export-secret-keys $FPR 2>&1 | grep -c 'PRIVATE KEY BLOCK'
ls \"\$GNUPGHOME/private-keys-v1.d\" 2>&1 | head -1
(echo x >>\"\$GNUPGHOME/pubring.kbx\") 2>&1 | head -1"
	like "$OUT" "home=$G$NL" "$who: GNUPGHOME is the jail's own gpg home"
	like "$OUT" "${NL}S\.gpg-agent pubring\.kbx trustdb\.gpg $NL" \
		"$who: … holding the agent's socket and the public keyring, nothing else"
	like "$OUT" "commit=0" "$who: git commit -S works inside"
	aj_host git -C "$WS" -c safe.directory='*' log -1 --format=%s >"$AJ_TMP/subject" 2>/dev/null
	is "$(cat "$AJ_TMP/subject")" "signed-inside" "$who: … the commit is in the workspace"
	aj_host env GNUPGHOME="$G" git -C "$WS" verify-commit HEAD >/dev/null 2>"$AJ_TMP/verify"
	ok $? "$who: … and its signature verifies on the host" || diag "$(cat "$AJ_TMP/verify")"
	like "$OUT" "${NL}0$NL" "$who: gpg --export-secret-keys gets no secret key out of the agent"
	like "$OUT" "private-keys-v1\.d'?: No such file or directory" "$who: the secret key files are not in the jail"
	like "$OUT" "(Read-only file system|Permission denied)" "$who: the public keyring is read-only"
	unlike "$ERR" "$FPR" "$who: nothing of the key's in agentjail's own output"

	aj_run "$who" -e GNUPGHOME="$G" -- run --gpg-agent --workspace "$HOMEDIR" -- true
	is "$RC" 2 "$who: --gpg-agent with the home as the workspace: refused (exit 2)"
	like "$ERR" "--gpg-agent needs the jail's own home" "$who: … saying why"
	aj_host env GNUPGHOME="$G" gpgconf --kill gpg-agent 2>/dev/null
done
aj_skip_missing_whos "--gpg-agent"
done_testing
