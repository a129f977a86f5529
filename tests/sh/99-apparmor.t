#!/usr/bin/env bash
# Ubuntu's AppArmor (issue 28 item 3): agentjail's profile (contrib/apparmor/agentjail.in) grants
# `userns` to the installed binary; apparmor_parser parses it without loading (-Q -K: this
# kernel need not have AppArmor); `make install` puts it in DESTDIR/etc/apparmor.d when asked
# (APPARMOR=1) or where the system's parser accepts it (auto), `make uninstall` removes it;
# a user's install (PREFIX=~/.local) on an AppArmor 4 host (a stand-in parser) writes no profile
# and says the command as root, and still succeeds;
# doctor reads kernel.apparmor_restrict_unprivileged_userns and the loaded profiles (simulated
# through the test build's AGENTJAIL_TEST_PROCFS) and names what is missing with the fix.
. "$(dirname "$0")/lib.sh"
aj_setup

prof=$AJ_TMP/agentjail.aa
"$AJ_SRC/scripts/apparmor.sh" render /usr/local/bin/agentjail >"$prof"
ok $? "the profile renders for an installed binary"
grep -q '^profile agentjail /usr/local/bin/agentjail flags=(unconfined) {$' "$prof"
ok $? "… attached to that binary, by name agentjail"
grep -q '^  userns,$' "$prof"
ok $? "… granting userns"

if ! command -v apparmor_parser >/dev/null 2>&1; then
	skip "apparmor_parser parses the profile" "apparmor is not installed (scripts/deps.sh --test installs it)"
else
	ver=$(apparmor_parser --version 2>/dev/null | head -n1)
	printf 'abi <abi/4.0>,\nprofile t flags=(unconfined) {\n  userns,\n}\n' >"$AJ_TMP/probe.aa"
	if apparmor_parser -Q -K "$AJ_TMP/probe.aa" >/dev/null 2>&1; then
		out=$(apparmor_parser -Q -K "$prof" 2>&1)
		ok $? "$ver parses the profile (-Q: not loaded)" || diag "$out"
	else
		# before AppArmor 4.0 the parser knows neither abi 4.0 nor the userns rule: the rest
		# of the profile is checked, the rule itself cannot be here
		sed -e 's|abi <abi/4.0>,|abi <abi/3.0>,|' -e '/^  userns,$/d' "$prof" >"$AJ_TMP/old.aa"
		out=$(apparmor_parser -Q -K "$AJ_TMP/old.aa" 2>&1)
		ok $? "$ver parses the profile but for its userns rule and abi 4.0 (-Q: not loaded)" || diag "$out"
		skip "apparmor_parser parses the userns rule" "$ver predates it (AppArmor 4.0; Ubuntu 24.04 ships 4.0.1)"
	fi
fi

if command -v make >/dev/null 2>&1; then
	dest=$AJ_TMP/dest
	mk() { make -s --no-print-directory -C "$AJ_SRC" SAN="${AJ_SAN:-}" DESTDIR="$dest" PREFIX=/usr/local "$@"; }
	out=$(mk install APPARMOR=1 2>&1)
	ok $? "make install APPARMOR=1 succeeds" || diag "$out"
	cmp -s "$dest/etc/apparmor.d/agentjail" "$prof"
	ok $? "… and installs the profile at DESTDIR/etc/apparmor.d/agentjail"
	like "$out" 'installed the AppArmor profile .*/etc/apparmor.d/agentjail \(userns for /usr/local/bin/agentjail\)' "… and says so"
	out=$(mk uninstall 2>&1)
	[ ! -e "$dest/etc/apparmor.d/agentjail" ] && [ ! -e "$dest/etc" ]
	ok $? "make uninstall removes it (and the directories it made)" || diag "$out"
	if [ -d /etc/apparmor.d ] && command -v apparmor_parser >/dev/null 2>&1 &&
		! apparmor_parser -Q -K "$AJ_TMP/probe.aa" >/dev/null 2>&1; then
		out=$(mk install 2>&1)
		[ ! -e "$dest/etc/apparmor.d/agentjail" ]
		ok $? "make install (auto) with $ver: no profile (its parser refuses the userns rule)"
		like "$out" "AppArmor profile not installed: .*does not accept it" "… and it says why"
		mk uninstall >/dev/null 2>&1
	fi
else
	skip "make install of the AppArmor profile" "make is not installed"
fi

# --- an install by a user (PREFIX=~/.local) where AppArmor 4 is in use: make install succeeds,
# the profile is not written (the user cannot write there), and it says how, as root ----------
if ! aj_is_root || [ -z "${AJ_USER:-}" ]; then
	skip "make install by a user leaves the AppArmor profile out, saying how" "needs root (to run it as the test user)"
elif [ ! -d /etc/apparmor.d ]; then
	skip "make install by a user leaves the AppArmor profile out, saying how" "/etc/apparmor.d does not exist (apparmor is not installed)"
else
	aj_use user
	src=$AJ_TMP/src
	mkdir -p "$src/scripts" "$src/contrib/apparmor" "$AJ_TMP/aa-etc" "$AJ_TMP/aa4"
	cp "$AJ_SRC/scripts/apparmor.sh" "$src/scripts/"
	cp "$AJ_SRC/contrib/apparmor/agentjail.in" "$src/contrib/apparmor/"
	# AppArmor 4's parser (it accepts the userns rule), standing in for Ubuntu 24.04's
	printf '#!/bin/sh\n[ "$1" = --version ] && echo "AppArmor parser version 4.0.1"\nexit 0\n' >"$AJ_TMP/aa4/apparmor_parser"
	chmod 0755 "$AJ_TMP/aa4/apparmor_parser"
	chmod -R a+rX "$src" "$AJ_TMP/aa4" "$AJ_TMP/aa-etc"
	out=$(setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups env -i PATH="$AJ_TMP/aa4:$AJ_SYS_PATH" \
		HOME="$HOMEDIR" sh "$src/scripts/apparmor.sh" install "" "$AJ_TMP/aa-etc" "$HOMEDIR/.local/bin/agentjail" auto 2>&1)
	ok $? "user: the AppArmor step of make install (PREFIX=~/.local, AppArmor 4) succeeds" || diag "$out"
	[ ! -e "$AJ_TMP/aa-etc/agentjail" ]
	ok $? "user: … writing no profile (the user cannot)"
	like "$out" "AppArmor profile not installed: $AJ_TMP/aa-etc is not writable by this user; as root: sudo .*apparmor.sh install '' $AJ_TMP/aa-etc $HOMEDIR/.local/bin/agentjail 1" \
		"user: … and it says why and the command, as root"
fi

# --- doctor: the restriction and the loaded profiles (simulated) ------------------------------
line() { printf '%s\n' "$OUT" | grep -E "^(ok|warn|fail) +$1 " | head -n1; }
fixof() { printf '%s\n' "$OUT" | grep -A1 -E "^(ok|warn|fail) +$1 " | sed -n 's/^ *fix: //p' | head -n1; }
FAKE=$AJ_TMP/fakeproc
mkdir -p "$FAKE/sys/kernel" "$FAKE/sys/user" "$FAKE/agentjail-test" "$FAKE/apparmor"
echo 1 >"$FAKE/sys/kernel/apparmor_restrict_unprivileged_userns"
echo 15000 >"$FAKE/sys/user/max_user_namespaces"
chmod -R a+rX "$FAKE"
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	printf 'unprivileged_userns (enforce)\n' >"$FAKE/apparmor/profiles"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor
	if [ "$who" = root ]; then
		like "$(line apparmor)" '^ok +apparmor +kernel.apparmor_restrict_unprivileged_userns = 1 \(root is not restricted\)' \
			"root: doctor: the restriction does not apply to root"
		continue
	fi
	like "$(line apparmor)" "^warn +apparmor +kernel.apparmor_restrict_unprivileged_userns = 1: .*agentjail's profile \(for --net allow\): not loaded; bwrap's \(for every jail\): not loaded" \
		"$who: doctor: the restriction, and neither profile loaded"
	like "$(fixof apparmor)" "make install.*/etc/apparmor.d/agentjail.*aa-enforce /etc/apparmor.d/bwrap-userns-restrict" \
		"$who: … the fix names both profiles"
	printf 'agentjail (unconfined)\nunprivileged_userns (enforce)\n' >"$FAKE/apparmor/profiles"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor
	like "$(line apparmor)" "agentjail's profile \(for --net allow\): loaded; bwrap's \(for every jail\): not loaded" \
		"$who: doctor: agentjail's profile loaded, bwrap's not"
	fix=$(fixof apparmor)
	like "$fix" "^bwrap's profile: .*aa-enforce" "$who: … the fix is bwrap's alone"
	unlike "$fix" "make install" "$who: … nothing about agentjail's"
	printf 'agentjail (unconfined)\nbwrap (enforce)\nunpriv_bwrap (enforce)\n' >"$FAKE/apparmor/profiles"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor
	like "$(line apparmor)" "^ok +apparmor +.*agentjail's profile: loaded; bwrap's: loaded" \
		"$who: doctor: both loaded is ok"
	echo 0 >"$FAKE/sys/kernel/apparmor_restrict_unprivileged_userns"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_PROCFS="$FAKE" -- doctor
	like "$(line apparmor)" "^ok +apparmor +AppArmor does not restrict user namespaces here" \
		"$who: doctor: no restriction, nothing to load"
	echo 1 >"$FAKE/sys/kernel/apparmor_restrict_unprivileged_userns"
done
aj_skip_missing_whos "doctor's AppArmor check"
done_testing
