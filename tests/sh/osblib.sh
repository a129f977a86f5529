# shellcheck shell=bash
# tests/sh/osblib.sh — the OpenSandbox stand-in (tests/standin/opensandbox.py) for the 97-* tests.
# Source after lib.sh and aj_setup.
#   [STANDIN_API_KEY=KEY] osb_start NAME [stand-in args…]  (the key through the environment:
#                                    never in an argv, which the tests check)
#   osb_start NAME [stand-in args…]  starts one; sets OSB_PORT, OSB_URL (http://127.0.0.1:PORT),
#                                    OSB_STATE (its directory); stopped by the fixture's trap
#   osb_live                         the ids of the sandboxes the stand-in still has, one a line
#   osb_config WHO URL [LINE…]       WHO's config.toml: backend = "opensandbox", [opensandbox] with
#                                    url, api_key_env = "OSB_TEST_KEY" and the LINEs (none: the
#                                    README's example, the defaults for everything else)
#   osb_repo WHO                     a fresh workspace, a git repository: a.txt committed,
#                                    build/ ignored (build/out in it)

osb_start() {
	local name=$1 i; shift
	OSB_STATE=$AJ_TMP/osb-$name
	mkdir -p "$OSB_STATE"
	STANDIN_API_KEY=${STANDIN_API_KEY:-} python3 "$AJ_SRC/tests/standin/opensandbox.py" --state "$OSB_STATE" "$@" \
		>"$OSB_STATE/log" 2>&1 &
	AJ_PIDS+=("$!")
	for i in $(seq 1 150); do
		[ -s "$OSB_STATE/port" ] && break
		sleep 0.1
	done
	[ -s "$OSB_STATE/port" ] || bail "the stand-in did not start: $(cat "$OSB_STATE/log")"
	OSB_PORT=$(cat "$OSB_STATE/port")
	OSB_URL=http://127.0.0.1:$OSB_PORT
}

osb_live() {
	curl -s "$OSB_URL/_standin/sandboxes" |
		python3 -c 'import json,sys; [print(i) for i in json.load(sys.stdin)]'
}

osb_config() {
	local who=$1 url=$2
	shift 2
	aj_use "$who"
	mkdir -p "$HOMEDIR/.config/agentjail"
	{
		printf 'backend = "opensandbox"\n[opensandbox]\nurl = "%s"\napi_key_env = "OSB_TEST_KEY"\n' "$url"
		[ $# -gt 0 ] && printf '%s\n' "$@"
	} >"$HOMEDIR/.config/agentjail/config.toml"
	aj_chown "$HOMEDIR/.config"
	return 0
}

osb_repo() {
	aj_fresh_ws "$1"
	(cd "$WS" && git -c init.defaultBranch=main init -q && echo hello >a.txt &&
		echo 'build/' >.gitignore && mkdir build && echo generated >build/out &&
		git -c safe.directory='*' add a.txt .gitignore &&
		git -c safe.directory='*' -c user.name=t -c user.email=t@t.invalid commit -qm one)
	aj_chown "$WS"
	return 0
}
