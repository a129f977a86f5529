# shellcheck shell=bash
# tests/sh/lib.sh — TAP helpers and the test fixture for the black-box tests.
#
# Source it from a *.t file, call `aj_setup`, write assertions, end with `done_testing`.
#
# Environment (exported by `make check`):
#   AJ_BUILD  absolute build dir: agentjail, agentjail-testbuild, agentjail-init,
#             agentjail-remote, agentjail-tls, tests/helpers/probe
#   AJ_SRC    the source tree
#
# The fixture installs the binaries into a world-readable temporary prefix (CI clones under /root,
# mode 0700), creates an unprivileged user when running as root (removed at the end only if this
# file created it) and gives each identity ("root", "user") its own workspace, $HOME and state
# directory under one temporary directory. Everything is removed by an EXIT trap.
#
# Running a jail:
#   aj_run WHO [-e NAME=VALUE]… [-C DIR] [-b BINARY] [-B PATH] [-t] [-i FILE] -- AGENTJAIL-ARGS…
#     WHO: root | user.  -e: extra host environment; -C: cwd (default: WHO's workspace);
#     -b: agentjail (default) or agentjail-testbuild, from the installed prefix; -B: the binary's
#     absolute path; -t: run under a pseudo-terminal (script);
#     -i: stdin (default /dev/null).  Sets OUT, ERR (stdout/stderr, \r removed) and RC.
#   aj_use WHO  sets WS, HOMEDIR, STATE, P (the probe inside the workspace), RUN_UID, RUN_NAME.
#
# A test passes whatever the machine has (agents installed or not, tools under /usr/local, the
# caller's configuration and environment): sourcing this file drops the settings agentjail,
# git, curl or npm would read (XDG_* directories, proxies, ssh-agent, GIT_*, npm_config_*,
# AGENTJAIL_*), sets umask 022 and the C.UTF-8 locale, and aj_setup gives the test process a
# $HOME of its own. A check that a command is absent uses a PATH with no system directory
# (AJ_NO_PATH), never the system's: the host may have any agent or tool installed. As root,
# `tests/hostile-host.sh make t T=…` runs tests on such a host (every agent installed, the
# caller's environment and configuration against them): they must pass there too.

set -u

_aj_clean_env() {
	local v
	for v in $(compgen -e); do
		case $v in
		XDG_CONFIG_HOME | XDG_CONFIG_DIRS | XDG_STATE_HOME | XDG_DATA_HOME | XDG_DATA_DIRS | \
			XDG_CACHE_HOME | *_PROXY | *_proxy | SSH_AUTH_SOCK | SSH_AGENT_PID | GIT_* | \
			npm_config_* | NPM_CONFIG_* | AGENTJAIL_* | LC_* | LANGUAGE | NO_COLOR)
			unset "$v"
			;;
		esac
	done
	export LANG=C.UTF-8 GIT_CONFIG_NOSYSTEM=1
	umask 022
}
_aj_clean_env

# --------------------------------------------------------------------------------------------
# TAP

_tap_n=0
_tap_failed=0

# Diagnostics right after a failed check go to stderr (prove shows them without -v, so a CI
# log says why it failed); others are TAP comments for `prove -v`.
diag() {
	local line
	if [ "${_tap_last_failed:-0}" = 1 ]; then
		while IFS= read -r line; do printf '# %s\n' "$line"; done <<<"$*" >&2
	else
		while IFS= read -r line; do printf '# %s\n' "$line"; done <<<"$*"
	fi
}
note() { diag "$@"; }

_tap_result() { # STATUS(0 ok) DESC
	_tap_n=$((_tap_n + 1))
	local d=${2//$'\n'/ }
	_tap_last_failed=0
	if [ "$1" -eq 0 ]; then
		printf 'ok %d - %s\n' "$_tap_n" "$d"
	else
		_tap_last_failed=1
		printf 'not ok %d - %s\n' "$_tap_n" "$d"
		_tap_failed=$((_tap_failed + 1))
	fi
}

plan() { printf '1..%d\n' "$1"; _tap_planned=1; }

# ok COND_STATUS DESC — pass when the status is 0: `[ "$x" = y ]; ok $? "desc"`
ok() { _tap_result "$1" "$2"; return "$1"; }

# check DESC CMD… — runs CMD, passes when it exits 0
check() {
	local d=$1; shift
	"$@"; _tap_result $? "$d"
}

is() { # GOT EXPECTED DESC
	if [ "$1" = "$2" ]; then _tap_result 0 "$3"; return 0; fi
	_tap_result 1 "$3"
	diag "  got:      '$1'"
	diag "  expected: '$2'"
	_last_run_diag
	return 1
}

isnt() { # GOT UNEXPECTED DESC
	if [ "$1" != "$2" ]; then _tap_result 0 "$3"; return 0; fi
	_tap_result 1 "$3"
	diag "  got '$1', which it should not be"
	_last_run_diag
	return 1
}

like() { # GOT ERE DESC
	if [[ $1 =~ $2 ]]; then _tap_result 0 "$3"; return 0; fi
	_tap_result 1 "$3"
	diag "  got:      '${1:0:600}'"
	diag "  expected to match: /$2/"
	_last_run_diag
	return 1
}

unlike() { # GOT ERE DESC
	if ! [[ $1 =~ $2 ]]; then _tap_result 0 "$3"; return 0; fi
	_tap_result 1 "$3"
	diag "  got:      '${1:0:600}'"
	diag "  expected not to match: /$2/"
	_last_run_diag
	return 1
}

# todo STATUS DESC REASON — a known gap: reported, never failing the suite
todo() {
	_tap_n=$((_tap_n + 1))
	local r=ok
	[ "$1" -eq 0 ] || r='not ok'
	printf '%s %d - %s # TODO %s\n' "$r" "$_tap_n" "${2//$'\n'/ }" "${3//$'\n'/ }"
	[ "$1" -eq 0 ] || _last_run_diag
	return 0
}

skip() { # DESC REASON
	_tap_n=$((_tap_n + 1))
	printf 'ok %d - %s # SKIP %s\n' "$_tap_n" "${1//$'\n'/ }" "${2//$'\n'/ }"
}

bail() {
	printf 'Bail out! %s\n' "$*"
	exit 255
}

done_testing() {
	[ -n "${_tap_planned:-}" ] || printf '1..%d\n' "$_tap_n"
	[ "$_tap_failed" -eq 0 ]
	exit $?
}

# --------------------------------------------------------------------------------------------
# Fixture

AJ_TMP=
AJ_PIDS=()
AJ_CLEAN=()
AJ_USER_CREATED=
AJ_USER=
AJ_USER_SKIP=
AJ_WHOS=()
AJ_SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

aj_cleanup() {
	local p
	for p in "${AJ_PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${AJ_PIDS[@]}"; do
		wait "$p" 2>/dev/null
	done
	for p in "${AJ_CLEAN[@]}"; do
		[ -n "$p" ] && rm -rf -- "$p"
	done
	if [ -n "$AJ_TMP" ] && [ -d "$AJ_TMP" ]; then
		chmod -R u+rwX "$AJ_TMP" 2>/dev/null
		rm -rf -- "$AJ_TMP"
	fi
	if [ -n "$AJ_USER_CREATED" ]; then
		local i
		for i in 1 2 3 4 5; do
			userdel "$AJ_USER" 2>/dev/null && break
			sleep 0.2
		done
	fi
}

_aj_create_user() {
	local name=ajtest-$$ i
	if id -u "$name" >/dev/null 2>&1; then
		AJ_USER=$name
		return 0
	fi
	for i in 1 2 3 4 5 6 7 8 9 10; do
		# -M: no home directory (each test makes its own $HOME); -U: a group of the same name.
		if useradd -M -U -d /nonexistent -s /bin/sh "$name" 2>"$AJ_TMP/useradd.err"; then
			AJ_USER=$name
			AJ_USER_CREATED=1
			return 0
		fi
		sleep 0.3 # /etc/passwd locked by a concurrent useradd
	done
	AJ_USER_SKIP="useradd $name failed: $(cat "$AJ_TMP/useradd.err")"
	return 1
}

aj_setup() {
	[ -n "${AJ_BUILD:-}" ] || bail "AJ_BUILD is not set (run through make check)"
	local f
	for f in agentjail agentjail-testbuild agentjail-init agentjail-remote agentjail-tls \
		tests/helpers/probe; do
		[ -x "$AJ_BUILD/$f" ] || bail "missing $AJ_BUILD/$f (run make check)"
	done
	trap aj_cleanup EXIT
	trap 'exit 130' INT TERM HUP

	AJ_TMP=$(mktemp -d /tmp/agentjail-test.XXXXXX) || bail "mktemp failed"
	AJ_TMP=$(realpath "$AJ_TMP")
	chmod 0755 "$AJ_TMP"
	mkdir -m 0755 "$AJ_TMP/bin"
	# the test process's own $HOME: git, curl and npm on the host read nothing of the caller's
	mkdir -m 0755 "$AJ_TMP/host-home"
	export HOME=$AJ_TMP/host-home
	# a PATH on which no command can be found (an agent "not installed", whatever the host has)
	AJ_NO_PATH=$AJ_TMP/no-path
	mkdir -m 0755 "$AJ_NO_PATH"
	install -m 0755 "$AJ_BUILD/agentjail" "$AJ_BUILD/agentjail-testbuild" \
		"$AJ_BUILD/agentjail-init" "$AJ_BUILD/agentjail-remote" "$AJ_BUILD/agentjail-tls" \
		"$AJ_BUILD/tests/helpers/probe" "$AJ_TMP/bin/" ||
		bail "install into $AJ_TMP/bin failed"
	AJ_BIN=$AJ_TMP/bin
	PROBE=$AJ_BIN/probe # for host-side use (listeners, control checks)

	if [ "$(id -u)" -eq 0 ]; then
		AJ_WHOS=(root)
		if _aj_create_user; then
			AJ_WHOS+=(user)
		fi
	else
		# Not root: the root half cannot run; the unprivileged half runs as ourselves.
		AJ_USER=$(id -un)
		AJ_WHOS=(user)
	fi
	local who
	for who in "${AJ_WHOS[@]}"; do
		_aj_make_dirs "$who"
	done
}

# A bare git repository DIR/repo.git whose main branch has one commit: a README saying TEXT
# (its work tree is DIR/src). aj_git_repo DIR TEXT
aj_git_repo() {
	git -c init.defaultBranch=main init -q --bare "$1/repo.git"
	git -c init.defaultBranch=main init -q "$1/src"
	echo "$2" >"$1/src/README"
	git -C "$1/src" add README
	git -C "$1/src" -c user.name=t -c user.email=t@t.invalid commit -qm one
	git -C "$1/src" push -q "$1/repo.git" main 2>/dev/null || bail "could not make the test repository"
}

# Render a manual page for the man tests: aj_man_render PAGE (e.g. agentjail.1) renders
# doc/PAGE.scd with scdoc into $tmp/PAGE (tmp: a fresh directory removed at exit), checks that
# it renders and that its .TH names it, and sets src and page (the roff text). Without scdoc the
# whole test is one skip.
aj_man_render() {
	local name=${1%.*} sect=${1##*.}
	src=$AJ_SRC/doc/$1.scd
	if ! command -v scdoc >/dev/null 2>&1; then
		skip "$name($sect) renders" "scdoc is not installed (scripts/deps.sh installs it)"
		done_testing
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	scdoc <"$src" >"$tmp/$1" 2>"$tmp/err"
	ok $? "scdoc renders $name($sect)" || diag "$(cat "$tmp/err")"
	page=$(cat "$tmp/$1")
	grep -qF ".TH \"$name\" \"$sect\"" <<<"$page"
	ok $? "its title is $name($sect)"
}

# Whether the test runs as root.
aj_is_root() { [ "$(id -u)" -eq 0 ]; }

# Print skip lines for the half that cannot run: aj_skip_missing_whos DESC
aj_skip_missing_whos() {
	if ! aj_is_root; then
		skip "root: $1" "not running as root"
	elif [ -n "$AJ_USER_SKIP" ]; then
		skip "user: $1" "$AJ_USER_SKIP"
	fi
}

_aj_make_dirs() { # WHO
	local who=$1 d=$AJ_TMP/$1
	mkdir -m 0755 "$d"
	mkdir -m 0755 "$d/ws" "$d/home" "$d/state" "$d/extra"
	if [ "$who" = user ] && aj_is_root; then
		chown -R "$AJ_USER:" "$d"
	fi
	aj_use "$who"
	install -m 0755 "$AJ_BIN/probe" "$WS/probe"
	[ "$who" = user ] && aj_is_root && chown "$AJ_USER:" "$WS/probe"
	return 0
}

aj_use() { # WHO
	AJ_WHO=$1
	WS=$AJ_TMP/$1/ws
	HOMEDIR=$AJ_TMP/$1/home
	STATE=$AJ_TMP/$1/state
	EXTRA=$AJ_TMP/$1/extra
	P=$WS/probe
	if [ "$1" = root ]; then
		RUN_NAME=root
	else
		RUN_NAME=$AJ_USER
	fi
	RUN_UID=$(id -u "$RUN_NAME")
	RUN_GID=$(id -g "$RUN_NAME")
}

# A fresh, empty workspace (with the probe) for WHO; sets WS and P.
aj_fresh_ws() { # WHO
	aj_use "$1"
	chmod -R u+rwX "$WS" 2>/dev/null
	rm -rf -- "$WS"
	mkdir -m 0755 "$WS"
	install -m 0755 "$AJ_BIN/probe" "$WS/probe"
	aj_chown "$WS"
}

# Give a path (recursively) to the current identity.
aj_chown() {
	if [ "$AJ_WHO" = user ] && aj_is_root; then chown -hR "$AJ_USER:" "$@"; fi
}

# Run a shell command on the host as the current identity (setup steps such as git init).
aj_host() { # CMD…
	if [ "$AJ_WHO" = user ] && aj_is_root; then
		setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups \
			env -i PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME" "$@"
	else
		env -i PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME" "$@"
	fi
}

# Build AJ_CMD for WHO (see aj_run for the options).
# Variables every aj_run of a test file passes (before its own -e ones), e.g. AJ_XENV=(A=1).
AJ_XENV=()
aj_cmd() {
	local who=$1; shift
	aj_use "$who"
	local -a xenv=()
	local cwd=$WS bin=agentjail binpath='' tty='' stdin=/dev/null
	while [ $# -gt 0 ]; do
		case $1 in
		-e) xenv+=("$2"); shift 2 ;;
		-C) cwd=$2; shift 2 ;;
		-b) bin=$2; shift 2 ;;
		-B) binpath=$2; shift 2 ;;
		-t) tty=1; shift ;;
		-i) stdin=$2; shift 2 ;;
		--) shift; break ;;
		*) bail "aj_cmd: unknown option $1" ;;
		esac
	done
	AJ_STDIN=$stdin AJ_TTY=$tty
	# the runs' terminal is script(1)'s pty: xterm unless the host names a real one (bash sets
	# TERM=dumb where none was given, as in CI)
	local term=${TERM:-xterm}
	[ "$term" = dumb ] && term=xterm
	[ -n "$binpath" ] || binpath=$AJ_BIN/$bin
	AJ_CMD=()
	if [ "$who" = user ] && aj_is_root; then
		AJ_CMD+=(setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups)
	fi
	AJ_CMD+=(env -i -C "$cwd" PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" USER="$RUN_NAME"
		LOGNAME="$RUN_NAME" SHELL=/bin/sh LANG=C.UTF-8 TERM="$term"
		AGENTJAIL_STATE_DIR="$STATE" "${AJ_XENV[@]}" "${xenv[@]}" "$binpath" "$@")
	if [ -n "$tty" ]; then
		local q
		q=$(printf '%q ' "${AJ_CMD[@]}")
		# script(1) runs its command with $SHELL -c; %q quoting is bash's ($'…'), and CI
		# has no SHELL (script then uses /bin/sh, which reads $'…' as something else)
		AJ_CMD=(env SHELL=/bin/bash script -qec "$q" /dev/null)
	fi
}

# A root jail is planned to mask each root-only file of /etc, /opt, /usr/local; when the host
# removes or replaces one (useradd or userdel of another test file rewriting /etc/gshadow, a
# test making and removing its own) between that plan and bwrap's mount over it, bwrap fails
# (no file to mount over, or none to create in a read-only tree: seen when another suite on
# the machine removed its /usr/local/etc file) and nothing runs (exit 125; doc/design.md §7,
# "The test suite"). aj_run runs such a run once more, saying so: the second run is whole and
# is what the test judges.
_aj_host_race() {
	[ "$RC" = 125 ] && grep -qE "Can't bind mount /oldroot/dev/null on /newroot/(etc|opt|usr/local)/.*(No such file or directory|Unable to remount destination|in mount table)|Can't mkdir /(newroot/)?(etc|opt|usr/local)/[^:]*: (Read-only file system|No such file or directory)" "$AJ_TMP/err"
}

aj_run() {
	aj_cmd "$@"
	"${AJ_CMD[@]}" <"$AJ_STDIN" >"$AJ_TMP/out" 2>"$AJ_TMP/err"
	RC=$?
	if _aj_host_race; then
		note "aj_run: run again, a masked root-only file changed on the host while the jail was built: $(grep -o "on /newroot/[^:]*" "$AJ_TMP/err" | head -n1)"
		"${AJ_CMD[@]}" <"$AJ_STDIN" >"$AJ_TMP/out" 2>"$AJ_TMP/err"
		RC=$?
	fi
	if [ -n "$AJ_TTY" ]; then
		# Through a terminal: drop CRs and the terminal's echo of control characters (e.g. "^@"
		# or "^D" when script(1) forwards the end of its stdin), so the probe's line stands alone.
		OUT=$(tr -d '\r\000' <"$AJ_TMP/out" | sed 's/\^[@-_]//g')
	else
		OUT=$(tr -d '\r' <"$AJ_TMP/out")
	fi
	ERR=$(tr -d '\r' <"$AJ_TMP/err")
	AJ_LAST="[$AJ_WHO] ${AJ_CMD[*]}"
	return 0
}

_last_run_diag() {
	[ -n "${AJ_LAST:-}" ] || return 0
	diag "  last run: $AJ_LAST"
	diag "  exit: ${RC:-}"
	[ -n "${OUT:-}" ] && diag "  stdout: $(printf '%s' "$OUT" | head -c 2000)"
	[ -n "${ERR:-}" ] && diag "  stderr: $(printf '%s' "$ERR" | head -c 2000)"
	return 0
}

# Assertions on the last aj_run of a probe.
probe_ok() { # DESC — the probe ran and its operation succeeded
	if [ "$RC" = 0 ] && [ "$(printf '%s' "$OUT" | tail -n1)" = ok ]; then
		_tap_result 0 "$1"; return 0
	fi
	_tap_result 1 "$1"; _last_run_diag; return 1
}

probe_denied() { # DESC [ERRNO] — the probe ran and its operation failed (with ERRNO if given)
	local want=${2:-[0-9]+}
	if [ "$RC" = 1 ] && [[ $(printf '%s' "$OUT" | tail -n1) =~ ^errno=$want\  ]]; then
		_tap_result 0 "$1"; return 0
	fi
	_tap_result 1 "$1"
	[ -n "${2:-}" ] && diag "  expected errno=$2"
	_last_run_diag
	return 1
}

rc_is() { # EXPECTED DESC
	if [ "$RC" = "$1" ]; then _tap_result 0 "$2"; return 0; fi
	_tap_result 1 "$2"
	diag "  expected exit $1"
	_last_run_diag
	return 1
}

# Start a host listener (probe listen-*) in the background as root; waits for "ready".
# aj_listen NAME probe-args… — sets LISTEN_OUT to its first line ("ready [PORT]").
aj_listen() {
	local name=$1; shift
	"$PROBE" "$@" >"$AJ_TMP/listen-$name.out" 2>&1 &
	AJ_PIDS+=($!)
	local i
	for i in $(seq 1 250); do
		if grep -q '^ready' "$AJ_TMP/listen-$name.out" 2>/dev/null; then
			LISTEN_OUT=$(head -n1 "$AJ_TMP/listen-$name.out")
			return 0
		fi
		if ! kill -0 "$!" 2>/dev/null; then break; fi
		sleep 0.02
	done
	LISTEN_OUT=
	diag "listener $name did not start: $(cat "$AJ_TMP/listen-$name.out")"
	return 1
}

# aj_kill_tree SIG PID — signal PID and its descendants, children first: this test's processes
# only (several test runs share a machine: a pattern such as pkill -f takes would match theirs).
aj_kill_tree() {
	local sig=$1 pid=$2 c
	for c in $(pgrep -P "$pid" 2>/dev/null); do
		aj_kill_tree "$sig" "$c"
	done
	kill "-$sig" "$pid" 2>/dev/null
	return 0
}

# py EXPR — a Python expression over the JSON in $OUT (as `d`), printed
py() { printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>&1; }
# pyl EXPR — the same over JSON lines in $OUT (as the list `d`)
pyl() {
	printf '%s' "$OUT" |
		python3 -c "import json,sys; d=[json.loads(l) for l in sys.stdin if l.strip()]; print($1)" 2>&1
}

# fake_model_results LOG — the tool_result texts a client sent back to the scripted model
# (tests/helpers/fake_anthropic.py's --log), one per line, at most 4000 bytes
fake_model_results() {
	python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    for m in (r.get("body") or {}).get("messages", []):
        c = m.get("content")
        for b in c if isinstance(c, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                t = b.get("content")
                print(t if isinstance(t, str) else " ".join(x.get("text", "") for x in t))' \
		"$1" 2>/dev/null | head -c 4000
}

# aj_tmux ARGS… — tmux on the current identity's own server (socket in its test directory,
# or AJ_TMUX_SOCK), run as that identity
aj_tmux() {
	local sock=${AJ_TMUX_SOCK:-$AJ_TMP/$AJ_WHO/tmux.sock}
	if [ "$AJ_WHO" = user ] && aj_is_root; then
		setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups \
			env -i PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" tmux -S "$sock" "$@"
	else
		env -i PATH="$AJ_SYS_PATH" HOME="$HOMEDIR" tmux -S "$sock" "$@"
	fi
}

# aj_tmux_wait TARGET ERE [SECONDS] — until WHO's tmux pane TARGET shows ERE (default 10 s);
# SCREEN holds the last capture, which a failure shows
aj_tmux_wait() {
	local i n=$((${3:-10} * 20))
	for ((i = 0; i < n; i++)); do
		SCREEN=$(aj_tmux capture-pane -p -t "$1" 2>/dev/null)
		grep -Eq -- "$2" <<<"$SCREEN" && return 0
		sleep 0.05
	done
	diag "the pane never showed /$2/; it shows:"
	diag "$SCREEN"
	return 1
}

# A sorted listing of a tree (path, type, size, mode) for before/after comparisons.
aj_tree() {
	find "$@" -printf '%p %y %s %m\n' 2>/dev/null | LC_ALL=C sort
}

# --- user namespaces disabled (user.max_user_namespaces = 0 inside a test user namespace) ---
# ns_run CMD…: run CMD in a new user namespace mapping uids and gids 0-65535 to themselves, after
# setting max_user_namespaces to 0 there. The limit belongs to that namespace: the host's stays.
ns_run() {
	local q
	q=$(printf '%q ' "$@")
	unshare --user bash -c 'while [ -z "$(cat /proc/self/uid_map)" ]; do sleep 0.01; done
		# a new exec: capabilities in the namespace come with the mapped uid 0
		bash -c "echo 0 >/proc/sys/user/max_user_namespaces" || exit 99
		exec bash -c "$0"' "$q" <"$AJ_STDIN" >"$AJ_TMP/out" 2>"$AJ_TMP/err" &
	local pid=$! me i
	me=$(readlink /proc/self/ns/user)
	for i in $(seq 1 500); do
		[ "$(readlink "/proc/$pid/ns/user" 2>/dev/null)" != "$me" ] && break
		sleep 0.01
	done
	if ! { echo '0 0 65536' >"/proc/$pid/uid_map" && echo '0 0 65536' >"/proc/$pid/gid_map"; }; then
		kill "$pid"
	fi
	wait "$pid"
	RC=$?
	OUT=$(cat "$AJ_TMP/out")
	ERR=$(cat "$AJ_TMP/err")
	AJ_LAST="[$AJ_WHO] (max_user_namespaces=0) ${AJ_CMD[*]}"
}

# The Landlock backend's tests: NS=1 where runs can be made with user namespaces refused (root,
# the test user's uid mapped), else empty (said once). llrun WHO [aj_cmd options] -- ARGS…:
# agentjail ARGS as WHO, in such a namespace when NS is set, else directly.
aj_llrun_setup() {
	NS=
	if aj_is_root && [ "$(id -u "${AJ_USER:-root}")" -lt 65536 ]; then NS=1; fi
	[ -n "$NS" ] || diag "user namespaces stay allowed here (not root): the runs use the host as is"
}
llrun() {
	aj_cmd "$@"
	if [ -n "$NS" ]; then
		ns_run "${AJ_CMD[@]}"
	else
		"${AJ_CMD[@]}" <"$AJ_STDIN" >"$AJ_TMP/out" 2>"$AJ_TMP/err"
		RC=$?
		OUT=$(cat "$AJ_TMP/out")
		ERR=$(cat "$AJ_TMP/err")
		AJ_LAST="[$AJ_WHO] ${AJ_CMD[*]}"
	fi
}

# --- the real agents from npm, installed once per suite run -----------------------------------
# aj_npm_shared: the path of an npm prefix (bin/, lib/node_modules/) holding the real agents of
# AJ_NPM_AGENTS, or nothing (the test then installs or skips as it did alone). AJ_NPM_PREFIX,
# when set, is that prefix. Otherwise `make check` and `make t` set AJ_SUITE_DIR (in the build
# directory; `make check` empties it first) and the first test file to ask installs them there
# under a lock, while the others that ask wait for it: one download per suite run, not one per
# test file (41, 61, 83, 89, 98, 99). A package that failed to install is missing from the
# prefix, and aj_npm_why says why: the test skips with that reason rather than trying again
# itself (an unreachable registry cost each of them npm's retries, up to 10 minutes).
AJ_NPM_AGENTS=(@anthropic-ai/claude-code @openai/codex @google/gemini-cli
	@earendil-works/pi-coding-agent opencode-ai)
aj_npm_shared() {
	if [ -n "${AJ_NPM_PREFIX:-}" ]; then
		printf '%s' "$AJ_NPM_PREFIX"
		return 0
	fi
	[ -n "${AJ_SUITE_DIR:-}" ] && command -v npm >/dev/null 2>&1 || return 0
	local d=$AJ_SUITE_DIR/npm p
	mkdir -p "$AJ_SUITE_DIR" || return 0
	(
		flock 9 || exit 1
		[ -e "$d.done" ] && exit 0
		rm -rf -- "$d" "$d".*.log "$d.unreachable" && mkdir -m 0755 "$d" || exit 1
		if ! timeout 30 npm view --cache "$AJ_SUITE_DIR/npm-cache" @anthropic-ai/claude-code \
			version >"$d.view.log" 2>&1; then
			touch "$d.unreachable" # an empty prefix; aj_npm_why says why
		else
			for p in "${AJ_NPM_AGENTS[@]}"; do
				timeout 600 npm install -g --prefix "$d" --cache "$AJ_SUITE_DIR/npm-cache" \
					--no-audit --no-fund --loglevel=error "$p" >"$d.${p//\//_}.log" 2>&1
			done
			chmod -R a+rX "$d"
		fi
		touch "$d.done"
	) 9>"$AJ_SUITE_DIR/npm.lock"
	[ -e "$d.done" ] && printf '%s' "$d"
	return 0
}
# aj_npm_why PREFIX PACKAGE: when PREFIX is the suite's install (aj_npm_shared), prints why
# PACKAGE is missing from it (a skip's reason) and returns 0; else returns 1 (the test installs
# it itself, as alone).
aj_npm_why() {
	local d=$1 p=$2
	[ -n "$d" ] && [ -n "${AJ_SUITE_DIR:-}" ] && [ "$d" = "$AJ_SUITE_DIR/npm" ] &&
		[ -e "$d.done" ] || return 1
	if [ -e "$d.unreachable" ]; then
		printf 'the npm registry is not reachable: %s' "$(tail -n1 "$d.view.log" 2>/dev/null)"
	else
		printf 'npm install %s failed: %s' "$p" \
			"$(grep -v '^npm warn' "$d.${p//\//_}.log" 2>/dev/null | tail -n3 | tr '\n' ' ')"
	fi
	printf ' (the suite\x27s install in %s: `make check` empties it, or remove it)' "$AJ_SUITE_DIR"
	return 0
}
# aj_npm_copy FROM TO PACKAGE…: copies PACKAGEs (lib/node_modules/PACKAGE, and FROM's bin/ links
# into it) from the npm prefix FROM to a new prefix TO, for a test that needs only those: the
# suite's install holds every agent of AJ_NPM_AGENTS (1.3 GB; a copy of all of it took 11 s
# here, 7 s of it pi's 20,000 files; of claude, codex and gemini 0.5 s). A package FROM lacks
# is left out (the test skips it).
aj_npm_copy() {
	local from=$1 to=$2 p b
	shift 2
	mkdir -m 0755 "$to" && mkdir -p "$to/bin" "$to/lib/node_modules" || return 1
	for p in "$@"; do
		[ -d "$from/lib/node_modules/$p" ] || continue
		mkdir -p "$(dirname "$to/lib/node_modules/$p")" &&
			cp -a "$from/lib/node_modules/$p" "$(dirname "$to/lib/node_modules/$p")/" || return 1
		for b in "$from"/bin/*; do
			case $(readlink "$b") in
			../lib/node_modules/"$p"/*) cp -a "$b" "$to/bin/" || return 1 ;;
			esac
		done
	done
}

# aj_npm_claude DIR: the real claude in the npm prefix DIR (DIR/bin/claude, readable by all):
# copied from the suite's one install when it has it, else installed there by this test. When
# it cannot be had, prints why (the test skips with that) and fails.
aj_npm_claude() {
	local dir=$1 pkg=@anthropic-ai/claude-code prefix why
	prefix=$(aj_npm_shared)
	if [ -n "$prefix" ] && [ -x "$prefix/bin/claude" ]; then
		aj_npm_copy "$prefix" "$dir" "$pkg" || { echo "cannot copy $pkg from $prefix"; return 1; }
	elif why=$(aj_npm_why "$prefix" "$pkg"); then
		echo "$why"; return 1
	elif ! command -v npm >/dev/null 2>&1; then
		echo "npm is not installed"; return 1
	elif ! timeout 30 npm view --cache "$AJ_TMP/npm-cache" "$pkg" version \
		>/dev/null 2>"$AJ_TMP/npm-view.err"; then
		echo "the npm registry is not reachable: $(tail -n1 "$AJ_TMP/npm-view.err")"; return 1
	elif ! timeout 600 npm install -g --prefix "$dir" --cache "$AJ_TMP/npm-cache" --no-audit \
		--no-fund --loglevel=error "$pkg" >"$AJ_TMP/npm.log" 2>&1 || [ ! -x "$dir/bin/claude" ]; then
		echo "npm install $pkg failed: $(tail -n1 "$AJ_TMP/npm.log")"; return 1
	fi
	chmod -R a+rX "$dir"
}

# --- durations on a loaded machine ------------------------------------------------------------
# aj_base_ms WHO: how long a plain `agentjail run -- true` takes as WHO now, in ms (the median of
# 3). A check of a duration scales its limit by it (aj_limit_ms), measured in the same test
# just before: the suite runs several files at once on a machine other work shares, so a fixed
# limit fails when the machine is busy, while a hang (a timeout of seconds) still fails.
aj_base_ms() {
	local i t0 t1 v=()
	for i in 1 2 3; do
		t0=$EPOCHREALTIME
		aj_run "$1" -- run -- true
		t1=$EPOCHREALTIME
		v+=($(((${t1/./} - ${t0/./}) / 1000)))
	done
	printf '%s\n' "${v[@]}" | sort -n | sed -n 2p
}
# aj_limit_ms MIN BASE FACTOR [MAX]: FACTOR x BASE, at least MIN and at most MAX (when given)
aj_limit_ms() {
	local l=$(($2 * $3))
	[ "$l" -lt "$1" ] && l=$1
	[ -n "${4:-}" ] && [ "$l" -gt "$4" ] && l=$4
	echo "$l"
}
