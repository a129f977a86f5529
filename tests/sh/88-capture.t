#!/usr/bin/env bash
# --net allow's capture of direct connections (doc/design.md §4, capture), end to end: with every
# proxy variable unset, clients that connect by themselves — python's socket.create_connection
# and http.client, node's fetch, a static program connecting by IP after getaddrinfo
# (tests/helpers/capclient.c), java, ssh and git over ssh to a local sshd — reach the host's
# servers that allowed, mapped names stand for; other destinations fail at once (ECONNREFUSED,
# ENETUNREACH for UDP, EOPNOTSUPP for Fast Open) and are logged with the name the address came
# from: another port of an allowed name, an address the DNS stub never gave out, a literal not
# on the list (the host's own address), the host's loopback, link-local metadata, IPv4-mapped
# IPv6, a second thread rewriting the address between the check and the connect, and a socket
# handed over by the capture that is disconnected and raced towards another host (it can be
# neither rebound nor connected elsewhere). A canary server on every address of the host counts
# what reached it: nothing may. As root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
aj_setup

. "$(dirname "$0")/netlib.sh" git
CAPC=$AJ_BUILD/tests/helpers/capclient
[ -x "$CAPC" ] || bail "missing $CAPC (make builds it)"

# ---- the servers (on the host) ---------------------------------------------------------------
srv one http --name one
srv canary canary --bind 0.0.0.0
# the host's own address (not loopback), where the canary listens too
HOSTIP=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub(/\/.*/, "", $4); print $4; exit}')
diag "servers: one $PORT_one, canary $PORT_canary (0.0.0.0); the host's address: ${HOSTIP:-none}"
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
DENYPORT=$(free_port)   # a port of one.test no rule allows
CLOSED=$(free_port)     # a port of one.test allowed, where nothing listens
SQUAT=$(free_port)      # a host port a handed-over socket must not be bound to

# ---- sshd (openssh-server), one per identity, on the host's 127.0.0.1 -------------------------
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$SSHD" ] || SSHD=
command -v ssh-keygen >/dev/null 2>&1 || SSHD=
aj_git_repo "$SRV" "cloned over ssh"
chmod -R a+rX "$SRV"
# start_sshd WHO: sshd for WHO (run as WHO: a non-root sshd logs in only its own user), on
# SSHPORT_WHO; its key pair in SSHDIR_WHO. Empty port when it cannot start.
start_sshd() {
	local who=$1 d=$AJ_TMP/$1/sshd port i
	aj_use "$who"
	mkdir -m 0700 "$d"
	ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$d/id" &&
		cp "$d/id.pub" "$d/authorized_keys" || return 1
	port=$(free_port)
	cat >"$d/config" <<-EOF
		Port $port
		ListenAddress 127.0.0.1
		HostKey $d/host_key
		PidFile $d/pid
		AuthorizedKeysFile $d/authorized_keys
		StrictModes no
		UsePAM no
		PermitRootLogin prohibit-password
		PasswordAuthentication no
		KbdInteractiveAuthentication no
		LogLevel ERROR
	EOF
	aj_chown "$d"
	if [ "$who" = root ] && [ ! -d /run/sshd ]; then
		mkdir -m 0755 /run/sshd && AJ_CLEAN+=(/run/sshd)
	fi
	# (exec'd, not in a subshell: the pid killed at the end is sshd's own)
	if [ "$who" = root ]; then
		"$SSHD" -D -e -f "$d/config" </dev/null >/dev/null 2>"$d/log" &
	else
		setpriv --reuid="$RUN_UID" --regid="$RUN_GID" --init-groups env -i PATH="$AJ_SYS_PATH" \
			"$SSHD" -D -e -f "$d/config" </dev/null >/dev/null 2>"$d/log" &
	fi
	AJ_PIDS+=($!)
	for i in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
		sleep 0.05
	done
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || return 1
	printf -v "SSHPORT_$who" '%s' "$port"
}

NOPROXY='for v in $(env | sed -n "s/^\([A-Za-z_]*[Pp][Rr][Oo][Xx][Yy][A-Za-z_]*\)=.*/\1/p") GIT_SSH_COMMAND; do unset $v; done; '
# jail WHO SCRIPT [EXTRA-FLAGS…] — sh -c SCRIPT in a --net allow jail, every proxy variable unset
jail() {
	local who=$1 script=$2; shift 2
	aj_run "$who" -- run --net allow --map-host one.test=127.0.0.1 \
		--allow-domain "one.test:$PORT_one" --allow-domain "one.test:$CLOSED" "$@" \
		-- sh -c "$NOPROXY$script"
}
# every "fail … ms=N" line of OUT took under a second
fast() {
	local slow
	slow=$(grep -oE '^fail [A-Z]+ ms=[0-9]+' <<<"$OUT" | awk -F= '$2 >= 1000' | head -n3)
	[ -z "$slow" ]
	ok $? "$1 (at once: $(grep -oE '^fail [A-Z]+ ms=[0-9]+' <<<"$OUT" | tr '\n' ' '))"
}
NL=$'\n'

for who in "${AJ_WHOS[@]}"; do
	aj_use "$who"
	install -m 0755 "$CAPC" "$WS/capclient"
	aj_chown "$WS/capclient"

	# --- allowed: clients that know nothing of the proxy ------------------------------------
	jail "$who" 'env | grep -ci proxy; python3 -c "
import http.client, socket
s = socket.create_connection((\"one.test\", '"$PORT_one"'), timeout=10)
print(\"py peer\", s.getpeername()[0]); s.close()
c = http.client.HTTPConnection(\"one.test\", '"$PORT_one"', timeout=10)
c.request(\"GET\", \"/py\"); print(c.getresponse().read().decode(), end=\"\")"'
	like "$OUT" "^0${NL}py peer 127\.0\.0\.1${NL}hello from one host=one\.test:$PORT_one path=/py" \
		"$who: python's create_connection and http.client reach an allowed name, no proxy variable set"
	if command -v node >/dev/null 2>&1; then
		jail "$who" "node -e 'fetch(\"http://one.test:$PORT_one/node\").then(r => r.text()).then(t => process.stdout.write(t), e => { console.log(\"fetch failed:\", e.cause ? e.cause.code : e.message); process.exit(3); })'"
		like "$OUT" "hello from one .*path=/node" "$who: node $(node --version) fetch, without the proxy, reaches an allowed name"
	else
		skip "$who: node fetch without the proxy" "node is not installed"
	fi
	jail "$who" "./capclient get one.test $PORT_one /static; ./capclient nonblock one.test $PORT_one /nonblock"
	like "$OUT" "^hello from one .*path=/static${NL}peer 127\.0\.0\.1 $PORT_one${NL}" \
		"$who: a static program connecting by IP after getaddrinfo reaches the server (its peer: the server's address)"
	like "$OUT" "${NL}einprogress${NL}hello from one .*path=/nonblock" \
		"$who: … and a non-blocking connect (EINPROGRESS, poll, SO_ERROR) too"
	if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
		cat >"$WS/Cap.java" <<-EOF
			import java.io.*;
			import java.net.*;
			public class Cap {
			    public static void main(String[] a) throws Exception {
			        HttpURLConnection c = (HttpURLConnection) new URL("http://one.test:$PORT_one/java").openConnection(Proxy.NO_PROXY);
			        c.setConnectTimeout(10000);
			        System.out.print(new String(c.getInputStream().readAllBytes()));
			        try (Socket s = new Socket()) {
			            s.connect(new InetSocketAddress("one.test", $DENYPORT), 10000);
			            System.out.println("java other port: connected");
			        } catch (IOException e) {
			            System.out.println("java other port: " + e.getMessage());
			        }
			    }
			}
		EOF
		aj_chown "$WS/Cap.java"
		jail "$who" 'java -Xshare:auto -XX:TieredStopAtLevel=1 Cap.java'
		like "$OUT" "hello from one .*path=/java${NL}java other port: Connection refused" \
			"$who: java $(java -version 2>&1 | head -n1 | cut -d'"' -f2) (HttpURLConnection, Socket) connects to the allowed port, is refused another"
	else
		skip "$who: java" "java or javac is not installed (Debian: default-jdk-headless)"
	fi
	if [ -n "$SSHD" ] && start_sshd "$who"; then
		port=SSHPORT_$who
		port=${!port}
		d=$AJ_TMP/$who/sshd
		cp "$d/id" "$WS/id" && chmod 0600 "$WS/id" && aj_chown "$WS/id"
		rm -rf "$WS/clone" "$d/repo.git"
		cp -a "$SRV/repo.git" "$d/repo.git" && aj_chown "$d/repo.git" # git serves its own only
		SSH="ssh -i \$PWD/id -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
		jail "$who" "$SSH -p $port $RUN_NAME@git.test echo ssh-ran-on-the-host; GIT_SSH_COMMAND=\"$SSH\" git clone -q ssh://$RUN_NAME@git.test:$port$d/repo.git clone && cat clone/README; $SSH -p 22 $RUN_NAME@git.test true; echo port22=\$?" \
			--map-host git.test=127.0.0.1 --allow-domain "git.test:$port"
		like "$OUT" "^ssh-ran-on-the-host${NL}cloned over ssh" \
			"$who: ssh and git over ssh reach a local sshd on an allowed host:port, without a ProxyCommand"
		like "$OUT" "port22=255" "$who: … and ssh to another port of that name fails"
		like "$ERR" "denied [0-9]+ connections?( and [0-9]+ name lookups?)?: .*git\.test:22" \
			"$who: … logged with its name"
	else
		skip "$who: ssh and git over ssh" "no sshd here (openssh-server; scripts/deps.sh installs it)${SSHD:+, or it did not start: $(cat "$AJ_TMP/$who/sshd/log" 2>/dev/null | head -n2)}"
	fi

	# --- refused at once, and logged with the name ------------------------------------------
	# (the refused port three times: the end-of-run line names the most refused first)
	script="for i in 1 2 3; do ./capclient get one.test $DENYPORT /other-port; done"
	script+="; ./capclient connect 198.18.0.200 $PORT_one"
	script+="; ./capclient connect 127.0.0.1 $PORT_one; ./capclient connect ::ffff:127.0.0.1 $PORT_one"
	script+="; ./capclient connect 169.254.169.254 80; ./capclient connect ::ffff:169.254.169.254 80"
	[ -n "$HOSTIP" ] && script+="; ./capclient connect $HOSTIP $PORT_canary; ./capclient connect ::ffff:$HOSTIP $PORT_canary"
	jail "$who" "$script"
	n_fail=$(grep -c '^fail ECONNREFUSED' <<<"$OUT")
	is "$n_fail" "$([ -n "$HOSTIP" ] && echo 10 || echo 8)" \
		"$who: another port of an allowed name, an address the stub never gave out, the host's loopback (plain and IPv4-mapped), metadata (plain and mapped) and the host's own address (plain and mapped) are refused"
	fast "$who: … each"
	like "$ERR" "denied [0-9]+ connections( and [0-9]+ name lookups?)?: one\.test:$DENYPORT ×3" \
		"$who: … the end-of-run line names the name the address came from"
	aj_run "$who" -- log --last
	like "$OUT" "tcp +DENY +one\.test:$DENYPORT .*port $DENYPORT is not allowed" \
		"$who: agentjail log: the refused port, under its name, with the reason"
	like "$OUT" "tcp +DENY +198\.18\.0\.200:$PORT_one .*not an address the jail's DNS stub gave out" \
		"$who: … the address no name stands for"
	like "$OUT" "tcp +DENY +169\.254\.169\.254:80 " "$who: … the metadata address"

	# --- Fast Open, UDP and IPv4-mapped IPv6 --------------------------------------------------
	jail "$who" "a=\$(getent ahosts one.test | awk '/\./ {print \$1; exit}'); echo synth=\$a; ./capclient connect ::ffff:\$a $PORT_one; ./capclient fastopen \$a $PORT_one; ./capclient fastopen ${HOSTIP:-192.0.2.1} $PORT_canary; ./capclient udp \$a 443"
	like "$OUT" "^synth=198\.18\.[0-9]+\.[0-9]+${NL}ok${NL}" "$who: the stub answers with its own address (198.18/15); IPv4-mapped, it is captured as itself"
	like "$OUT" "${NL}fail EOPNOTSUPP ms=[0-9]+${NL}fail EOPNOTSUPP ms=[0-9]+${NL}" \
		"$who: sendto(MSG_FASTOPEN) is refused (EOPNOTSUPP: clients fall back to connect)"
	like "$OUT" "${NL}fail ENETUNREACH ms=[0-9]+$" "$who: UDP (QUIC) to an allowed name fails at once: only the DNS stub answers UDP"
	fast "$who: … at once"

	# --- races: the address rewritten between the check and the connect ----------------------
	jail "$who" "./capclient race one.test $PORT_one ${HOSTIP:-127.0.0.1} $PORT_canary 300; ./capclient race one.test $PORT_one 127.0.0.1 $PORT_canary 300"
	like "$OUT" "^race good=[0-9]+ bad=0 refused=[0-9]+ other=0${NL}race good=[0-9]+ bad=0 refused=[0-9]+ other=0$" \
		"$who: a thread rewriting the address during 2 × 300 connects never reaches anything but the allowed server"
	# a socket the capture handed over, undone and raced towards the canary
	jail "$who" "./capclient hijack one.test $PORT_one $CLOSED ${HOSTIP:-127.0.0.1} $PORT_canary 300 $SQUAT"
	like "$OUT" "^hijack get=ok failed=ECONNREFUSED bind=EINVAL listen=EINVAL tried=[0-9]+ connected=0 fastopen=EOPNOTSUPP" \
		"$who: a handed-over socket whose connection failed can be neither bound to another port of the host, nor made to listen, nor connected elsewhere, even by a thread racing its address"
	diag "$who: $OUT"
	grep -q '^accept' "$SRV/canary.out"
	ok $((!$?)) "$who: the canary on every address of the host was never reached ($(grep -c '^accept' "$SRV/canary.out") connections)"
done
aj_skip_missing_whos "capture of direct connections"
done_testing
