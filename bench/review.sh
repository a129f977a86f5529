#!/bin/sh
# bench/review.sh BUILD: `make bench`'s --fs review figures (issue 30), as root and as an
# unprivileged user, each in a scratch workspace with its own $HOME and state directory: a jail
# changes all of 10,000 files (100 directories of 100), then `agentjail diff` and `agentjail
# apply` of that change set are timed, beside diff -ru and cp -a + sync over the same files.
# Lines: `bench: review-diff-10k-s`, `review-apply-10k-s` (suffix `-user` for the user), and
# the baselines `review-diff-ru-10k-s`, `review-cp-sync-10k-s`. Goals: diff under 2 s, apply
# under 5 s.
set -u
build=$1
tmp=$(mktemp -d /tmp/agentjail-bench-review.XXXXXX) || exit 1
user=
cleanup() {
	rm -rf -- "$tmp"
	[ -n "$user" ] && userdel "$user" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
chmod 0755 "$tmp"
mkdir -p "$tmp/bin" && install -m 0755 "$build/agentjail" "$build/agentjail-init" "$tmp/bin/" || exit 1

now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{printf "%.2f", $2 - $1}'; }

# bench WHO SUFFIX
bench() {
	who=$1 sfx=$2
	d=$tmp/$who
	mkdir -p "$d/ws" "$d/home" "$d/state"
	i=0
	while [ $i -lt 100 ]; do
		mkdir "$d/ws/d$i"
		j=0
		while [ $j -lt 100 ]; do
			echo "line $i $j" >"$d/ws/d$i/f$j.txt"
			j=$((j + 1))
		done
		i=$((i + 1))
	done
	as=
	if [ "$who" != root ] && [ "$(id -u)" -eq 0 ]; then
		chown -R "$who:" "$d"
		as="setpriv --reuid=$who --regid=$who --init-groups"
	fi
	aj() {
		$as env -i -C "$d/ws" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME="$d/home" USER="$who" LOGNAME="$who" SHELL=/bin/sh LANG=C.UTF-8 \
			AGENTJAIL_STATE_DIR="$d/state" "$tmp/bin/agentjail" "$@"
	}
	aj run --quiet --fs review -- sh -c 'for f in d*/f*; do echo changed >>"$f"; done' || {
		echo "bench: review-apply-10k-s$sfx skipped: the review run failed"
		return 1
	}
	up=$(ls -d "$d"/state/review/*/upper)
	t0=$(now)
	aj diff --last >"$d/out.diff" || return 1
	t1=$(now)
	diff -ru "$d/ws" "$up" >/dev/null
	t2=$(now)
	$as cp -a "$up" "$d/copy" && sync
	t3=$(now)
	aj apply --last >/dev/null || return 1
	t4=$(now)
	echo "bench: review-diff-10k-s$sfx $(secs "$t0" "$t1") (goal < 2; $(wc -l <"$d/out.diff") lines)"
	echo "bench: review-apply-10k-s$sfx $(secs "$t3" "$t4") (goal < 5)"
	echo "bench: review-diff-ru-10k-s$sfx $(secs "$t1" "$t2") (diff -ru over the same files)"
	echo "bench: review-cp-sync-10k-s$sfx $(secs "$t2" "$t3") (cp -a of the change set, sync)"
	grep -q changed "$d/ws/d99/f99.txt" || { echo "bench: apply left d99/f99.txt unchanged"; return 1; }
}

rc=0
if [ "$(id -u)" -eq 0 ]; then
	bench root "" || rc=1
	user=ajbench-rv-$$
	if useradd -M -U -d /nonexistent -s /bin/sh "$user" 2>"$tmp/useradd.err"; then
		bench "$user" -user || rc=1
	else
		echo "bench: review-apply-10k-s-user skipped: useradd failed: $(cat "$tmp/useradd.err")"
		user=
	fi
else
	bench "$(id -un)" -user || rc=1
fi
exit $rc
