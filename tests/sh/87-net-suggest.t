#!/bin/bash
# Denials become rules (doc/design.md §8, issue 25): `agentjail log ID --suggest` prints the
# allow_domains lines that would allow what a session's proxy denied — [policy] for a run,
# [agent.NAME] for an agent — one per host (and port) with how often, leaving out what no allow
# entry changes (a deny entry, a name that was allowed but refused for another reason); the
# lines are TOML agentjail's parser takes. --apply adds them to the user's configuration file
# only after a yes at the terminal (--yes without asking), keeping every other byte of it, and
# never writes a project's .agentjail.toml, not even through a symlink. The proxy's events are
# injected (the test build's AGENTJAIL_TEST_NET_EVENTS, as in 81-netlog.t). As root and as an
# unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

DUMP=$AJ_BUILD/tests/helpers/tomldump
[ -x "$DUMP" ] || bail "build $DUMP first (make t builds it)"
EV=$AJ_TMP/events.jsonl
{
	for i in 1 2; do
		echo '{"proto":"connect","host":"evil.example","port":443,"allowed":false,"rule":"evil.example:443 is not on the allow list"}'
	done
	echo '{"proto":"http","host":"evil.example","port":80,"allowed":false,"rule":"not on the allow list"}'
	echo '{"proto":"dns","host":"evil.example","port":0,"allowed":false,"rule":"not on the allow list"}'
	echo '{"proto":"connect","host":"other.example","port":8443,"allowed":false,"rule":"not on the allow list"}'
	echo '{"proto":"connect","host":"bad.example","port":443,"allowed":false,"rule":"refused by --deny-domain bad.example"}'
	echo '{"proto":"connect","host":"api.example.com","port":443,"allowed":false,"rule":"TLS server name x.example does not match api.example.com:443"}'
	echo '{"proto":"connect","host":"api.example.com","port":443,"allowed":true,"rule":"api.example.com","addr":"203.0.113.7"}'
} >"$EV"
chmod 0644 "$EV"
NL=$'\n'
POLICY_LINES="[policy]${NL}allow_domains = [${NL}  \"evil.example\", # denied 4 times (:443 ×2, lookup, :80)${NL}  \"other.example:8443\", # denied once (:8443)${NL}]"
YES=$AJ_TMP/yes
NO=$AJ_TMP/no
echo y >"$YES"
echo n >"$NO"
chmod 0644 "$YES" "$NO"

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	CFG=$HOMEDIR/.config/agentjail/config.toml
	tb() { aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NET_EVENTS="$EV" "$@"; }

	# --- a run: [policy] -------------------------------------------------------------------
	tb -- run --net allow --allow-domain api.example.com --deny-domain bad.example -- true
	rc_is 0 "$who: a --net allow run with denials"
	aj_run "$who" -- log --last --suggest
	rc_is 0 "$who: log --last --suggest"
	like "$OUT" "^# session [0-9a-f-]+: 7 denied; these lines in your configuration would allow them" \
		"$who: … says how many were denied"
	like "$OUT" "$(sed 's/[][().*]/\\&/g' <<<"$POLICY_LINES")" \
		"$who: … [policy] allow_domains, one entry per host (ports 80, 443 and lookups folded) with the count"
	like "$OUT" "#   bad\.example:443, denied once: refused by the deny entry bad\.example" \
		"$who: … a deny-listed host is not suggested, and why"
	like "$OUT" "#   api\.example\.com:443, denied once: its name was allowed; something else refused it" \
		"$who: … nor a host refused for another reason than its name"
	printf '%s\n' "$OUT" >"$AJ_TMP/suggest.toml"
	"$DUMP" "$AJ_TMP/suggest.toml" >"$AJ_TMP/dump.json" 2>&1
	ok $? "$who: … the printed lines are TOML agentjail's parser takes" || diag "$(cat "$AJ_TMP/dump.json")"

	# --- --apply: asks; only the user's file; the rest of it kept ----------------------------
	mkdir -p "$(dirname "$CFG")"
	cat >"$CFG" <<'EOF'
# my settings
[policy] # the defaults
memory = "4G"   # keep this

[agent.claude]
allow_domains = [
	"mcp.example.com", # mine
]
EOF
	printf '[policy]\nnet = "off"\n' >"$WS/.agentjail.toml"
	aj_chown "$HOMEDIR/.config" "$WS/.agentjail.toml"
	before=$(sha256sum "$CFG" "$WS/.agentjail.toml")
	aj_run "$who" -- log --last --suggest --apply
	rc_is 1 "$who: --apply without a terminal and without --yes: not applied"
	like "$ERR" "not confirmed; .*config\.toml is unchanged \(--yes adds them without asking\)" "$who: … and says how to"
	aj_run "$who" -t -i "$NO" -- log --last --suggest --apply
	like "$OUT" "add 2 entries to allow_domains in \[policy\] of $CFG\? \[y/N\]" "$who: --apply asks at the terminal"
	is "$(sha256sum "$CFG" "$WS/.agentjail.toml")" "$before" "$who: … n: nothing written"
	aj_run "$who" -t -i "$YES" -- log --last --suggest --apply
	rc_is 0 "$who: … y: applied"
	like "$OUT" "added 2 entries to allow_domains in \[policy\] of $CFG" "$who: … and says where"
	want='# my settings
[policy] # the defaults
allow_domains = ["evil.example", "other.example:8443"]
memory = "4G"   # keep this

[agent.claude]
allow_domains = [
	"mcp.example.com", # mine
]'
	is "$(cat "$CFG")" "$want" "$who: the entries are under [policy]; every other byte of the file kept"
	is "$(sha256sum "$WS/.agentjail.toml")" "$(grep agentjail.toml <<<"$before")" \
		"$who: the project's .agentjail.toml is not touched"
	aj_run "$who" -- config
	rc_is 0 "$who: agentjail config reads the edited file"
	like "$OUT" "evil\.example" "$who: … with the new entries"
	aj_run "$who" -- log --last --suggest --apply --yes
	like "$OUT" "already has these in \[policy\]: nothing to add" "$who: applied twice: nothing added twice"

	rm -f "$WS/.agentjail.toml"

	# --- an agent: [agent.NAME], into its list over several lines ----------------------------
	mkdir -p "$HOMEDIR/.local/bin"
	printf '#!/bin/sh\nexit 0\n' >"$HOMEDIR/.local/bin/claude"
	chmod 0755 "$HOMEDIR/.local/bin/claude"
	aj_chown "$HOMEDIR/.local"
	tb -e PATH="$HOMEDIR/.local/bin:$AJ_SYS_PATH" -- claude -- -p hi
	rc_is 0 "$who: an agent session with denials"
	aj_run "$who" -- log --last --suggest
	like "$OUT" "${NL}\[agent\.claude\]${NL}allow_domains = \[${NL}  \"api\.example\.com\", # denied once \(:443\)${NL}  \"bad\.example\"" \
		"$who: an agent's session: the lines are for [agent.claude]"
	like "$OUT" "#   evil\.example:443, denied 2 times: its name was allowed" \
		"$who: … what [policy] now allows is not suggested again"
	aj_run "$who" -- log --last --suggest --apply --yes
	rc_is 0 "$who: --apply --yes adds them without asking"
	like "$(cat "$CFG")" "${NL}allow_domains = \[${NL}	\"mcp\.example\.com\", # mine${NL}	\"api\.example\.com\",${NL}	\"bad\.example\",${NL}\]$" \
		"$who: … into [agent.claude]'s list, on lines of its own, indented alike"

	# --- a user file that is a symlink to a project's file: refused ---------------------------
	rm "$CFG"
	printf '[policy]\nnet = "off"\n' >"$WS/.agentjail.toml"
	ln -s "$WS/.agentjail.toml" "$CFG"
	aj_chown "$HOMEDIR/.config" "$WS/.agentjail.toml"
	proj=$(sha256sum "$WS/.agentjail.toml")
	aj_run "$who" -- log --last --suggest --apply --yes
	rc_is 1 "$who: the user's file is a symlink to a project's .agentjail.toml: refused"
	like "$ERR" "refusing to write a project's configuration file" "$who: … saying why"
	is "$(sha256sum "$WS/.agentjail.toml")" "$proj" "$who: … the project's file is unchanged"
	rm -f "$CFG" "$WS/.agentjail.toml"
done
aj_skip_missing_whos "log --suggest and --apply"
done_testing
