# Shared by the --net allow tests (82-net-allow.t, 86-net-names.t, 88-capture.t, 88-secrets.t,
# …): the local test servers of tests/helpers/netsrv.py, on the host's 127.0.0.1. Needs lib.sh
# sourced first.
# Sets H (the helpers), PROXY (the jail's proxy) and SRV (the servers' directory, with crt.pem
# and key.pem for secure.test); bails when a tool it needs is missing. testca and testcert make
# a CA the host trusts (through SSL_CERT_FILE=$HOSTBUNDLE) and certificates it signed.

H=$AJ_SRC/tests/helpers
PROXY=127.0.0.1:3128
for tool in curl python3 openssl "$@"; do
	command -v "$tool" >/dev/null 2>&1 || bail "$tool is missing (scripts/deps.sh installs it)"
done
SRV=$AJ_TMP/srv
mkdir -m 0755 "$SRV"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-keyout "$SRV/key.pem" -out "$SRV/crt.pem" -subj /CN=secure.test \
	-addext "subjectAltName=DNS:secure.test" >/dev/null 2>&1 || bail "openssl could not make a test certificate"
chmod 0644 "$SRV/crt.pem"

srv() { # NAME netsrv-args… — sets the port variable PORT_NAME
	local name=$1 i p; shift
	python3 "$H/netsrv.py" "$@" >"$SRV/$name.out" 2>&1 &
	AJ_PIDS+=($!)
	for i in $(seq 1 250); do
		grep -q '^ready' "$SRV/$name.out" 2>/dev/null && break
		sleep 0.02
	done
	p=$(awk '/^ready/ {print $2}' "$SRV/$name.out")
	[ -n "$p" ] || bail "test server $name did not start: $(cat "$SRV/$name.out")"
	printf -v "PORT_$name" '%s' "$p"
}

# A test CA ($SRV/testca.pem) and $HOSTBUNDLE: the system's bundle with it, for agentjail's
# SSL_CERT_FILE (its TLS inspector verifies servers against what the host trusts: §4d).
testca() {
	CA=$SRV/testca
	HOSTBUNDLE=$SRV/hostbundle.pem
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-keyout "$CA.key" -out "$CA.pem" -subj /CN=agentjail-test-ca \
		-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
		>/dev/null 2>&1 || bail "openssl could not make the test CA"
	cat /etc/ssl/certs/ca-certificates.crt "$CA.pem" >"$HOSTBUNDLE" 2>/dev/null ||
		cp "$CA.pem" "$HOSTBUNDLE"
	chmod 0644 "$CA.pem" "$HOSTBUNDLE"
}

testcert() { # NAME: $SRV/NAME.pem and NAME.key, signed by the test CA
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
		-keyout "$SRV/$1.key" -out "$SRV/$1.csr" >/dev/null 2>&1 &&
		printf 'subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n' "$1" >"$SRV/$1.ext" &&
		openssl x509 -req -in "$SRV/$1.csr" -CA "$CA.pem" -CAkey "$CA.key" -CAcreateserial \
			-days 2 -out "$SRV/$1.pem" -extfile "$SRV/$1.ext" >/dev/null 2>&1 ||
		bail "openssl could not make a certificate for $1"
	chmod 0644 "$SRV/$1.pem"
}
