#!/usr/bin/env bash
# --ssh-agent (doc/design.md §4d, issue 29): the jail gets a socket speaking the ssh-agent
# protocol, served by agentjail-tls from the user's real agent (here an ssh-agent the test
# starts, with a test key), listing and signing only, and signing only for a session bound to a
# host key that the user's known_hosts lists for a host the jail may reach. Local sshd servers
# (Debian's openssh-server) stand in: allowed.test with an Ed25519, an ECDSA and an RSA host key
# (each in known_hosts), and denied.test, which the network rules let the jail reach but whose
# key known_hosts does not list. Checked: ssh-add -L lists, ssh-add -D and -x are refused;
# `git clone` and `git push` over ssh to allowed.test work (one signature each, logged with the
# host and the key's fingerprint); to denied.test the signature is refused (logged); a client
# speaking the protocol itself cannot get a signature with a session bind it forged (github's
# key, a session id of its choosing, a bad signature), without a bind, for another session than
# the one bound, or through a bind marked as a forward; the private key is not in the jail.
# As root and as an unprivileged user; skipped (with the reason) without sshd or root.
. "$(dirname "$0")/lib.sh"
aj_setup

SSHD=/usr/sbin/sshd
skip_all() {
	local who
	for who in "${AJ_WHOS[@]}"; do skip "$who: the filtered ssh agent" "$1"; done
	aj_skip_missing_whos "the filtered ssh agent"
	done_testing
}
[ -x "$SSHD" ] || skip_all "sshd is not installed (Debian's openssh-server; scripts/deps.sh installs it)"
command -v ssh-agent >/dev/null 2>&1 || skip_all "ssh-agent is not installed (openssh-client)"
aj_is_root || skip_all "sshd needs root to log the test's users in"

. "$(dirname "$0")/netlib.sh"
S=$AJ_TMP/sshd
mkdir -m 0755 "$S"
mkdir -p /run/sshd
for t in ed25519 ecdsa rsa; do
	ssh-keygen -q -t "$t" -N '' -f "$S/host_$t" || bail "ssh-keygen $t failed"
done
ssh-keygen -q -t ed25519 -N '' -f "$S/host_denied" || bail "ssh-keygen failed"
# sshd_config NAME HOSTKEY: a server on a free port; PORT_NAME
sshd_start() {
	local name=$1 key=$2 port i
	for i in 1 2 3 4 5; do
		port=$(shuf -i 20000-29999 -n1)
		cat >"$S/$name.conf" <<-EOF
			Port $port
			ListenAddress 127.0.0.1
			HostKey $key
			AuthorizedKeysFile $S/authorized_keys
			PasswordAuthentication no
			KbdInteractiveAuthentication no
			UsePAM no
			StrictModes no
			PermitRootLogin prohibit-password
			PidFile none
			LogLevel VERBOSE
		EOF
		"$SSHD" -f "$S/$name.conf" -D -e >"$S/$name.log" 2>&1 &
		AJ_PIDS+=($!)
		for _ in $(seq 1 100); do
			grep -q "Server listening" "$S/$name.log" 2>/dev/null && break
			kill -0 "${AJ_PIDS[-1]}" 2>/dev/null || break
			sleep 0.02
		done
		if grep -q "Server listening" "$S/$name.log"; then
			printf -v "PORT_$name" '%s' "$port"
			return 0
		fi
	done
	bail "sshd $name did not start: $(cat "$S/$name.log")"
}
: >"$S/authorized_keys"
sshd_start ed "$S/host_ed25519"
sshd_start ec "$S/host_ecdsa"
sshd_start rsa "$S/host_rsa"
sshd_start denied "$S/host_denied"
diag "sshd: ed25519 $PORT_ed, ecdsa $PORT_ec, rsa $PORT_rsa, denied $PORT_denied"

NETFLAGS=(--net allow --ssh-agent --map-host allowed.test=127.0.0.1 --map-host denied.test=127.0.0.1
	--allow-domain "allowed.test:$PORT_ed" --allow-domain "allowed.test:$PORT_ec"
	--allow-domain "allowed.test:$PORT_rsa" --allow-domain "denied.test:$PORT_denied")
PX="-o ProxyCommand='/run/agentjail/init __connect %h %p' -o UserKnownHostsFile=/run/agentjail/known_hosts"
NL=$'\n'

for who in "${AJ_WHOS[@]}"; do
	aj_fresh_ws "$who"
	# the user's key, their agent, their known_hosts (one hashed entry, as Debian writes them)
	mkdir -p "$HOMEDIR/.ssh"
	rm -f "$HOMEDIR/.ssh/id_ed25519"*
	ssh-keygen -q -t ed25519 -N '' -C "agentjail-test-$who" -f "$HOMEDIR/.ssh/id_ed25519"
	cat "$HOMEDIR/.ssh/id_ed25519.pub" >>"$S/authorized_keys"
	{
		printf '[allowed.test]:%s %s\n' "$PORT_ed" "$(cut -d' ' -f1,2 "$S/host_ed25519.pub")"
		printf '[allowed.test]:%s %s\n' "$PORT_ec" "$(cut -d' ' -f1,2 "$S/host_ecdsa.pub")"
		printf '[allowed.test]:%s %s\n' "$PORT_rsa" "$(cut -d' ' -f1,2 "$S/host_rsa.pub")"
	} >"$HOMEDIR/.ssh/known_hosts"
	ssh-keygen -q -H -f "$HOMEDIR/.ssh/known_hosts" 2>/dev/null # the first entries hashed
	rm -f "$HOMEDIR/.ssh/known_hosts.old"
	aj_chown "$HOMEDIR/.ssh"
	chmod 0700 "$HOMEDIR/.ssh"
	AGENT=$AJ_TMP/$who/agent.sock
	rm -f "$AGENT"
	aj_host ssh-agent -a "$AGENT" >/dev/null || bail "ssh-agent did not start"
	AGENT_PID=$(pgrep -f "ssh-agent -a $AGENT" | head -1)
	AJ_PIDS+=("$AGENT_PID")
	aj_host env SSH_AUTH_SOCK="$AGENT" ssh-add -q "$HOMEDIR/.ssh/id_ed25519" ||
		bail "ssh-add did not load the test key"
	# the server's repository, the user's to push to
	REPO=$S/$who-repo.git
	rm -rf "$REPO"
	git -c init.defaultBranch=main init -q --bare "$REPO"
	aj_chown "$REPO"
	U=$RUN_NAME
	# sshd (without PAM) refuses any login to a locked account, as useradd makes it: a password
	# field of "*" is no password and not locked (the fixture's user is removed at the end)
	[ "$who" = user ] && usermod -p '*' "$U"

	aj_run "$who" -e SSH_AUTH_SOCK="$AGENT" -- run "${NETFLAGS[@]}" -- sh -c "
echo \"sock=\$SSH_AUTH_SOCK\"
ssh-add -L
ssh-add -D 2>&1; echo \"delete=\$?\"
ssh-add -x </dev/null 2>&1; echo \"lock=\$?\"
cat \"$HOMEDIR/.ssh/id_ed25519\" 2>&1 | head -1; ls ~/.ssh
git clone -q ssh://$U@allowed.test:$PORT_ed$REPO clone 2>&1; echo \"clone=\$?\"
cd clone && git -c user.name=t -c user.email=t@t.invalid commit -q --allow-empty -m inside &&
	git push -q origin HEAD:main 2>&1; echo \"push=\$?\"
for p in $PORT_ec $PORT_rsa; do ssh $PX -p \$p $U@allowed.test echo \"in-\$p\" 2>&1 | grep -v chdir; done
ssh $PX -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -p $PORT_denied $U@denied.test echo in-denied 2>&1 | grep -v -e chdir -e Warning"
	like "$OUT" "sock=/run/agentjail/ssh-agent" "$who: SSH_AUTH_SOCK names the jail's agent socket"
	like "$OUT" "ssh-ed25519 [A-Za-z0-9+/=]+ agentjail-test-$who" "$who: ssh-add -L lists the user's key"
	like "$OUT" "${NL}delete=1" "$who: ssh-add -D (remove every key) is refused"
	like "$OUT" "agent refused operation${NL}lock=1" "$who: ssh-add -x (lock) is refused"
	unlike "$OUT" "BEGIN OPENSSH PRIVATE KEY" "$who: the private key file is not in the jail"
	like "$OUT" "clone=0" "$who: git clone over ssh to the allowed host works (Ed25519 host key, hashed known_hosts)"
	like "$OUT" "push=0" "$who: git push over ssh to it works"
	git -c safe.directory='*' -C "$REPO" log --format=%s main 2>/dev/null | grep -qx inside
	ok $? "$who: … and the commit is on the server"
	like "$OUT" "in-$PORT_ec" "$who: ssh to the allowed host with an ECDSA host key logs in"
	like "$OUT" "in-$PORT_rsa" "$who: … and with an RSA host key"
	like "$OUT" "denied\.test: Permission denied \(publickey\)" \
		"$who: to a host whose key known_hosts does not list, the signature is refused"
	unlike "$OUT" "in-denied" "$who: … and nothing ran there"
	aj_run "$who" -- log --last
	like "$OUT" "ssh-agent +ALLOW +allowed\.test:$PORT_ed .*signed a login as $U with SHA256:" \
		"$who: agentjail log: each signature, with the host and the key's fingerprint"
	like "$OUT" "ssh-agent +DENY .*host key SHA256:[^ ]+: its host key is not one your known_hosts lists" \
		"$who: … and the refused one, with why"
	like "$OUT" "ssh-agent +DENY .*refused removing every key" "$who: … and the refused removal"

	# a client of its own: forged binds and signatures asked outside a bound session
	cat >"$WS/agentc.py" <<-'EOF'
		import base64, os, socket, struct, sys
		def s(b): return struct.pack(">I", len(b)) + b
		def conn():
		    c = socket.socket(socket.AF_UNIX)
		    c.connect(os.environ["SSH_AUTH_SOCK"])
		    return c
		def call(c, msg):
		    c.sendall(s(msg))
		    n = struct.unpack(">I", c.recv(4, socket.MSG_WAITALL))[0]
		    return c.recv(n, socket.MSG_WAITALL)
		c = conn()
		r = call(c, bytes([11]))
		n = struct.unpack(">I", r[5:9])[0]
		key = r[9:9 + n]
		hk = base64.b64decode(open(sys.argv[1]).read().split()[1])
		def bind(c, sid, fwd=0, sig=None):
		    sig = sig or s(b"ssh-ed25519") + s(os.urandom(64))
		    return call(c, bytes([27]) + s(b"session-bind@openssh.com") + s(hk) + s(sid) + s(sig) + bytes([fwd]))[0]
		def sign(c, sid):
		    data = s(sid) + bytes([50]) + s(sys.argv[2].encode()) + s(b"ssh-connection") + s(b"publickey") + b"\1" + s(b"ssh-ed25519") + s(key)
		    return call(c, bytes([13]) + s(key) + s(data) + b"\0\0\0\0")[0]
		print("nobind-sign", sign(conn(), b"S" * 32))
		c = conn()
		print("forged-bind", bind(c, b"X" * 32), "then-sign", sign(c, b"X" * 32))
		print("other-data", call(conn(), bytes([13]) + s(key) + s(b"SSHSIG" + b"x" * 40) + b"\0\0\0\0")[0])
		print("add", call(conn(), bytes([17]) + s(b"ssh-ed25519"))[0])
	EOF
	cp "$S/host_ed25519.pub" "$WS/trusted.pub"
	aj_chown "$WS/agentc.py" "$WS/trusted.pub"
	aj_run "$who" -e SSH_AUTH_SOCK="$AGENT" -- run "${NETFLAGS[@]}" -- \
		python3 agentc.py trusted.pub "$U"
	like "$OUT" "nobind-sign 5" "$who: a signature without a session bind: refused (FAILURE)"
	like "$OUT" "forged-bind 5 then-sign 5" \
		"$who: a forged bind (a trusted host key, the jail's session id, a bad signature): refused, and no signature after it"
	like "$OUT" "other-data 5" "$who: a signature over what is not an SSH login: refused"
	like "$OUT" "add 5" "$who: adding a key: refused"
	aj_run "$who" -- log --last
	like "$OUT" "the server's signature over the session does not verify" "$who: … the forged bind is logged with why"
	aj_run "$who" -e SSH_AUTH_SOCK="$AGENT" -- doctor
	like "$OUT" "(^|$NL)ok +ssh_agent +SSH_AUTH_SOCK=$AGENT lists 1 key; $HOMEDIR/\.ssh/known_hosts" \
		"$who: doctor reports the ssh agent, its keys and known_hosts"
	kill "$AGENT_PID" 2>/dev/null
done
aj_skip_missing_whos "the filtered ssh agent"
done_testing
