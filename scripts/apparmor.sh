#!/bin/sh
# agentjail's AppArmor profile (contrib/apparmor/agentjail.in) for `make install` / `uninstall`.
#   scripts/apparmor.sh render BIN                 the profile for the binary BIN, on stdout
#   scripts/apparmor.sh install DESTDIR DIR BIN MODE
#   scripts/apparmor.sh uninstall DESTDIR DIR
# MODE: auto (install where /etc/apparmor.d exists and apparmor_parser accepts the profile),
# 1 (install whatever the host has: a package build), 0 (never). The profile is loaded
# (apparmor_parser -r) only for a real install (no DESTDIR), as root, on a kernel with AppArmor;
# uninstall unloads it the same way. Each step says what it did or why not.
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
tmpl=$src/contrib/apparmor/agentjail.in

render() { sed "s|@AGENTJAIL@|$1|g" "$tmpl"; }

# Whether this kernel has AppArmor enabled (profiles can be loaded).
kernel_aa() {
	[ -d /sys/kernel/security/apparmor ] ||
		[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]
}

case "${1:-}" in
render)
	render "$2" ;;
install)
	destdir=$2 dir=$3 bin=$4 mode=$5
	[ "$mode" = 0 ] && exit 0
	if [ "$mode" = auto ]; then
		if [ ! -d /etc/apparmor.d ]; then
			exit 0 # no AppArmor here: nothing to say
		fi
		if ! command -v apparmor_parser >/dev/null 2>&1; then
			echo "AppArmor profile not installed: /etc/apparmor.d exists but apparmor_parser does not (AppArmor is not in use here)"
			exit 0
		fi
		tmp=$(mktemp)
		render "$bin" >"$tmp"
		if ! err=$(apparmor_parser -Q -K "$tmp" 2>&1); then
			rm -f "$tmp"
			echo "AppArmor profile not installed: $(apparmor_parser --version | head -n1) does not accept it ($(printf '%s' "$err" | grep -v '^Cache' | tail -n1)); an AppArmor without the userns rule (before 4.0) does not restrict user namespaces, so agentjail needs no profile here"
			exit 0
		fi
		rm -f "$tmp"
		# a user's install (PREFIX=~/.local) cannot write the system's profiles: say how, as
		# root, and go on (the binary is installed; doctor says what is missing)
		if [ -z "$destdir" ] && [ -d "$dir" ] && [ ! -w "$dir" ]; then
			echo "AppArmor profile not installed: $dir is not writable by this user; as root: sudo $src/scripts/apparmor.sh install '' $dir $bin 1 (it grants userns to whatever program is at $bin, so only where others cannot write that path), or install agentjail as root (sudo make install)"
			exit 0
		fi
	fi
	install -d "$destdir$dir"
	render "$bin" >"$destdir$dir/agentjail"
	chmod 0644 "$destdir$dir/agentjail"
	echo "installed the AppArmor profile $destdir$dir/agentjail (userns for $bin)"
	if [ -z "$destdir" ] && [ "$(id -u)" -eq 0 ] && kernel_aa && command -v apparmor_parser >/dev/null 2>&1; then
		if apparmor_parser -r "$dir/agentjail"; then
			echo "loaded it (apparmor_parser -r $dir/agentjail)"
		else
			echo "warning: could not load it: apparmor_parser -r $dir/agentjail failed (agentjail doctor says what is loaded)" >&2
		fi
	elif [ -z "$destdir" ]; then
		echo "not loaded now ($( [ "$(id -u)" -eq 0 ] || echo 'not root; ')$(kernel_aa || echo 'this kernel has no AppArmor; ')it is loaded at the next boot, or: sudo apparmor_parser -r $dir/agentjail)"
	fi ;;
uninstall)
	destdir=$2 dir=$3
	f=$destdir$dir/agentjail
	[ -e "$f" ] || exit 0
	if [ -z "$destdir" ] && [ "$(id -u)" -eq 0 ] && kernel_aa && command -v apparmor_parser >/dev/null 2>&1; then
		apparmor_parser -R "$f" 2>/dev/null && echo "unloaded the AppArmor profile agentjail" || true
	fi
	rm -f "$f" && echo "removed $f" ;;
*)
	echo "usage: scripts/apparmor.sh render BIN | install DESTDIR DIR BIN MODE | uninstall DESTDIR DIR" >&2
	exit 2 ;;
esac
