#!/usr/bin/env bash
# The environment: cleared, then an allowlist; secrets passed with --env are visible inside and
# never on any host process's command line.
. "$(dirname "$0")/lib.sh"
aj_setup

# (LD_PRELOAD names a missing object: ld.so warns and goes on; a real one would upset ASan builds.)
SECRET_ENV=(
	GITHUB_TOKEN=ghp_agentjailtestsecret0001
	GH_TOKEN=gho_agentjailtestsecret0002
	GITLAB_TOKEN=glpat-agentjailtestsecret0003
	SSH_AUTH_SOCK=/tmp/ssh-agentjailtest/agent.4
	AWS_ACCESS_KEY_ID=AKIAAGENTJAILTEST0005
	AWS_SECRET_ACCESS_KEY=agentjailtestsecret0006
	AWS_SESSION_TOKEN=agentjailtestsecret0007
	GOOGLE_APPLICATION_CREDENTIALS=/tmp/agentjailtestsecret0008.json
	AZURE_CLIENT_SECRET=agentjailtestsecret0009
	ANTHROPIC_API_KEY=sk-ant-agentjailtestsecret0010
	OPENAI_API_KEY=sk-agentjailtestsecret0011
	NPM_TOKEN=npm_agentjailtestsecret0012
	DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/agentjailtestsecret0013
	DISPLAY=:97
	WAYLAND_DISPLAY=wayland-agentjailtest
	LD_PRELOAD=/agentjailtest/preload.so
	LD_LIBRARY_PATH=/agentjailtest/lib
	BASH_ENV=/agentjailtest/bash_env
	ENV=/agentjailtest/env
	PYTHONPATH=/agentjailtest/py
	NODE_OPTIONS=--require=/agentjailtest/hook.js
	AGENTJAIL_TEST_UNLISTED=agentjailtestsecret0014
)
env_args=()
for kv in "${SECRET_ENV[@]}"; do env_args+=(-e "$kv"); done

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	aj_run "$who" "${env_args[@]}" -- run -- "$P" env
	rc_is 0 "$who: probe env runs with a hostile host environment"
	for kv in "${SECRET_ENV[@]}"; do
		name=${kv%%=*}
		unlike "$OUT" "(^|"$'\n'")$name=" "$who: $name is absent inside"
	done
	unlike "$OUT" 'agentjailtest' "$who: no value of a host secret appears anywhere inside"
	like "$OUT" "(^|"$'\n'")HOME=$HOMEDIR("$'\n'"|$)" "$who: HOME is kept"
	like "$OUT" "(^|"$'\n'")PATH=" "$who: PATH is kept"
	like "$OUT" "(^|"$'\n'")USER=$RUN_NAME("$'\n'"|$)" "$who: USER is kept"
	like "$OUT" "(^|"$'\n'")LANG=C.UTF-8("$'\n'"|$)" "$who: LANG is kept"
	note "$who: environment inside: $(printf '%s' "$OUT" | cut -d= -f1 | tr '\n' ' ')"

	# --env NAME=VALUE and --env NAME (pass-through of a host variable the user names).
	aj_run "$who" "${env_args[@]}" -- run --env AJ_EXPLICIT=explicit-value --env GITHUB_TOKEN -- "$P" env
	like "$OUT" "(^|"$'\n'")AJ_EXPLICIT=explicit-value("$'\n'"|$)" "$who: --env NAME=VALUE is visible inside"
	like "$OUT" "(^|"$'\n'")GITHUB_TOKEN=ghp_agentjailtestsecret0001("$'\n'"|$)" \
		"$who: --env NAME passes the host's value through"
	unlike "$OUT" "(^|"$'\n'")AWS_SECRET_ACCESS_KEY=" "$who: … and only that one"

	# --- the secret never appears on a host command line while the jail runs ----------------
	# Inside: publish the value, then hold the jail open until the host has finished its scan.
	hold='printf %s "$AJ_SECRET" > seen.tmp && mv seen.tmp seen; i=0
		while [ ! -e scan-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done'
	for form in value passthrough; do
		secret="agentjail-cmdline-secret-$form-$$-$RANDOM$RANDOM"
		rm -f "$WS/seen" "$WS/scan-done"
		if [ $form = value ]; then
			aj_cmd "$who" -- run --env AJ_SECRET="$secret" -- \
				sh -c "$hold"
			desc="--env NAME=VALUE"
		else
			aj_cmd "$who" -e AJ_SECRET="$secret" -- run --env AJ_SECRET -- \
				sh -c "$hold"
			desc="--env NAME (value from the host environment)"
		fi
		"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
		bgpid=$!
		AJ_PIDS+=("$bgpid")
		for _ in $(seq 1 250); do
			[ -e "$WS/seen" ] && break
			kill -0 "$bgpid" 2>/dev/null || break
			sleep 0.02
		done
		leaked=() scanned=0 sawbwrap='' bwrap_args=''
		for f in /proc/[0-9]*/cmdline; do
			pid=${f#/proc/}; pid=${pid%/cmdline}
			[ "$pid" = "$$" ] && continue
			c=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
			scanned=$((scanned + 1))
			if [[ $c == */bwrap\ * || $c == bwrap\ * ]]; then
				sawbwrap=1
				[[ $c == *" --args "* ]] && bwrap_args=1
			fi
			[[ $c == *"$secret"* ]] && leaked+=("$pid: ${c:0:300}")
		done
		# The host side of agentjail itself (bgpid: setpriv/env exec into agentjail).
		nnp=$(awk '/^NoNewPrivs:/ {print $2}' "/proc/$bgpid/status" 2>/dev/null)
		owner=$(stat -c %u "/proc/$bgpid/environ" 2>/dev/null)
		alive=1
		kill -0 "$bgpid" 2>/dev/null || alive=0
		: >"$WS/scan-done"
		AJ_LAST=
		check "$who: $desc: the jail was running during the scan" test -e "$WS/seen" -a "$alive" = 1
		is "${#leaked[@]}" 0 "$who: $desc: the value is on no host command line ($scanned scanned)"
		[ "${#leaked[@]}" -eq 0 ] || printf '%s\n' "${leaked[@]}" | while IFS= read -r l; do diag "  leaked in pid $l"; done
		if [ $form = value ]; then
			check "$who: bwrap runs during the jail" test -n "$sawbwrap"
			check "$who: … and gets its arguments through --args FD" test -n "$bwrap_args"
			is "$nnp" 1 "$who: agentjail on the host has no_new_privs set"
			if [ "$who" = user ]; then
				is "$owner" 0 "$who: agentjail on the host is not dumpable (/proc/PID owned by root)"
			fi
		fi
		wait "$bgpid"
		is "$(cat "$WS/seen" 2>/dev/null)" "$secret" "$who: $desc: … while it is visible inside"
		rm -f "$WS/seen" "$WS/seen.tmp" "$WS/scan-done"
	done
done
aj_skip_missing_whos "environment"

done_testing
