#!/usr/bin/env bash
# The shell completions in contrib/completions/ load without errors in bash, zsh and fish, and
# (bash, fish: they can be asked non-interactively) offer the commands, the agent profiles
# (agentjail profiles --json), option values and the session ids (agentjail sessions --json).
. "$(dirname "$0")/lib.sh"
aj_setup

dir=$AJ_SRC/contrib/completions
aj_use root
aj_run root -- run -- true
is "$RC" 0 "a session to complete exists" || diag "$ERR"
sid=$(cd "$WS" && HOME=$HOMEDIR AGENTJAIL_STATE_DIR=$STATE "$AJ_BIN/agentjail" sessions --json |
	sed -n 's/^    "id": "\([^"]*\)".*/\1/p' | head -1)
[ -n "$sid" ]
ok $? "sessions --json gives its id"
# the completions call `agentjail` from PATH, in the workspace, with this identity's state
cenv=(env -C "$WS" HOME="$HOMEDIR" AGENTJAIL_STATE_DIR="$STATE" PATH="$AJ_BIN:$AJ_SYS_PATH")

# bash: source it, ask the function
bc() { # WORDS… (the last is the word being completed)
	"${cenv[@]}" bash --norc --noprofile -c '
		. "$1" || exit 3; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _agentjail; printf "%s\n" "${COMPREPLY[@]}"' \
		bash "$dir/agentjail.bash" "$@"
}
out=$("${cenv[@]}" bash --norc --noprofile -c '. "$1" && complete -p agentjail' bash "$dir/agentjail.bash" 2>&1)
like "$out" '^complete .*-F _agentjail agentjail$' "bash: it loads and registers _agentjail"
out=$(bc agentjail "" 2>&1)
like "$out" $'(^|\n)run(\n|$)' "bash: commands" && like "$out" $'(^|\n)claude(\n|$)' "bash: agent profiles"
out=$(bc agentjail run --net "" 2>&1)
is "$(sort <<<"$out" | tr '\n' ' ')" "allow ask off on " "bash: --net values"
out=$(bc agentjail run --fs w 2>&1)
is "$out" "workspace-write" "bash: --fs values"
out=$(bc agentjail run --backend "" 2>&1)
is "$(sort <<<"$out" | tr '\n' ' ')" "landlock local opensandbox " "bash: --backend values"
out=$(bc agentjail run --al 2>&1)
like "$out" 'allow-domain' "bash: run's options"
out=$(bc agentjail "" 2>&1)
like "$out" $'(^|\n)quarantine(\n|$)' "bash: the quarantine command"
out=$(bc agentjail quarantine "" 2>&1)
like "$out" $'(^|\n)restore(\n|$)' "bash: quarantine restore" && like "$out" "$sid" "bash: session ids for quarantine"
out=$(bc agentjail quarantine restore --y 2>&1)
is "$out" "--yes" "bash: quarantine restore --yes"
out=$(bc agentjail run --qu 2>&1)
is "$out" "--quiet" "bash: run --quiet"
out=$(bc agentjail claude --qu 2>&1)
is "$out" "--quiet" "bash: an agent's --quiet"
out=$(bc agentjail show "" 2>&1)
like "$out" "$sid" "bash: session ids for show"
out=$(bc agentjail run --home "" 2>&1)
is "$(sort <<<"$out" | tr '\n' ' ')" "persist tmp " "bash: --home values"
out=$(bc agentjail home "" 2>&1)
like "$out" $'(^|\n)clean(\n|$)' "bash: home clean" && like "$out" "$sid" "bash: session ids for home"

# bash completions are loaded by the bash-completion package: the dependencies install it, and
# with it bash finds ours where ./quickstart installs them for a user (PREFIX ~/.local: its
# XDG_DATA_HOME; root's /usr/local/share is in its default XDG_DATA_DIRS)
grep -qw bash-completion "$AJ_SRC/scripts/deps.sh"
ok $? "scripts/deps.sh installs bash-completion"
bcomp=/usr/share/bash-completion/bash_completion
if [ -r "$bcomp" ]; then
	pfx=$HOMEDIR/.local
	make -s --no-print-directory -C "$AJ_SRC" SAN="${AJ_SAN:-}" PREFIX="$pfx" install >"$AJ_TMP/inst.out" 2>&1
	ok $? "make install PREFIX=… for the completion" || diag "$(cat "$AJ_TMP/inst.out")"
	out=$(env -C "$WS" HOME="$HOMEDIR" PATH="$pfx/bin:$AJ_SYS_PATH" bash --norc --noprofile -c '
		. "$1" >/dev/null 2>&1; __load_completion agentjail; complete -p agentjail' bash "$bcomp" 2>&1)
	like "$out" '-F _agentjail agentjail$' "bash-completion loads ours from ~/.local/share (make install PREFIX=~/.local)"
else
	skip "bash-completion loads ours from ~/.local/share" "the bash-completion package is not installed (scripts/deps.sh installs it)"
fi

if command -v zsh >/dev/null 2>&1; then
	out=$(zsh -n "$dir/_agentjail" 2>&1)
	is "$out" "" "zsh: the file parses"
	out=$("${cenv[@]}" zsh -f -c '
		fpath=("$1" $fpath); autoload -Uz compinit && compinit -u -d "$2/zcompdump" || exit 3
		autoload +X _agentjail || exit 4; print -r -- "$_comps[agentjail]"' zsh "$dir" "$AJ_TMP" 2>&1)
	is "$out" "_agentjail" "zsh: compinit loads it for agentjail"
	grep -q "'quarantine:" "$dir/_agentjail" && grep -q -- "--quiet\[" "$dir/_agentjail"
	ok $? "zsh: it has quarantine and --quiet"
	grep -q "'home:" "$dir/_agentjail" && grep -q -- "--home\[.*(tmp persist)" "$dir/_agentjail"
	ok $? "zsh: it has home and --home"
else
	skip "zsh: the completion loads" "zsh is not installed (scripts/deps.sh installs it)"
fi

if command -v fish >/dev/null 2>&1; then
	fc() { "${cenv[@]}" fish --no-config -c "source '$dir/agentjail.fish'; and complete -C'$1'" 2>&1 | cut -f1; }
	out=$("${cenv[@]}" fish --no-config -c "source '$dir/agentjail.fish'" 2>&1)
	is "$out" "" "fish: it loads without errors"
	out=$(fc 'agentjail ')
	like "$out" $'(^|\n)run(\n|$)' "fish: commands" && like "$out" $'(^|\n)claude(\n|$)' "fish: agent profiles"
	out=$(fc 'agentjail run --net ')
	is "$(sort <<<"$out" | tr '\n' ' ')" "allow ask off on " "fish: --net values"
	out=$(fc 'agentjail claude --fs ')
	like "$out" 'danger-full-access' "fish: --fs values for an agent"
	out=$(fc 'agentjail run --backend ')
	like "$out" 'landlock' "fish: --backend values for run"
	out=$(fc 'agentjail ')
	like "$out" $'(^|\n)quarantine(\n|$)' "fish: the quarantine command"
	out=$(fc 'agentjail quarantine ')
	like "$out" $'(^|\n)restore(\n|$)' "fish: quarantine restore"
	out=$(fc 'agentjail quarantine --')
	like "$out" $'(^|\n)--all(\n|$)' "fish: quarantine --all"
	out=$(fc 'agentjail run --qu')
	is "$out" "--quiet" "fish: run --quiet"
	out=$(fc 'agentjail show ')
	like "$out" "$sid" "fish: session ids for show"
	out=$(fc 'agentjail claude --home ')
	is "$(sort <<<"$out" | tr '\n' ' ')" "persist tmp " "fish: --home values for an agent"
	out=$(fc 'agentjail home ')
	like "$out" $'(^|\n)clean(\n|$)' "fish: home clean"
else
	skip "fish: the completion loads" "fish is not installed (scripts/deps.sh installs it)"
fi
done_testing
