#!/usr/bin/env bash
# Developer toolchains inside the jail (issue 11): what runs on the user's PATH (pyenv's python,
# rustup's cargo and rustc, node and npm) runs the same inside; package caches are jail-private
# (the host's are never written, the workspace's next jail sees the first one's; another
# workspace's do not: tests/sh/72-cache-workspace.t); registry configuration
# comes without its credentials; mirror variables pass, their tokens do not; only
# <state>/cache and <state>/toolconf of agentjail's state dir reach a jail.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/toolchainlib.sh"
aj_setup
tc_setup
aj_skip_missing_whos "toolchains"

HOST_CACHES=(.cargo/registry .cargo/git .npm/_cacache .cache/pip)

for who in "${AJ_WHOS[@]}"; do
	tc_use "$who"
	declare -A before=()
	for c in "${HOST_CACHES[@]}"; do before[$c]=$(tc_hash "$TC_HOME/$c"); done

	# ---- python through pyenv
	if [ -n "$TC_PY_WHY" ]; then
		skip "$who: python3 through pyenv's shim" "$TC_PY_WHY"
		skip "$who: python3 -m venv and pip --version" "$TC_PY_WHY"
	else
		aj_run "$who" "${TC_ENV[@]}" -- run -- python3 -c 'import ssl, sqlite3, sys; print(sys.executable)'
		rc_is 0 "$who: python3 through pyenv's shim runs, with ssl and sqlite3"
		like "$OUT" "^$TC_HOME/\.pyenv/versions/" "$who: … and it is pyenv's python"
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'python3 -m venv venv && venv/bin/pip --version'
		like "$OUT" "^pip [0-9]" "$who: python3 -m venv, then the venv's pip --version"
	fi

	# ---- rust through rustup
	if [ -n "$TC_RUST_WHY" ]; then
		skip "$who: cargo and rustc through rustup's proxies" "$TC_RUST_WHY"
		skip "$who: cargo new + cargo build --offline" "$TC_RUST_WHY"
	else
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'cargo --version && rustc --version'
		like "$OUT" $'^cargo [0-9].*\nrustc [0-9]' "$who: cargo --version and rustc --version"
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c \
			'cargo new -q --vcs none hello && cd hello && cargo build -q --offline && ./target/debug/hello'
		is "$OUT" "Hello, world!" "$who: cargo new, cargo build --offline of a crate without dependencies"
	fi

	# ---- node and npm (the system's)
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		skip "$who: node and npm" "node or npm is not installed"
	else
		aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'node --version && npm --version && npm config get cache'
		like "$OUT" $'^v[0-9]+\\.[0-9.]+\n[0-9.]+\n'"$TC_HOME/\\.npm\$" \
			"$who: node and npm run; npm's cache is where it expects it (the private one)"
	fi

	# ---- --dry-run names the manager on each bind; doctor lists what it recognised
	if [ -z "$TC_PY_WHY$TC_RUST_WHY" ]; then
		aj_run "$who" "${TC_ENV[@]}" -- run --dry-run -- true
		like "$OUT" "--ro-bind-fd [0-9]+ $TC_HOME/\.pyenv +# pyenv: its install tree, read-only" \
			"$who: --dry-run binds pyenv's root read-only and names the manager"
		like "$OUT" "--ro-bind-fd [0-9]+ $TC_HOME/\.rustup/settings\.toml +# rustup: " \
			"$who: --dry-run binds rustup's settings"
		like "$OUT" "--bind-fd [0-9]+ $TC_HOME/\.cargo/registry +# fd [0-9]+ = $STATE/cache/ws/[0-9a-f]{32}/cargo-registry: private" \
			"$who: --dry-run mounts the workspace's private cargo registry from <state>/cache/ws/KEY"
		aj_run "$who" "${TC_ENV[@]}" -- doctor
		like "$OUT" $'\nok +toolchain\.pyenv +pyenv at '"$TC_HOME/\.pyenv" "$who: doctor lists pyenv"
		like "$OUT" $'\nok +toolchain\.rustup +rustup at '"$TC_HOME/\.rustup" "$who: doctor lists rustup"
		like "$OUT" $'\nok +cache +private package caches in '"$STATE/cache" "$who: doctor shows the caches' size"
	else
		skip "$who: --dry-run and doctor name the managers" "$TC_PY_WHY$TC_RUST_WHY"
	fi

	# ---- the caches are the jail's own: written inside, absent from the host, seen by the next
	marker="written by jail $who $$"
	aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c '
		for d in ~/.cargo/registry ~/.cargo/git ~/.npm/_cacache ~/.cache/pip; do
			mkdir -p "$d" && printf "%s\n" "$1" >"$d/aj-marker" || exit 1
		done; echo wrote' sh "$marker"
	is "$OUT" wrote "$who: a jail writes into cargo's, npm's and pip's caches"
	for c in "${HOST_CACHES[@]}"; do
		is "$(tc_hash "$TC_HOME/$c")" "${before[$c]}" \
			"$who: the host's ~/$c is unchanged (${before[$c]:0:12})"
	done
	aj_run "$who" "${TC_ENV[@]}" -- run -- sh -c 'cat ~/.cargo/registry/aj-marker ~/.npm/_cacache/aj-marker ~/.cache/pip/aj-marker'
	is "$OUT" "$marker"$'\n'"$marker"$'\n'"$marker" "$who: the workspace's second jail sees the first one's private caches"
	is "$(cat "$STATE"/cache/ws/*/npm/_cacache/aj-marker 2>&1)" "$marker" \
		"$who: they live in <state>/cache/ws/KEY on the host"
	aj_run "$who" -- cache clean
	rc_is 0 "$who: agentjail cache clean"
	[ -z "$(ls -A "$STATE/cache/ws")" ]
	ok $? "$who: … removes the workspace's caches"

	# ---- only <state>/cache and <state>/toolconf of the state dir are mounted
	aj_run "$who" "${TC_ENV[@]}" -- run -- cat /proc/self/mountinfo
	bad=$(printf '%s\n' "$OUT" | awk -v s="$STATE" '
		index($4, s) == 1 && index($4, s "/cache/") != 1 && index($4, s "/toolconf/") != 1')
	is "$bad" "" "$who: nothing of the state dir but its caches and filtered configs is mounted"
done

# ---- registry configuration without credentials, mirror variables without tokens (in the
# fixture's own homes: /root's files are not ours to change)
for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	mkdir -p "$HOMEDIR/.cargo" "$HOMEDIR/.config/pip"
	printf '%s\n' 'registry=https://npm.mirror.example/' \
		'//npm.mirror.example/:_authToken=npm_agentjailtestsecret1' >"$HOMEDIR/.npmrc"
	printf '%s\n' '[source.crates-io]' 'replace-with = "corp"' '[source.corp]' \
		'registry = "sparse+https://crates.mirror.example/"' '[registry]' \
		'token = "cio_agentjailtestsecret2"' >"$HOMEDIR/.cargo/config.toml"
	printf '%s\n' '[global]' 'index-url = https://me:agentjailtestsecret3@pypi.mirror.example/simple' \
		'extra-index-url = https://pypi.mirror.example/simple' >"$HOMEDIR/.config/pip/pip.conf"
	aj_chown "$HOMEDIR/.npmrc" "$HOMEDIR/.cargo" "$HOMEDIR/.config"
	mkdir -p "$HOMEDIR/.local/bin" && aj_chown "$HOMEDIR/.local" # npm on PATH: none needed
	aj_run "$who" -e PIP_INDEX_URL=https://pypi.mirror.example/simple \
		-e CARGO_REGISTRIES_CORP_INDEX=sparse+https://crates.mirror.example/ \
		-e CARGO_REGISTRIES_CORP_TOKEN=agentjailtestsecret4 \
		-e UV_INDEX_URL=https://me:agentjailtestsecret5@pypi.mirror.example/simple \
		-e GOPROXY=https://goproxy.mirror.example -- \
		run -- sh -c 'cat ~/.npmrc ~/.cargo/config.toml ~/.config/pip/pip.conf; env'
	rc_is 0 "$who: registry configuration is readable inside"
	like "$OUT" "registry=https://npm.mirror.example/" "$who: ~/.npmrc's registry line is there"
	like "$OUT" 'replace-with = "corp"' "$who: cargo's source replacement is there"
	like "$OUT" "extra-index-url = https://pypi.mirror.example/simple" "$who: pip's plain index is there"
	unlike "$OUT" "agentjailtestsecret" "$who: no token, password or URL credential reaches the jail"
	like "$OUT" "PIP_INDEX_URL=https://pypi.mirror.example/simple" "$who: PIP_INDEX_URL passes"
	like "$OUT" "CARGO_REGISTRIES_CORP_INDEX=sparse" "$who: CARGO_REGISTRIES_CORP_INDEX passes"
	like "$OUT" "GOPROXY=https://goproxy.mirror.example" "$who: GOPROXY passes"
	is "$(cat "$HOMEDIR/.npmrc" | grep -c agentjailtestsecret1)" 1 "$who: the host's ~/.npmrc is untouched"
done

done_testing
