#!/usr/bin/env bash
# The home's files that run code later (issue 24 item 5, doc/design.md §3b, bw_home_code):
# wherever a writable bind covers them — the workspace is $HOME, --rw ~/.config, --rw ~/.ssh,
# --rw ~/.local, a dotfiles checkout that ~/.gitconfig points into — they are read-only in the
# jail, and the missing ones are watched and moved aside when they appear. Before, only .bashrc
# and .profile were: the jail could plant fsmonitor in ~/.gitconfig, a key in
# ~/.ssh/authorized_keys, a user service, or a command on PATH in ~/.local/bin.
. "$(dirname "$0")/lib.sh"
aj_setup

# on the host after the run: FILE still holds "original" (or is still absent: "-")
host_has() { # FILE WANT DESC
	local got=-
	[ -e "$1" ] && got=$(cat "$1" 2>/dev/null)
	is "$got" "$2" "$3"
}

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	rm -rf "${HOMEDIR:?}"/* "${HOMEDIR:?}"/.[!.]* "${STATE:?}"/*
	mkdir -p "$HOMEDIR/.ssh" "$HOMEDIR/.config/git" "$HOMEDIR/.local/bin" "$HOMEDIR/dotfiles"
	for f in .gitconfig .npmrc .zshenv .bash_logout .ssh/authorized_keys .ssh/config \
		.config/git/config dotfiles/gitconfig; do
		printf 'original\n' >"$HOMEDIR/$f"
	done
	aj_chown "$HOMEDIR"

	# --- the workspace is $HOME ---------------------------------------------------------------
	for f in .gitconfig .npmrc .zshenv .bash_logout .ssh/authorized_keys .ssh/config \
		.config/git/config; do
		aj_run "$who" -C "$HOMEDIR" -- run --workspace "$HOMEDIR" -- sh -c "echo planted >'$f'"
		host_has "$HOMEDIR/$f" original "$who: --workspace ~: existing ~/$f is read-only"
	done
	aj_run "$who" -C "$HOMEDIR" -- run --workspace "$HOMEDIR" -- sh -c \
		'echo planted >.local/bin/git; chmod +x .local/bin/git'
	host_has "$HOMEDIR/.local/bin/git" - "$who: --workspace ~: nothing is added to ~/.local/bin (on PATH)"
	for f in .zlogin .bash_login .ssh/rc .ssh/authorized_keys2 .yarnrc.yml; do
		aj_run "$who" -C "$HOMEDIR" -- run --workspace "$HOMEDIR" -- sh -c "echo planted >'$f'"
		host_has "$HOMEDIR/$f" - "$who: --workspace ~: ~/$f made in the jail is not left on the host"
		like "$ERR" "agentjail: .*$f" "$who: … and stderr names it"
	done
	aj_run "$who" -C "$HOMEDIR" -- run --workspace "$HOMEDIR" -- sh -c \
		'mkdir -p .config/systemd/user .config/autostart;
		 echo "[Service]" >.config/systemd/user/evil.service;
		 echo "[Desktop Entry]" >.config/autostart/evil.desktop; true'
	host_has "$HOMEDIR/.config/systemd/user/evil.service" - \
		"$who: --workspace ~: no user service is left on the host"
	host_has "$HOMEDIR/.config/autostart/evil.desktop" - \
		"$who: --workspace ~: no autostart entry is left on the host"
	aj_run "$who" -C "$HOMEDIR" -- run --workspace "$HOMEDIR" -- sh -c 'echo mine >notes.txt'
	rc_is 0 "$who: --workspace ~: an ordinary file is written"
	host_has "$HOMEDIR/notes.txt" mine "$who: … and kept"

	# --- parts of $HOME made writable ---------------------------------------------------------
	aj_run "$who" -- run --rw "$HOMEDIR/.config" -- sh -c "echo planted >'$HOMEDIR/.config/git/config'"
	host_has "$HOMEDIR/.config/git/config" original "$who: --rw ~/.config: ~/.config/git/config is read-only"
	aj_run "$who" -- run --rw "$HOMEDIR/.config" -- sh -c \
		"mkdir -p '$HOMEDIR/.config/fish' && echo planted >'$HOMEDIR/.config/fish/config.fish'"
	host_has "$HOMEDIR/.config/fish/config.fish" - "$who: --rw ~/.config: no fish config is left on the host"
	aj_run "$who" -- run --rw "$HOMEDIR/.config" -- sh -c "echo mine >'$HOMEDIR/.config/tool.conf'"
	host_has "$HOMEDIR/.config/tool.conf" mine "$who: --rw ~/.config: another program's file is written"
	aj_run "$who" -- run --rw "$HOMEDIR/.ssh" -- sh -c "echo planted >>'$HOMEDIR/.ssh/authorized_keys'"
	host_has "$HOMEDIR/.ssh/authorized_keys" original "$who: --rw ~/.ssh: authorized_keys is read-only"
	aj_run "$who" -- run --rw "$HOMEDIR/.ssh" -- sh -c "echo planted >'$HOMEDIR/.ssh/rc'"
	host_has "$HOMEDIR/.ssh/rc" - "$who: --rw ~/.ssh: no ~/.ssh/rc is left on the host"
	aj_run "$who" -- run --rw "$HOMEDIR/.local" -- sh -c "echo planted >'$HOMEDIR/.local/bin/ls'"
	host_has "$HOMEDIR/.local/bin/ls" - "$who: --rw ~/.local: ~/.local/bin is read-only"
	# a dotfiles checkout behind ~/.gitconfig
	rm -f "$HOMEDIR/.gitconfig"
	ln -s dotfiles/gitconfig "$HOMEDIR/.gitconfig"
	aj_chown "$HOMEDIR/.gitconfig"
	aj_run "$who" -- run --rw "$HOMEDIR/dotfiles" -- sh -c "echo planted >'$HOMEDIR/dotfiles/gitconfig'"
	host_has "$HOMEDIR/dotfiles/gitconfig" original \
		"$who: --rw ~/dotfiles: the gitconfig ~/.gitconfig points to is read-only"
	aj_run "$who" -- run --rw "$HOMEDIR/dotfiles" -- sh -c "echo mine >'$HOMEDIR/dotfiles/other'"
	host_has "$HOMEDIR/dotfiles/other" mine "$who: … the rest of the checkout is written"
done
aj_skip_missing_whos "the home's files that run code"

done_testing
