#!/usr/bin/env bash
# The manual page agentjail(1) renders with scdoc and man, has its sections, documents every
# command of `agentjail --help` and every option of each command's --help, the exit codes and
# the environment, and formats without a roff warning.
. "$(dirname "$0")/lib.sh"

aj_man_render agentjail.1
bin=$AJ_BUILD/agentjail
for s in NAME SYNOPSIS DESCRIPTION COMMANDS 'POLICY OPTIONS' 'EXIT STATUS' ENVIRONMENT FILES \
	EXAMPLES 'SECURITY MODEL' 'SEE ALSO'; do
	grep -Eq "^\.SH \"?$s\"?\$" <<<"$page"
	ok $? "section $s"
done

# every command `agentjail --help` lists has a definition in COMMANDS
cmds=$("$bin" --help 2>&1 | sed -n 's/^  \([a-z][a-z]*\) .*/\1/p' | sort -u)
[ "$(wc -w <<<"$cmds")" -ge 12 ]
ok $? "the commands are read from agentjail --help ($(wc -w <<<"$cmds"))" || diag "$cmds"
missing=
for c in $cmds; do
	grep -Eq "^\*$c( |\*)" "$src" || missing="$missing $c"
done
is "$missing" "" "every command of agentjail --help is documented"

# every option of each command's --help appears in the page
missing=
for c in run verify doctor profiles shim sessions show log rm quarantine resume tui config trust \
	untrust cache home diff apply discard checkpoint rollback; do
	for o in $("$bin" "$c" --help 2>&1 | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -qF -- "*$o*" "$src" || missing="$missing $c:$o"
	done
done
is "$missing" "" "every option of each command's --help is documented" || diag "missing: $missing"
missing=
# sub-commands and the things a reviewer looks for
for w in '*quarantine restore*' '*--quiet*' 'allow-list proxy' 'DNS stub'; do
	grep -qF -- "$w" "$src"
	ok $? "the page has: $w"
done
for a in claude codex gemini kiro pi opencode aider; do
	grep -qF "*$a*" "$src" || missing="$missing $a"
done
is "$missing" "" "every agent is named"
for x in 2 125 126 127; do
	grep -Eq "^(\*[0-9]+\*, )*\*$x\*(, \*[0-9]+\*)*\$" "$src"
	ok $? "exit status $x is documented"
done
for v in AGENTJAIL_STATE_DIR AGENTJAIL_BWRAP AGENTJAIL_FS AGENTJAIL_NET AGENTJAIL_MEMORY \
	AGENTJAIL_PIDS AGENTJAIL_GRACE_MS; do
	grep -q "\*$v\*" "$src"
	ok $? "$v is documented"
done
for w in 'Kernel bugs' 'Side channels' '--net on'; do
	grep -qF -- "$w" "$src"
	ok $? "the security model covers: $w"
done

if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$tmp/agentjail.1" 2>"$tmp/warn"
	is "$(cat "$tmp/warn")" "" "groff formats it without a warning"
else
	skip "groff formats it without a warning" "groff is not installed"
fi
if command -v man >/dev/null 2>&1; then
	text=$(MANWIDTH=80 man -l "$tmp/agentjail.1" 2>"$tmp/manerr" | col -bx 2>/dev/null)
	like "$text" 'SECURITY MODEL' "man -l shows it" || diag "$(cat "$tmp/manerr")"
else
	skip "man -l shows it" "man is not installed"
fi
# README (stumble 10): danger-full-access implies --net on (it does not require it); an explicit
# --net off is refused; and the page says the same
readme=$(cat "$AJ_SRC/README.md")
unlike "$readme" 'requires `--net on`' "README does not say danger-full-access requires --net on"
like "$readme" 'danger-full-access` runs without[[:space:]]+a jail, says so, and implies `--net on`' \
	"README says it implies --net on"
(cd "$tmp" && HOME=$tmp AGENTJAIL_STATE_DIR=$tmp/state "$bin" run --fs danger-full-access -- true 2>/dev/null)
is "$?" 0 "and so it does: run --fs danger-full-access -- true exits 0"
(cd "$tmp" && HOME=$tmp AGENTJAIL_STATE_DIR=$tmp/state "$bin" run --fs danger-full-access --net off -- true 2>/dev/null)
is "$?" 2 "an explicit --net off with it is refused (2)"
grep -q 'implies \*--net on\*' "$src"
ok $? "agentjail(1) says it implies --net on"
done_testing
