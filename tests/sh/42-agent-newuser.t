#!/bin/bash
# An agent's state lasts for a brand-new user (issue 24 item 9): with a $HOME that holds nothing
# but the agent's program, `agentjail NAME` makes the profile's writable dirs and their missing
# parents (~/.config, ~/.local/share, ~/.cache, ~/.pi: mode 0700), says nothing about state that
# "will not last", what the agent writes there is on the host afterwards, and `resume` finds it.
# Every built-in profile, as root and as the unprivileged user, with a stand-in agent that writes
# into each of its writable dirs (their list comes from `agentjail profiles --json`; one that is
# also private, the host's entries read-only inside it, keeps what the jail writes for the
# workspace's next jail instead: tests/sh/43-agent-private.t).
. "$(dirname "$0")/lib.sh"
aj_setup

PROFILES=$("$AJ_BIN/agentjail" profiles --json | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    dirs = [d[2:] for d in p["rw"] if d.startswith("~/") and d.endswith("/")]
    host = [d for d in dirs if "~/" + d not in p.get("private_over", [])]
    print(p["name"], p["exe"][0], ":".join(host), " ".join(dirs))')
[ -n "$PROFILES" ] || bail "agentjail profiles --json listed no profile"

# A stand-in agent: prints what an earlier run left in each writable dir, then leaves a marker.
stand_in() { # PATH DIR...
	local f=$1 d
	shift
	{
		echo '#!/bin/sh'
		for d in "$@"; do
			echo "if [ -e \"\$HOME/$d/marker\" ]; then echo \"seen $d: \$(cat \"\$HOME/$d/marker\")\"; fi"
			echo "echo \"run \$\$\" >\"\$HOME/$d/marker\" || echo \"cannot write $d\""
		done
		echo 'exit 0'
	} >"$f"
	chmod 0755 "$f"
}

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	while read -r name exe host dirs; do
		# a new user's home: nothing but ~/bin with the agent
		H=$AJ_TMP/$who/fresh-$name
		mkdir -m 0755 "$H" "$H/bin"
		# shellcheck disable=SC2086
		stand_in "$H/bin/$exe" $dirs
		aj_chown "$H"
		aj_run "$who" -e HOME="$H" -e PATH="$H/bin:$AJ_SYS_PATH" -- "$name"
		rc_is 0 "$who: $name: runs for a user whose home is empty"
		unlike "$ERR" 'cannot create|will not last' "$who: $name: no warning that its state will not last"
		unlike "$OUT" 'cannot write' "$who: $name: it could write each of its dirs"
		for d in ${host//:/ }; do
			[ -f "$H/$d/marker" ]
			ok $? "$who: $name: what it wrote in ~/$d is on the host"
		done
		# the parents made for it: 0700, owned by the user
		bad=
		for d in $dirs; do
			p=$d
			while :; do
				m=$(stat -c '%a %U' "$H/$p" 2>/dev/null)
				[ "$m" = "700 $RUN_NAME" ] || bad+=" ~/$p:${m:-missing}"
				case $p in */*) p=${p%/*} ;; *) break ;; esac
			done
		done
		is "$bad" "" "$who: $name: each dir it needed, parents included, was made 0700 and is the user's"
		aj_run "$who" -e HOME="$H" -e PATH="$H/bin:$AJ_SYS_PATH" -- resume --last
		first=${dirs%% *}
		like "$OUT" "seen $first: run [0-9]+" "$who: $name: resume --last finds what the first run saved"
	done <<<"$PROFILES"
done
aj_skip_missing_whos "agents for a new user"
done_testing
