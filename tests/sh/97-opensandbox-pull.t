#!/usr/bin/env bash
# The changes back from a hostile sandbox (doc/design.md §4b), as root and as an unprivileged
# user. The sandbox writes agentjail's listing: here its command puts a `sha256sum` of its own
# first on the PATH (the stand-in gives each sandbox a /usr/local/bin of its own, as an image
# where the command is root would), which adds forged lines to what the real one prints. Every
# name that comes back is checked whole: `.//.git/hooks/pre-commit` and `.//.envrc` (issue 24
# item 2: they landed as .git/hooks/pre-commit, mode 0755, and .envrc, while the run said "not
# brought back"), a nested repository's hooks, a directory shaped like a bare repository with a
# config, a name listed twice, a name with terminal escapes, a forged mode. The good files of
# the same run still come back, and what is reported is true.
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/osblib.sh"
command -v tar >/dev/null || bail "tar is missing"
command -v sha256sum >/dev/null || bail "sha256sum is missing"

KEY=sk-osbp-$$-$RANDOM-secret
STANDIN_API_KEY=$KEY osb_start main --ping 0.5 --linger 0.2 --pending 0.3

# A command for the sandbox: install a sha256sum that prints the real listing, then LINES (a
# shell snippet run in the workspace; $h FILE is FILE's hash), then run BODY.
hostile() { # LINES BODY
	printf '%s\n' "mkdir -p ../usr/local/bin && cat >../usr/local/bin/sha256sum <<'EOS'
#!/bin/sh
/usr/bin/sha256sum \"\$@\" || exit
h() { /usr/bin/sha256sum <\"\$1\" | cut -d' ' -f1; }
$1
EOS
chmod 755 ../usr/local/bin/sha256sum
$2"
}

for who in "${AJ_WHOS[@]}"; do
	# every field set: the request is the same before and after item 15
	osb_config "$who" "$OSB_URL" 'cpu = "1"' 'memory = "1Gi"' 'timeout = 600'

	# ---- item 2: another spelling of a protected path ----
	osb_repo "$who"
	cmd=$(hostile 'echo "$(h .git/hooks/pre-commit)  .//.git/hooks/pre-commit"
echo "M 755 /.git/hooks/pre-commit"
echo "$(h .envrc)  .//.envrc"' \
		'mkdir -p .git/hooks && printf "#!/bin/sh\ntouch hook-ran\n" >.git/hooks/pre-commit &&
		 echo "touch envrc-ran" >.envrc && echo changed >a.txt')
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c "$cmd"
	is "$RC" 0 "$who: the run ends well"
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	ok $? "$who: .//.git/hooks/pre-commit does not land in .git/hooks" ||
		diag "$(ls -l "$WS/.git/hooks/pre-commit")"
	[ ! -e "$WS/.envrc" ]
	ok $? "$who: .//.envrc does not land as .envrc"
	like "$ERR" 'violation: protected path \.git/hooks/pre-commit .*not brought back' \
		"$who: the violation is reported"
	like "$ERR" '"/\.git/hooks/pre-commit": not a plain relative path: an absolute name' \
		"$who: so is the spelling, refused whole"
	like "$ERR" 'violation: protected path \.envrc ' "$who: .envrc too"
	is "$(cat "$WS/a.txt")" changed "$who: the good file of the same run comes back"
	aj_host git -C "$WS" -c safe.directory='*' -c user.name=t -c user.email=t@t.invalid \
		commit -qam two >/dev/null 2>&1
	[ ! -e "$WS/hook-ran" ]
	ok $? "$who: the host's next git commit runs no hook"
	is "$(osb_live)" "" "$who: the sandbox was deleted"

	# ---- a nested repository, a bare-shaped directory: git runs what they hold -------------
	osb_repo "$who"
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c '
		mkdir -p sub/.git/hooks sub/.git/objects/pack sub/.git/refs/heads bare/objects/pack bare/refs/heads &&
		echo "ref: refs/heads/main" >sub/.git/HEAD && echo "ref: refs/heads/main" >bare/HEAD &&
		printf "[core]\n\tfsmonitor = touch fsmonitor-ran\n" >sub/.git/config &&
		printf "#!/bin/sh\ntouch hook-ran\n" >sub/.git/hooks/pre-commit && chmod 755 sub/.git/hooks/pre-commit &&
		printf "[core]\n\tpager = touch pager-ran\n" >bare/config && touch bare/objects/pack/keep bare/refs/heads/keep &&
		echo fine >sub/fine.txt'
	is "$RC" 0 "$who: nested: the run ends well"
	[ ! -e "$WS/sub/.git" ]
	ok $? "$who: a nested repository's .git does not come back"
	[ ! -e "$WS/bare/config" ]
	ok $? "$who: the config of a directory shaped like a bare repository does not come back"
	like "$ERR" 'violation: protected path sub/\.git/hooks/pre-commit' "$who: nested: reported"
	like "$ERR" 'violation: protected path bare/config' "$who: bare: reported"
	is "$(cat "$WS/sub/fine.txt" 2>&1)" fine "$who: nested: the good file comes back"

	# ---- a name listed twice, a name with escapes, a forged mode, odd spellings -------------
	osb_repo "$who"
	cmd=$(hostile 'echo "0000000000000000000000000000000000000000000000000000000000000000  ./a.txt"
echo "M 6777 tool.sh"
echo "$(h new.txt)  ./sub//new.txt"
echo "$(h new.txt)  ./sub/./new.txt"
echo "$(h new.txt)  ./sub/../.bashrc"' \
		"echo changed >a.txt && echo new >new.txt && mkdir sub && echo new >sub/new.txt &&
		 printf 'echo\n' >tool.sh && chmod 755 tool.sh && echo x >\"\$(printf 'e\\033[2J\\033]0;pwned\\007x')\"")
	aj_run "$who" -e OSB_TEST_KEY="$KEY" -- run -- sh -c "$cmd"
	is "$RC" 0 "$who: forged: the run ends well (a forged line refuses its file, not the pull)"
	is "$(cat "$WS/a.txt")" hello "$who: a name listed twice does not come back"
	like "$ERR" '"a\.txt": listed more than once; not brought back' "$who: and says why"
	is "$(cat "$WS/new.txt" 2>&1):$(cat "$WS/sub/new.txt" 2>&1)" new:new "$who: the good files come back"
	is "$(stat -c %a "$WS/tool.sh" 2>&1)" 755 "$who: a forged mode never adds setuid or world write"
	like "$ERR" '"sub//new\.txt": not a plain relative path: an empty component' "$who: sub//new.txt refused"
	like "$ERR" '"sub/\./new\.txt": not a plain relative path: a \. component' "$who: sub/./new.txt refused"
	like "$ERR" 'violation: protected path \.bashrc ' "$who: sub/../.bashrc is a violation"
	[ ! -e "$WS/.bashrc" ]
	ok $? "$who: … and does not come back"
	[ -z "$(find "$WS" -name 'e*x' -newer "$WS/.gitignore")" ]
	ok $? "$who: a name with terminal escapes does not come back"
	unlike "$ERR" $'\033' "$who: nor reaches the terminal raw"
	like "$ERR" '"e\\x1b\[2J\\x1b\]0;pwned\\x07x": not a plain relative path: a control character' \
		"$who: it is shown escaped"
	is "$(ls -a "$WS" | grep -c agentjail)" 0 "$who: no staging directory left"
	is "$(osb_live)" "" "$who: the sandbox was deleted"
done
done_testing
