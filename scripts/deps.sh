#!/bin/sh
# Install the Debian packages agentjail needs to build, run and test, when any is missing.
# Uses apt-get directly as root, through sudo otherwise. Prints nothing when all are present.
set -eu
PKGS="make gcc clang musl-tools pkg-config libseccomp-dev libjansson-dev libsqlite3-dev libc-ares-dev libidn2-dev libunistring-dev libcmocka-dev libncurses-dev libcurl4-openssl-dev libssl-dev bubblewrap scdoc \
perl git procps util-linux iproute2 python3 ca-certificates curl openssl tmux zsh fish bash-completion"
# --test: also what only the tests use. openssh-server's sshd is started by the tests
# themselves on 127.0.0.1 (a jail's ssh and git over ssh, --ssh-agent's signatures); Debian
# enables its ssh service when it is installed, so it is never installed for `./quickstart run`
# or `install`. apparmor's apparmor_parser parses agentjail's AppArmor profile
# (tests/sh/99-apparmor.t, parse only); podman with runc (crun refuses a host whose cgroup v2 has
# controllers beside v1's) runs agentjail in a real container (tests/sh/99-container.t). jq
# reads the agents' JSON config the jail wrote (tests/sh/61-agent-persist.t,
# 98-landlock-agents.t). openssh-client (ssh-agent, ssh-add, ssh-keygen) and gnupg
# (--gpg-agent's signed commit) are the user's own tools the agents' tests drive;
# python3-requests is one of the clients whose trust of the jail's CA bundle is checked. node
# and npm (the agents' tests install claude from the npm registry) only when no npm is on PATH:
# a host with another build of node (NodeSource's, which brings its own npm) keeps it.
TEST_PKGS="openssh-server apparmor podman runc jq openssh-client gnupg python3-requests"
if [ "${1:-}" = --test ]; then
	PKGS="$PKGS $TEST_PKGS"
	command -v npm >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
fi
missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0
echo "agentjail: installing Debian packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
	SUDO=""
elif command -v sudo >/dev/null 2>&1; then
	SUDO="sudo"
else
	echo "agentjail: need root (or sudo) to install:$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
