#!/usr/bin/env bash
# tests/hostile-host.sh CMD… — run CMD (e.g. `make t T=tests/sh/20-doctor.t`) on a host that has
# everything the tests must not depend on (issue 24 item 14): every agent installed (stand-ins
# named claude, codex, gemini, kiro-cli, pi, opencode and aider on /usr/local/bin and /usr/bin),
# and a caller whose environment sets proxies that go nowhere, an ssh-agent, XDG directories
# with an agentjail config.toml that is not even valid, a ~/.gitconfig that signs every commit
# (with no key), AGENTJAIL_* defaults, GIT_DIR, a locale that does not exist and umask 077.
# A test that passes on a clean host and fails here depends on the host.
#
# Root only: the stand-ins are laid over /usr/local/bin and /usr/bin with overlayfs in a mount
# namespace of CMD's own; the host's directories are never touched. Everything made is under
# one temporary directory, removed at the end.
set -eu
[ "$(id -u)" -eq 0 ] || { echo "hostile-host.sh: needs root (a mount namespace with overlays)" >&2; exit 2; }
[ $# -gt 0 ] || { echo "usage: tests/hostile-host.sh CMD…" >&2; exit 2; }

H=$(mktemp -d /tmp/agentjail-hostile.XXXXXX)
trap 'rm -rf "$H"' EXIT
chmod 0755 "$H"
mkdir -p "$H/bin" "$H/home/.config/agentjail" "$H/xdg/config/agentjail"
for a in claude codex gemini kiro-cli pi opencode aider; do
	printf '#!/bin/sh\necho "host-%s 6.6.6 (installed on this host)"\nexit 0\n' "$a" >"$H/bin/$a"
done
chmod 0755 "$H/bin"/*
printf '[commit]\n\tgpgsign = true\n[init]\n\tdefaultBranch = trunk\n' >"$H/home/.gitconfig"
for d in "$H/home/.config/agentjail" "$H/xdg/config/agentjail"; do
	printf '[run]\nnet = "on"\n' >"$d/config.toml"
done

set +e
unshare -m --propagation private bash -c '
	H=$1; shift
	mount -t overlay overlay -o "lowerdir=$H/bin:/usr/local/bin" /usr/local/bin &&
		mount -t overlay overlay -o "lowerdir=$H/bin:/usr/bin" /usr/bin || exit 125
	export HOME=$H/home XDG_CONFIG_HOME=$H/xdg/config XDG_STATE_HOME=$H/xdg/state \
		XDG_DATA_HOME=$H/xdg/data XDG_CACHE_HOME=$H/xdg/cache \
		HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 http_proxy=http://127.0.0.1:9 \
		https_proxy=http://127.0.0.1:9 ALL_PROXY=socks5://127.0.0.1:9 NO_PROXY=example.invalid \
		SSH_AUTH_SOCK=$H/agent.sock npm_config_prefix=$H/npm GIT_CONFIG_GLOBAL=$H/home/.gitconfig \
		GIT_AUTHOR_NAME=host GIT_DIR=/nonexistent-gitdir \
		AGENTJAIL_NET=on AGENTJAIL_FS=read-only AGENTJAIL_MEMORY=1G \
		LC_ALL=xx_XX.UTF-8 LANGUAGE=xx NO_COLOR=1
	umask 077
	exec "$@"' hostile-host "$H" "$@"
