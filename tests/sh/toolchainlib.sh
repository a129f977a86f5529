# shellcheck shell=bash
# tests/sh/toolchainlib.sh — the developer toolchains the live tests use (70-toolchains.t,
# 71-compat.t). Source after lib.sh and aj_setup, then call tc_setup.
#
# root uses the machine's own installs: pyenv in /root/.pyenv, rustup + cargo in /root/.rustup
# and /root/.cargo (HOME=/root for its jails; nothing is written there: the state dir is the
# fixture's). The unprivileged user cannot enter /root (0700), so it gets user-local installs in
# its own $HOME built from the same trees with hard links (cp -al): the real rustup toolchain and
# the real pyenv program (its shims regenerated with `pyenv rehash` for the new root), with no
# copy of their data (a full copy of the Python version alone took 27 s here, hard links take
# ~3 s; the files stay root's and read-only to the user). pyenv's version for the user is the
# system python in pyenv's layout: a relocated CPython build still loads its libpython from
# /root (its RUNPATH). The links are removed before the fixture's cleanup, which would
# otherwise chmod through them.
#
# tc_use WHO sets TC_HOME, TC_PATH, TC_PY (pyenv usable: "" or a skip reason in TC_PY_WHY),
# TC_RUST (likewise, TC_RUST_WHY) and TC_ENV (aj_run options: -e HOME=… -e PATH=…).

TC_ROOT_PYENV=/root/.pyenv
TC_ROOT_CARGO=/root/.cargo
TC_ROOT_RUSTUP=/root/.rustup
TC_LINKED=()

_tc_cleanup() {
	local d
	for d in "${TC_LINKED[@]}"; do
		[ -n "$d" ] && rm -rf -- "$d"
	done
	aj_cleanup
}

_tc_root_py() {
	[ -x "$TC_ROOT_PYENV/libexec/pyenv" ] || { echo "no pyenv in $TC_ROOT_PYENV"; return; }
	local v
	v=$(PYENV_ROOT=$TC_ROOT_PYENV "$TC_ROOT_PYENV/libexec/pyenv" version-name 2>/dev/null)
	[ -n "$v" ] && [ -d "$TC_ROOT_PYENV/versions/$v" ] ||
		{ echo "pyenv in $TC_ROOT_PYENV has no usable version"; return; }
	PATH=$TC_ROOT_PYENV/shims:$AJ_SYS_PATH command -v python3 >/dev/null ||
		echo "python3 is not on PATH through pyenv's shims"
}

_tc_root_rust() {
	[ -x "$TC_ROOT_CARGO/bin/cargo" ] || { echo "no cargo in $TC_ROOT_CARGO/bin"; return; }
	[ -f "$TC_ROOT_RUSTUP/settings.toml" ] || echo "no rustup settings in $TC_ROOT_RUSTUP"
}

# The user's installs, hard-linked from root's (same filesystem needed).
_tc_make_user() {
	aj_use user
	local h=$HOMEDIR
	if [ -z "$TC_ROOT_PY_WHY" ]; then
		local v p
		mkdir -p "$h/.pyenv/versions" "$h/.pyenv/shims"
		TC_LINKED+=("$h/.pyenv")
		# pyenv itself is the real one; its version is the system's python in pyenv's
		# layout (versions/V/bin/python3): a hard-linked CPython build keeps its RUNPATH in
		# /root and loads Debian's libpython instead ("undefined symbol: _PyModule_Add")
		v=system-$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
		if cp -al "$TC_ROOT_PYENV/bin" "$TC_ROOT_PYENV/libexec" "$TC_ROOT_PYENV/pyenv.d" \
			"$h/.pyenv/" 2>"$AJ_TMP/tc.err" && mkdir -p "$h/.pyenv/versions/$v/bin"; then
			local py
			py=$(readlink -f /usr/bin/python3)
			for p in python python3 "$(basename "$py")"; do
				ln -sf "$py" "$h/.pyenv/versions/$v/bin/$p"
			done
			printf '%s\n' "$v" >"$h/.pyenv/version"
			find "$h/.pyenv" -type d -exec chown "$AJ_USER:" {} +
			chown "$AJ_USER:" "$h/.pyenv/version"
			aj_host env PYENV_ROOT="$h/.pyenv" "$h/.pyenv/libexec/pyenv" rehash \
				>>"$AJ_TMP/tc.err" 2>&1 ||
				TC_USER_PY_WHY="pyenv rehash for the user failed: $(cat "$AJ_TMP/tc.err")"
		else
			TC_USER_PY_WHY="cannot hard-link pyenv into the user's home: $(cat "$AJ_TMP/tc.err")"
		fi
	fi
	if [ -z "$TC_ROOT_RUST_WHY" ]; then
		local tc
		tc=$(sed -n 's/^default_toolchain = "\(.*\)"/\1/p' "$TC_ROOT_RUSTUP/settings.toml")
		mkdir -p "$h/.rustup/toolchains" "$h/.cargo/bin"
		TC_LINKED+=("$h/.rustup" "$h/.cargo")
		if [ -n "$tc" ] && cp -al "$TC_ROOT_RUSTUP/toolchains/$tc" "$h/.rustup/toolchains/" \
			2>"$AJ_TMP/tc.err" && cp -l "$TC_ROOT_CARGO/bin/rustup" "$h/.cargo/bin/" \
			2>>"$AJ_TMP/tc.err"; then
			# rustup's settings, as rustup writes them
			printf 'version = "12"\ndefault_toolchain = "%s"\nprofile = "default"\n\n[overrides]\n' \
				"$tc" >"$h/.rustup/settings.toml"
			local p
			for p in cargo rustc rustdoc; do ln -s rustup "$h/.cargo/bin/$p"; done
			find "$h/.rustup" "$h/.cargo" -type d -exec chown "$AJ_USER:" {} +
			chown -h "$AJ_USER:" "$h/.rustup/settings.toml" "$h/.cargo/bin/"{cargo,rustc,rustdoc}
		else
			TC_USER_RUST_WHY="cannot hard-link rustup into the user's home: $(cat "$AJ_TMP/tc.err")"
		fi
	fi
}

tc_setup() {
	trap _tc_cleanup EXIT
	TC_ROOT_PY_WHY=$(_tc_root_py)
	TC_ROOT_RUST_WHY=$(_tc_root_rust)
	TC_USER_PY_WHY=$TC_ROOT_PY_WHY
	TC_USER_RUST_WHY=$TC_ROOT_RUST_WHY
	if aj_is_root && [[ " ${AJ_WHOS[*]} " == *" user "* ]]; then
		_tc_make_user
	fi
}

tc_use() { # WHO
	aj_use "$1"
	if [ "$1" = root ]; then
		TC_HOME=/root
		TC_PY_WHY=$TC_ROOT_PY_WHY
		TC_RUST_WHY=$TC_ROOT_RUST_WHY
	else
		TC_HOME=$HOMEDIR
		TC_PY_WHY=$TC_USER_PY_WHY
		TC_RUST_WHY=$TC_USER_RUST_WHY
	fi
	TC_PATH=$TC_HOME/.cargo/bin:$TC_HOME/.pyenv/shims:$TC_HOME/.pyenv/bin:$AJ_SYS_PATH
	TC_ENV=(-e HOME="$TC_HOME" -e PATH="$TC_PATH")
}

# A content hash of a host directory, or "absent".
tc_hash() {
	[ -e "$1" ] || { echo absent; return; }
	(cd "$1" && find . -printf '%p %y %s %m %T@\n' | LC_ALL=C sort && find . -type f -print0 |
		LC_ALL=C sort -z | xargs -0r sha256sum) | sha256sum | cut -d' ' -f1
}
