#!/bin/sh
# bench/startup.sh BUILD: `make bench`'s start-up figures, as root and as an unprivileged user
# (issue 17). Each run happens in a scratch workspace with its own $HOME and state directory,
# so neither the user's tree nor their state is touched. As root, a temporary user (removed at
# the end) runs the second half with setpriv; as anyone else, only that half runs, as ourselves.
# Lines: `bench: startup-ratio`, `startup-ms`, `rss-kib` (suffix `-user` for the user),
# `net-allow-startup`, and the per-phase breakdown (bench/startup.c).
set -u
build=$1
pairs=${AJ_BENCH_PAIRS:-40}
tmp=$(mktemp -d /tmp/agentjail-bench.XXXXXX) || exit 1
user=
cleanup() {
	rm -rf -- "$tmp"
	[ -n "$user" ] && userdel "$user" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
chmod 0755 "$tmp"
mkdir -p "$tmp/bin" && install -m 0755 "$build/agentjail" "$build/agentjail-init" "$build/bench/startup" "$tmp/bin/" || exit 1

# bench WHO SUFFIX [RUN-OPTIONS...]: runs bench/startup as WHO in $tmp/WHO/ws
bench() {
	who=$1 sfx=$2
	shift 2
	d=$tmp/$who
	mkdir -p "$d/ws" "$d/home" "$d/state"
	set -- env -i -C "$d/ws" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$d/home" USER="$who" LOGNAME="$who" SHELL=/bin/sh LANG=C.UTF-8 TERM=xterm \
		AGENTJAIL_STATE_DIR="$d/state" AJ_BENCH_SUFFIX="$sfx" \
		"$tmp/bin/startup" "$tmp/bin/agentjail" "$@"
	if [ "$who" != root ] && [ "$(id -u)" -eq 0 ]; then
		chown -R "$who:" "$d"
		set -- setpriv --reuid="$who" --regid="$who" --init-groups "$@"
	fi
	"$@"
}

rc=0
if [ "$(id -u)" -eq 0 ]; then
	echo "== as root"
	bench root "" "$pairs" || rc=1
	bench root "" 30 --net allow || rc=1
	user=ajbench-$$
	if useradd -M -U -d /nonexistent -s /bin/sh "$user" 2>"$tmp/useradd.err"; then
		echo "== as an unprivileged user ($user)"
		bench "$user" -user "$pairs" || rc=1
	else
		echo "bench: startup-ratio-user skipped: useradd failed: $(cat "$tmp/useradd.err")"
		user=
	fi
else
	echo "== as $(id -un) (not root: the root half is skipped)"
	bench "$(id -un)" -user "$pairs" || rc=1
fi
exit $rc
