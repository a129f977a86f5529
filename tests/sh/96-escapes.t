#!/usr/bin/env bash
# Names a jail chose never reach the terminal raw (doc/design.md §6, issue 24 item 6): a file
# name holding ESC, CSI, OSC, BEL, a C1 byte (raw and as U+009B), a bidirectional override and
# invalid UTF-8 is planted through every channel that prints one — a live violation, a
# violation found after the run, a quarantine entry, `sessions`/`show`/`log`, a host the proxy
# refused, an error naming a workspace file, a remote sandbox's symlink — and agentjail's
# stdout and stderr hold none of those bytes, only fmt_clean's '?'. Then the source check
# (tests/helpers/printcheck.py): every string src/cmd prints is cleaned or declared
# agentjail's (or the user's) own.
. "$(dirname "$0")/lib.sh"
aj_setup

for tool in python3 git; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skip "names a jail chose are cleaned" "$tool is not installed (scripts/deps.sh installs it)"
		done_testing
	fi
done

# The hostile name: sets the title (OSC 0 … BEL), clears the screen (CSI 2J), colours (SGR),
# CSI as a raw C1 byte (0x9b: invalid UTF-8) and as U+009B, RLO (U+202E), a lone 0xff.
N=$'n\e]0;PWNED\a\e[2J\e[31m\x9b1m\xc2\x9b2J\xe2\x80\xaecod.exe\xff'

# term_safe DESC — $OUT and $ERR hold no byte a terminal acts on: no C0 but tab and newline, no
# DEL, no C1 (raw or UTF-8), no bidirectional mark, nothing that is not UTF-8.
term_safe() {
	printf '%s' "$OUT$ERR" >"$AJ_TMP/shown"
	local bad
	bad=$(python3 - "$AJ_TMP/shown" <<'EOF'
import re, sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "surrogateescape")
bad = re.compile("[\x00-\x08\x0b-\x1f\x7f\x80-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                 "\udc80-\udcff]")
hits = [(m.start(), m.group()) for m in bad.finditer(t)]
for at, ch in hits[:5]:
    print("%r at %d in %r" % (ch, at, t[max(0, at - 40):at + 20]))
EOF
)
	is "$bad" "" "$1"
}

# show_last WHO [--json] — `show` of WHO's newest session
show_last() {
	local who=$1 id
	shift
	aj_run "$who" -- sessions --json
	id=$(printf '%s' "$OUT" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["id"])')
	aj_run "$who" -- show "$id" "$@"
}

GIT=(git -c user.name=agentjail-test -c user.email=test@agentjail.invalid -c init.defaultBranch=main
	-c safe.directory='*')

for who in "${AJ_WHOS[@]}"; do
	# --- a live violation: a repository shipped a nested one (named by its author) without
	# hooks/; the jail makes a hook there, moved aside at once and reported while it runs.
	# (The commands here print nothing themselves: their own output is theirs to send.)
	aj_fresh_ws "$who"
	aj_host "${GIT[@]}" -C "$WS" init -q "$N"
	rm -rf "${WS:?}/$N/.git/hooks"
	aj_chown "$WS"
	aj_run "$who" -t -- run -- sh -c 'exec 2>/dev/null; d=$(ls -d n*); mkdir "$d/.git/hooks" &&
		printf "#!/bin/sh\n" >"$d/.git/hooks/pre-commit"; sleep 1'
	like "$OUT" 'agentjail: violation: .*n\?\]0;PWNED\?\?\[2J\?\[31m\?1m\?2J\?cod\.exe\?' \
		"$who: the live violation line names the path, its controls as '?'"
	term_safe "$who: … and nothing of the name reaches the terminal raw"

	# --- violations found after the run: a nested repository made inside
	aj_fresh_ws "$who"
	# (a new repository's config is moved aside only when it sets a key that runs a command)
	aj_run "$who" -- run -- sh -c 'exec 2>/dev/null
		d=$(printf "m\033]0;PWNED\007\033[2J\302\233\342\200\256x")
		git init -q "$d" && git -C "$d" config core.pager "sh -c true"'
	like "$ERR" 'violation: .*m\?\]0;PWNED\?\?\[2J\?\?x' "$who: the violations after the run name the paths"
	term_safe "$who: … cleaned"
	for c in "sessions" "log --last" "log --last --json"; do
		# shellcheck disable=SC2086
		aj_run "$who" -- $c
		term_safe "$who: $c: cleaned (escaped in JSON)"
	done
	show_last "$who"
	like "$OUT" 'violation' "$who: show lists the violations"
	term_safe "$who: … cleaned"
	show_last "$who" --json
	term_safe "$who: show --json: escaped"

	# --- the quarantine: listed, and put back
	aj_run "$who" -- quarantine
	like "$OUT" 'm\?\]0;PWNED' "$who: quarantine lists the items"
	term_safe "$who: … cleaned"
	item=$(find "$STATE/quarantine" -path '*/.git/config' 2>/dev/null | head -n1)
	aj_run "$who" -- quarantine restore "$item" --yes
	like "$OUT" 'restored .*m\?\]0;PWNED' "$who: quarantine restore names what it put back"
	term_safe "$who: … cleaned"

	# --- a name that is not UTF-8 (a lone 0xff): its violation is recorded with the exact
	# bytes, so the quarantine lists it and puts it back where it was (it had no detail at all:
	# nothing to list, nothing to restore, and show named no path)
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c 'exec 2>/dev/null
		d=$(printf "q\377z"); git init -q "$d" && git -C "$d" config core.pager "sh -c true"'
	like "$ERR" 'violation: .*q\?z/\.git/config' "$who: not UTF-8: the violation line names the path"
	show_last "$who"
	like "$OUT" 'q.z/\.git/config' "$who: not UTF-8: show names the path"
	aj_run "$who" -- quarantine
	like "$OUT" 'q\?z/\.git/config' "$who: not UTF-8: quarantine lists the item"
	term_safe "$who: … cleaned"
	item=$(find "$STATE/quarantine" -path '*/q?z/.git/config' 2>/dev/null | head -n1)
	aj_run "$who" -- quarantine restore "$item" --yes
	[ -f "$WS/$(printf 'q\377z')/.git/config" ]
	ok $? "$who: not UTF-8: quarantine restore puts the file back under its exact name"
	term_safe "$who: … cleaned"

	# --- the session's command line: sessions and show
	aj_fresh_ws "$who"
	aj_run "$who" -- run -- sh -c : "$N"
	aj_run "$who" -- sessions
	like "$OUT" "sh -c : 'n\\?\\]0;PWNED" "$who: sessions shows the argument"
	term_safe "$who: … cleaned"
	show_last "$who"
	term_safe "$who: show: cleaned"

	# --- a refused host (the test build feeds the proxy's decisions as it would record them):
	# the end-of-run line, log, show, sessions
	python3 -c 'import json; print(json.dumps({"proto": "connect", "host": "h\x1b]0;PWNED\x07\x1b[2J\x9b2J\u202ex",
		"port": 443, "allowed": False, "rule": "not on the allow-list \x1b[2J"}))' >"$AJ_TMP/events.jsonl"
	aj_run "$who" -b agentjail-testbuild -e AGENTJAIL_TEST_NET_EVENTS_END="$AJ_TMP/events.jsonl" \
		-- run -- true
	like "$ERR" 'denied 1 connection: h\?\]0;PWNED' "$who: the end-of-run line names the refused host"
	term_safe "$who: … cleaned"
	for c in "sessions" "log --last" "log --last --json"; do
		# shellcheck disable=SC2086
		aj_run "$who" -- $c
		term_safe "$who: $c: the refused host cleaned"
	done
	show_last "$who"
	like "$OUT" 'h\?\]0;PWNED' "$who: show names the refused host"
	term_safe "$who: … cleaned"

	# --- an error naming what a repository holds: a git pointer (.git/commondir) naming a
	# directory that is not there
	aj_fresh_ws "$who"
	aj_host "${GIT[@]}" -C "$WS" init -q
	printf '%s\n' "$N" >"$WS/.git/commondir"
	aj_chown "$WS"
	aj_run "$who" -- run -- true
	like "$ERR" 'refusing a git pointer that names .*n\?\]0;PWNED' "$who: the git pointer's error names its target"
	term_safe "$who: … cleaned"
done
aj_skip_missing_whos "names a jail chose are cleaned"

# --- the remote backend: a symlink and a protected path made in the sandbox, not brought back
if command -v tar >/dev/null && command -v curl >/dev/null; then
	. "$(dirname "$0")/osblib.sh"
	KEY=sk-esc-$$-$RANDOM
	STANDIN_API_KEY=$KEY osb_start esc --ping 0.5 --linger 0.2
	for who in "${AJ_WHOS[@]}"; do
		aj_fresh_ws "$who"
		(cd "$WS" && "${GIT[@]}" init -q && echo a >a.txt && "${GIT[@]}" add a.txt &&
			"${GIT[@]}" commit -qm one)
		mkdir -p "$HOMEDIR/.config/agentjail"
		printf 'backend = "opensandbox"\n[opensandbox]\nurl = "%s"\napi_key_env = "OSB_TEST_KEY"\ntimeout = 600\n' \
			"$OSB_URL" >"$HOMEDIR/.config/agentjail/config.toml"
		aj_chown "$WS" "$HOMEDIR/.config"
		aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c \
			'n=$(printf "s\033]0;PWNED\007\033[2J\342\200\256x"); ln -s a.txt "$n";
			 mkdir -p .git/hooks && echo x >".git/hooks/$n"'
		like "$ERR" 'not brought back' "$who: remote: the symlink and the hook are not brought back"
		term_safe "$who: remote: … and their names are cleaned"
		rm -rf "$HOMEDIR/.config/agentjail"
	done
else
	skip "remote: names from the sandbox are cleaned" "tar or curl is not installed"
fi

# --- the source: every string src/cmd prints is cleaned or declared agentjail's own
out=$(python3 "$AJ_SRC/tests/helpers/printcheck.py" "$AJ_SRC" 2>&1)
is "$out" "" "every string the command layer prints goes through fmt_clean or is declared its own"

done_testing
