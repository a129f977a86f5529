#!/usr/bin/env bash
# The OpenSandbox stand-in (tests/standin/opensandbox.py) speaks the service's wire format
# (doc/design.md §4b): checked with curl on the raw bytes (a CreateSandboxRequest without a
# required field or with a wrong type is 400, no `data:` prefix, events split across writes,
# pings, both end events, 401 {code, message}, upload's filename= rule and octal modes, download
# 404, renew, delete then 404), then by the official JS SDK
# (@alibaba-group/opensandbox from npm, cached under the test's tmp dir) running
# create/command/upload/download/delete against it — skipped with the reason when npm's
# registry cannot be reached.
. "$(dirname "$0")/lib.sh"
aj_setup
. "$(dirname "$0")/osblib.sh"
command -v curl >/dev/null || bail "curl is missing (scripts/deps.sh installs it)"

KEY=standin-key-$$
STANDIN_API_KEY=$KEY osb_start main --ping 0.3 --linger 0.2 --pending 5
api() { curl -s -H "OPEN-SANDBOX-API-KEY: $KEY" "$@"; }
jget() { python3 -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[k] if not isinstance(d,list) else d[int(k)]
print(d)' "$1"; }

# ---- lifecycle ------------------------------------------------------------------------------
out=$(curl -s -w ' %{http_code}' -XPOST "$OSB_URL/v1/sandboxes" -d '{}')
like "$out" '"code": "MISSING_API_KEY".* 401$' "no key: 401 MISSING_API_KEY as {code, message}"
out=$(curl -s -w ' %{http_code}' -H 'OPEN-SANDBOX-API-KEY: wrong' "$OSB_URL/sandboxes/x")
like "$out" '"code": "INVALID_API_KEY".*"message".* 401$' "wrong key: 401 INVALID_API_KEY (route without /v1 too)"
# CreateSandboxRequest as the spec has it: image, timeout, resourceLimits and entrypoint required
BODY='{"image":{"uri":"debian:12"},"timeout":600,"resourceLimits":{"cpu":"1","memory":"2Gi"},"entrypoint":["sleep","infinity"]}'
for field in image timeout resourceLimits entrypoint; do
	less=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); del d[sys.argv[2]]; print(json.dumps(d))' "$BODY" "$field")
	like "$(api -w ' %{http_code}' -XPOST "$OSB_URL/v1/sandboxes" -d "$less")" "\"INVALID_REQUEST\".*$field is required.* 400\$" \
		"create without $field: 400 INVALID_REQUEST naming it"
done
for bad in '"timeout":null' '"timeout":59' '"timeout":86401' '"resourceLimits":{"cpu":1}' '"entrypoint":[]' \
	'"networkPolicy":{"defaultAction":"maybe"}' '"metadata":{"a":1}'; do
	is "$(api -o /dev/null -w '%{http_code}' -XPOST "$OSB_URL/v1/sandboxes" -d "${BODY%\}},$bad}")" 400 \
		"create with $bad: 400"
done
is "$(osb_live)" "" "no sandbox was made by a refused request"
sb=$(api -XPOST "$OSB_URL/v1/sandboxes" -d "$BODY")
ID=$(jget id <<<"$sb")
is "$(jget status.state <<<"$sb")" Pending "creation is asynchronous: 202 Pending"
ep=$(api "$OSB_URL/v1/sandboxes/$ID/endpoints/44772")
EP=$(jget endpoint <<<"$ep"); TOK=$(jget headers.X-EXECD-ACCESS-TOKEN <<<"$ep")
like "$EP" '^127\.0\.0\.1:[0-9]+/proxy/' "the endpoint has no scheme and a path prefix"
is "$(curl -s -o /dev/null -w '%{http_code}' -H "X-EXECD-ACCESS-TOKEN: $TOK" "http://$EP/ping")" 503 \
	"execd is not there while Pending"
for i in $(seq 1 100); do
	[ "$(api "$OSB_URL/v1/sandboxes/$ID" | jget status.state)" = Running ] && break
	sleep 0.1
done
is "$(api "$OSB_URL/v1/sandboxes/$ID" | jget status.state)" Running "then Running"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://$EP/ping")" 401 "execd without the endpoint's headers: 401"
ex() { curl -s -H "X-EXECD-ACCESS-TOKEN: $TOK" "$@"; }
is "$(ex -o /dev/null -w '%{http_code}' "http://$EP/ping")" 200 "execd ping with them: 200"

# ---- the command stream, byte for byte --------------------------------------------------------
ex -N "http://$EP/command" -d '{"command":"echo hi; echo; echo err >&2; sleep 0.5; exit 3"}' >"$AJ_TMP/stream"
types=$(python3 - "$AJ_TMP/stream" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
assert b"data:" not in raw, "data: prefix"
evs = [json.loads(x) for x in raw.split(b"\n\n") if x.strip()]
print(" ".join(e["type"] + ("=" + json.dumps(e.get("text")) if e["type"] in ("stdout", "stderr") else "") for e in evs if e["type"] != "ping"),
      "pings=%d" % sum(e["type"] == "ping" for e in evs), evs[-1]["error"]["evalue"])
PY
)
# pings: one every 0.3 s of a 0.5 s command, so one, or more on a loaded machine
like "$types" '^init stdout="hi" stdout="\\n" stderr="err" error pings=[1-9] 3$' \
	"stream: bare JSON lines, an empty line as \\n, a ping, error with evalue the exit code"
like "$(ex -N "http://$EP/command" -d '{"command":"true"}')" '"type": "execution_complete"' \
	"exit 0 ends with execution_complete"
ex -N "http://$EP/command" -d '{"command":"sleep 30"}' >"$AJ_TMP/long" &
lp=$!
for i in $(seq 1 50); do grep -q init "$AJ_TMP/long" 2>/dev/null && break; sleep 0.1; done
CID=$(head -1 "$AJ_TMP/long" | jget text)
like "$(ex "http://$EP/command/status/$CID")" '"running": true' "status while running"
ex -XDELETE "http://$EP/command?id=$CID" >/dev/null
wait "$lp"
like "$(cat "$AJ_TMP/long")" '"evalue": "-1"' "an interrupted command ends with evalue -1"

# ---- files --------------------------------------------------------------------------------------
printf 'x\n' >"$AJ_TMP/f"
out=$(ex -w ' %{http_code}' -F 'metadata={"path":"/w/a.sh","mode":755}' -F "file=@$AJ_TMP/f" "http://$EP/files/upload")
like "$out" 'filename=.* 400$' "upload: a metadata part without filename= is refused"
ex -F 'metadata={"path":"/w/d/a.sh","mode":750};filename=metadata' -F "file=@$AJ_TMP/f" "http://$EP/files/upload" >/dev/null
is "$(stat -c %a "$OSB_STATE/sandboxes/$ID/w/d/a.sh")" 750 "upload: parents made, mode 750 read as octal"
is "$(ex "http://$EP/files/download?path=/w/d/a.sh")" x "download"
like "$(ex -w ' %{http_code}' "http://$EP/files/download?path=/w/none")" 'FILE_NOT_FOUND.* 404$' "download of a missing file: 404 FILE_NOT_FOUND"
like "$(api -w ' %{http_code}' -XPOST "$OSB_URL/v1/sandboxes/$ID/renew-expiration" -d '{"expiresAt":"2099-01-01T00:00:00Z"}')" '"expiresAt": "2099-01-01T.* 200$' \
	"renew: 200 with the new expiry"
like "$(api -w ' %{http_code}' -XPOST "$OSB_URL/v1/sandboxes/$ID/renew-expiration" -d '{"expiresAt":"2001-01-01T00:00:00Z"}')" ' 400$' \
	"renew to the past: 400"
is "$(api -o /dev/null -w '%{http_code}' -XDELETE "$OSB_URL/v1/sandboxes/$ID")" 204 "delete: 204"
is "$(api -o /dev/null -w '%{http_code}' "$OSB_URL/v1/sandboxes/$ID")" 404 "then 404"
is "$(osb_live)" "" "the stand-in has no sandbox left"

# ---- the official SDK -----------------------------------------------------------------------------
SDK=$AJ_TMP/sdk
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
	skip "the JS SDK against the stand-in" "node or npm is not installed"
elif ! (mkdir -p "$SDK" && cd "$SDK" && printf '{"name":"sdk-check","private":true}\n' >package.json &&
	timeout 180 npm install --no-audit --no-fund --cache "$SDK/.npm" \
		@alibaba-group/opensandbox >"$SDK/npm.log" 2>&1); then
	skip "the JS SDK against the stand-in" "npm could not install @alibaba-group/opensandbox: $(tail -1 "$SDK/npm.log")"
else
	out=$(cd "$SDK" && timeout 120 node "$AJ_SRC/tests/standin/sdk_scenario.mjs" "$SDK" "127.0.0.1:$OSB_PORT" "$KEY" 2>&1)
	rc=$?
	diag "$out"
	is "$rc:$(grep -c '^ok' <<<"$out")" "0:12" "the official JS SDK runs create/command/upload/download/delete against the stand-in"
	is "$(osb_live)" "" "the SDK's sandbox is gone"
fi
done_testing
