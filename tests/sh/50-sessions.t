#!/bin/bash
# Sessions: every run recorded in the SQLite store, `sessions`, `show`, `rm`, `resume` with the
# stored sandbox, killed and lost runs, 32 at once, and a store that cannot be written.
. "$(dirname "$0")/lib.sh"
aj_setup

# py EXPR-ON-d — evaluate a Python expression over the JSON in $OUT (as `d`)
py() { printf '%s' "$OUT" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)" 2>&1; }

# wait_running — until the newest session of this workspace is running (at most 10 s)
wait_running() {
	local i
	for i in $(seq 1 250); do
		aj_run "$who" -- sessions --json
		[ "$(py "d[0]['status'] if d else ''")" = running ] && return 0
		sleep 0.04
	done
	diag "no session became running"
	return 1
}

bg_start() { # aj_cmd args… — AJ_CMD in the background; BG_PID
	aj_cmd "$@"
	"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/bg.out" 2>"$AJ_TMP/bg.err" &
	BG_PID=$!
	AJ_PIDS+=("$BG_PID")
}

# the id of the newest session of this workspace
newest() { aj_run "$who" -- sessions --json; py "d[0]['id']"; }

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"

	aj_run "$who" -- run -- sh -c 'exit 3'
	rc_is 3 "$who: run exits with the command's status"
	aj_run "$who" -- sessions --json
	is "$(py "(len(d), d[0]['status'], d[0]['exit_status'], d[0]['argv'], d[0]['profile'])")" \
		"(1, 'exited', 3, ['sh', '-c', 'exit 3'], None)" "$who: sessions --json: the run, exited 3"
	is "$(stat -c %a "$STATE/agentjail.db")" 600 "$who: the store is created 0600"
	is "$(py "d[0]['policy']['fs'] + ' ' + d[0]['policy']['net']")" "workspace-write off" \
		"$who: ... with its resolved policy"

	aj_run "$who" -- run -- sh -c 'kill -TERM $$'
	aj_run "$who" -- sessions --json
	is "$(py "(d[0]['status'], d[0]['exit_status'])")" "('signalled', 15)" \
		"$who: a command that died of SIGTERM is 'signalled 15' (not 'exited 143')"

	aj_run "$who" -- run --env TOKEN=sekrit-value -- true
	aj_run "$who" -- show "$(newest)" --json
	unlike "$OUT" 'sekrit-value' "$who: no --env value in the stored policy or bwrap argv"
	like "$(py "' '.join(d['bwrap_argv'])")" '--setenv TOKEN <redacted>' \
		"$who: the stored bwrap argv has the value redacted"

	# the listing a user reads
	aj_run "$who" -e COLUMNS=100 -- sessions
	like "$OUT" $'^ID +STARTED +TOOK +STATUS +POLICY +PROFILE +COMMAND\n' "$who: sessions: a header"
	like "$OUT" $'\n[0-9a-f]{8} +(just now|[0-9]+s ago) +[0-9.]+s +exited 3 +rw·off +- +sh -c \'exit 3\'' \
		"$who: sessions: aligned columns, relative time, policy summary"

	# resume re-runs with the stored policy, whatever the configuration says now
	aj_run "$who" -- run --fs ro --net on --ro "$EXTRA" -- sh -c 'echo first'
	ID=$(newest)
	aj_run "$who" -- show "$ID" --json
	STORED=$(py "json.dumps(d['policy'], sort_keys=True)")
	aj_run "$who" -e AGENTJAIL_FS=rw -e AGENTJAIL_NET=off -- resume --last --dry-run
	RESUMED=$(printf '%s\n' "$OUT" | sed -n 's/^# policy: //p' |
		python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin), sort_keys=True))')
	is "$RESUMED" "$STORED" "$who: resume --last uses the stored policy, not today's AGENTJAIL_FS/NET"
	aj_run "$who" -e AGENTJAIL_FS=rw -e AGENTJAIL_NET=off -- resume --last
	rc_is 0 "$who: resume --last runs it again"
	is "$OUT" first "$who: ... the same command"
	aj_run "$who" -- show "$ID" --json
	is "$(py "(d['attempts'], [a['kind'] for a in d['attempts_detail']], d['status'])")" \
		"(2, ['start', 'fresh'], 'exited')" "$who: the rerun is an attempt of the same session"

	# ids: prefixes, unknown, ambiguous
	aj_run "$who" -- show "${ID:0:6}"
	like "$OUT" "^session +$ID" "$who: show accepts an id prefix"
	aj_run "$who" -- show ffffffff-0000
	rc_is 2 "$who: an unknown id is exit 2"
	like "$ERR" 'no session|ffffffff' "$who: ... naming it"

	# SIGTERM to agentjail mid-run: killed
	bg_start "$who" -e AGENTJAIL_GRACE_MS=300 -- run -- sleep 30
	wait_running
	ID=$(newest)
	kill -TERM "$BG_PID"
	wait "$BG_PID" 2>/dev/null
	aj_run "$who" -- show "$ID" --json
	is "$(py "(d['status'], d['exit_status'])")" "('killed', 15)" \
		"$who: SIGTERM to agentjail mid-run records 'killed' (by SIGTERM)"

	# SIGKILL to agentjail: the next command finds the session lost
	bg_start "$who" -- run -- sleep 30
	wait_running
	ID=$(newest)
	kill -KILL "$BG_PID"
	wait "$BG_PID" 2>/dev/null
	aj_run "$who" -- run -- true
	aj_run "$who" -- show "$ID" --json
	is "$(py "d['status']")" lost "$who: SIGKILL to agentjail, then a new command: 'lost'"

	aj_run "$who" -- rm "$ID"
	rc_is 0 "$who: rm ID"
	aj_run "$who" -- show "$ID"
	rc_is 2 "$who: ... it is gone"

	# 32 at once
	pids=()
	for i in $(seq 1 32); do
		aj_cmd "$who" -- run -- sh -c "echo run-$i"
		"${AJ_CMD[@]}" </dev/null >"$AJ_TMP/c$i.out" 2>"$AJ_TMP/c$i.err" &
		pids+=($!)
	done
	fails=0 i=0
	for p in "${pids[@]}"; do
		i=$((i + 1))
		wait "$p" && continue
		rc=$?
		fails=$((fails + 1))
		diag "  run $i exited $rc: $(tail -n5 "$AJ_TMP/c$i.err" | tr '\n' ' ')"
	done
	is "$fails" 0 "$who: 32 concurrent runs all exit 0"
	warned=$(cat "$AJ_TMP"/c*.err | grep -c 'not recorded')
	is "$warned" 0 "$who: ... none of them failed to record"
	aj_run "$who" -- sessions --json
	is "$(py "len([s for s in d if s['argv'][-1].startswith('echo run-')])")" 32 \
		"$who: ... all 32 are recorded"
	chk=$(python3 -c "import sqlite3,sys; c=sqlite3.connect('file:$STATE/agentjail.db?mode=ro', uri=True); print(c.execute('PRAGMA integrity_check').fetchone()[0])" 2>&1)
	is "$chk" ok "$who: PRAGMA integrity_check is ok"

	# a store that cannot be written: the run happens, one warning
	touch "$EXTRA/not-a-dir"
	aj_chown "$EXTRA/not-a-dir"
	aj_run "$who" -e AGENTJAIL_STATE_DIR="$EXTRA/not-a-dir/state" -- run -- sh -c 'echo ran'
	rc_is 0 "$who: an unusable state dir: the command still runs"
	is "$OUT" ran "$who: ... and its output is there"
	is "$(grep -c 'not recorded' <<<"$ERR")" 1 "$who: ... with exactly one warning"
	like "$ERR" 'not-a-dir' "$who: ... naming the path"
done
aj_skip_missing_whos "session store"
done_testing
