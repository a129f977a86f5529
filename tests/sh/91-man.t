#!/usr/bin/env bash
# The manual page agentjail.toml(5) renders with scdoc, has its sections, documents every key a
# [profile.NAME] table accepts (the table in src/core/config/profile_user.c), and formats without
# a roff warning.
. "$(dirname "$0")/lib.sh"

aj_man_render agentjail.toml.5
for s in NAME SYNOPSIS DESCRIPTION LAYERS 'TOP-LEVEL KEYS' '\[policy\]' '\[agent\.NAME\]' \
	'\[profile\.NAME\]' 'PROJECT FILES AND TRUST' 'OWNERSHIP AND PERMISSIONS' ENVIRONMENT \
	EXAMPLES FILES; do
	grep -Eq "^\.SH \"?$s\"?\$" <<<"$page"
	ok $? "section $s"
done

# every key of the configuration is documented as a definition ("*key* = ...")
keys=$(sed -n 's/^\t{"\([a-z_]*\)", S_.*/\1/p' "$AJ_SRC/src/core/config/profile_user.c")
[ "$(wc -w <<<"$keys")" -ge 20 ]
ok $? "the profile keys are read from profile_user.c ($(wc -w <<<"$keys") keys)"
missing=
for k in $keys bwrap state_dir fs net rw ro hide devices env allow_domains deny_domains hosts \
	memory pids; do
	grep -q "^\*$k\* = " "$src" || missing="$missing $k"
done
is "$missing" "" "every key is documented with its form (*key* = ...)"
for v in AGENTJAIL_FS AGENTJAIL_NET AGENTJAIL_STATE_DIR AGENTJAIL_BWRAP; do
	grep -q "^\*$v\*" "$src"
	ok $? "$v is documented"
done
like "$page" 'agentjail trust' "project trust is documented"

if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$tmp/agentjail.toml.5" 2>"$tmp/warn"
	is "$(cat "$tmp/warn")" "" "groff formats it without a warning"
	text=$(groff -man -Tutf8 -rLL=2000n "$tmp/agentjail.toml.5" 2>/dev/null | col -bx 2>/dev/null)
	like "$text" 'profiles, \.\.\.\)' "an ellipsis at a line start is not eaten by roff"
else
	skip "groff formats it without a warning" "groff is not installed"
fi
done_testing
