#!/usr/bin/env python3
"""netclient: clients run inside a `--net allow` jail against its proxy (tests/sh/82-net-allow.t).

usage (PROXY is the jail's proxy, 127.0.0.1:3128 unless --proxy HOST:PORT comes first;
--direct first: `tls` connects to HOST:PORT itself, as a client that knows of no proxy):
  netclient.py tunnels N HOST PORT
      N CONNECT tunnels to HOST:PORT (an echo service) open at the same time; each sends its
      own payload and must read it back. Prints "ok N" or "failed K of N: first reason".
  netclient.py keepalive HOST1 HOST2 PORT MODE
      two plain-HTTP requests on one connection to the proxy, the first for HOST1, the second
      for HOST2 (MODE "pipelined": both in one write; "sequential": the second after the first
      answer). Prints everything read back (until the proxy closes or 3 s of silence).
  netclient.py abuse N ECHOHOST PORT PENDINGHOST
      N rounds of hostile clients: garbage, an oversized request line, a bad SOCKS greeting,
      a SOCKS request cut short, a slow header then gone, a CONNECT closed before the answer,
      a CONNECT to PENDINGHOST (allowed, resolving on the host) closed at once, a tunnel reset
      (SO_LINGER 0) mid-stream, a plain HTTP request abandoned. Prints "done N".
  netclient.py slowloris N SECONDS
      N connections that send half a request head and then nothing: prints "closed K of N in
      S s" once the proxy has closed them all, or after SECONDS.
  netclient.py sync DIR PHASE
      touch DIR/PHASE.ready, wait for DIR/PHASE.go (60 s): hands the host a moment to count.
  netclient.py tls HOST PORT SNI SEG REC VERSION CAFILE
      python's ssl through a CONNECT tunnel to HOST:PORT (an HTTPS server), naming SNI ("-":
      no server name), its ClientHello cut again into records of REC bytes (0: as ssl wrote
      it) and sent SEG bytes at a time (0: at once), at most TLS VERSION ("1.2", "1.3",
      "any"), the chain checked against CAFILE (not the name: a foreign one is the point).
      Prints "tls ok VERSION: FIRST LINE OF GET /tls" or "tls failed: REASON".
Python standard library only.
"""
import asyncio
import os
import resource
import socket
import ssl
import struct
import sys
import time

PROXY = ("127.0.0.1", 3128)


async def connect_tunnel(host, port, i):
    reader, writer = await asyncio.open_connection(*PROXY)
    writer.write(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (
        host.encode(), port, host.encode(), port))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    if not head.split(b" ", 2)[1:2] == [b"200"]:
        writer.close()
        raise RuntimeError("CONNECT answered %r" % head.split(b"\r\n")[0])
    return reader, writer


async def tunnels(n, host, port):
    opened = await asyncio.gather(*(connect_tunnel(host, port, i) for i in range(n)),
                                  return_exceptions=True)
    bad = [o for o in opened if isinstance(o, BaseException)]
    good = [o for o in opened if not isinstance(o, BaseException)]

    async def talk(i, rw):
        reader, writer = rw
        msg = b"tunnel %06d payload\n" % i
        writer.write(msg)
        got = await asyncio.wait_for(reader.readexactly(len(msg)), 30)
        if got != msg:
            raise RuntimeError("tunnel %d read back %r" % (i, got))

    talked = await asyncio.gather(*(talk(i, rw) for i, rw in enumerate(good)),
                                  return_exceptions=True)
    bad += [t for t in talked if isinstance(t, BaseException)]
    for _, w in good:
        w.close()
    if bad:
        print("failed %d of %d: %r" % (len(bad), n, bad[0]))
        return 1
    print("ok %d" % n)
    return 0


def _read_all(s, out, stop_at_answer):
    """Read into out until EOF, 3 s of silence, or (stop_at_answer) one whole answer."""
    s.settimeout(3)
    while True:
        if stop_at_answer and b"\r\n\r\n" in out:
            head, _, body = out.partition(b"\r\n\r\n")
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    if len(body) >= int(line.split(b":")[1]):
                        return out, True
        try:
            data = s.recv(65536)
        except (socket.timeout, ConnectionError) as e:
            return out + b"\n[recv: %s]" % str(e).encode(), False
        if not data:
            return out + b"\n[closed by the proxy]", False
        out += data


def keepalive(h1, h2, port, mode):
    s = socket.create_connection(PROXY, timeout=5)
    req = lambda h: ("GET http://%s:%d/ka HTTP/1.1\r\nHost: %s:%d\r\n"
                     "Connection: keep-alive\r\n\r\n" % (h, port, h, port)).encode()
    out = b""
    if mode == "sequential":
        s.sendall(req(h1))
        out, still_open = _read_all(s, out, True)
        if still_open:
            try:
                s.sendall(req(h2))
            except OSError as e:
                out += b"\n[send: %s]" % str(e).encode()
    else:
        s.sendall(req(h1) + req(h2))
    out, _ = _read_all(s, out, False)
    sys.stdout.write(out.decode("latin-1") + "\n")
    return 0


def _conn():
    s = socket.create_connection(PROXY, timeout=5)
    return s


def _close_rst(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def abuse(rounds, echo_host, port, pending_host):
    for _ in range(rounds):
        socks = []
        s = _conn(); s.sendall(os.urandom(512)); socks.append(s)              # garbage
        s = _conn(); s.sendall(b"GET /" + b"A" * 70000 + b" HTTP/1.1\r\n"); socks.append(s)
        s = _conn(); s.sendall(b"\x05\xff" + b"\x00" * 255); socks.append(s)  # bad SOCKS
        s = _conn(); s.sendall(b"\x05\x01\x00"); socks.append(s)              # cut short
        s = _conn(); s.sendall(b"\x04\x01\x00\x50\x7f\x00\x00\x01\x00"); socks.append(s)
        s = _conn(); s.sendall(b"CONNECT "); socks.append(s)                  # slow, then gone
        time.sleep(0.05)
        s.sendall(b"%s:%d HTTP/1.1\r\n" % (echo_host.encode(), port))
        s = _conn()  # CONNECT, gone before the answer
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\n\r\n" % (echo_host.encode(), port))
        _close_rst(s)
        s = _conn()  # gone while the host resolves
        s.sendall(b"CONNECT %s:443 HTTP/1.1\r\n\r\n" % pending_host.encode())
        _close_rst(s)
        s = _conn()  # a tunnel reset mid-stream
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\n\r\n" % (echo_host.encode(), port))
        s.recv(4096)
        s.sendall(b"x" * 100000)
        _close_rst(s)
        s = _conn()  # plain HTTP, abandoned half-way through the body
        s.sendall(b"POST http://%s:%d/p HTTP/1.1\r\nHost: %s:%d\r\nContent-Length: 100000\r\n\r\n"
                  % (echo_host.encode(), port, echo_host.encode(), port) + b"y" * 1000)
        socks.append(s)
        s = _conn()  # half-closed right away
        s.shutdown(socket.SHUT_WR)
        socks.append(s)
        time.sleep(0.05)
        for s in socks:
            _close_rst(s)
    print("done %d" % rounds)
    return 0


def slowloris(n, limit):
    socks = []
    for _ in range(n):
        s = _conn()
        s.sendall(b"CONNECT slow.test:443 HTTP/1.1\r\nHost: slow")
        s.setblocking(False)
        socks.append(s)
    t0 = time.monotonic()
    open_ = set(range(n))
    while open_ and time.monotonic() - t0 < limit:
        time.sleep(0.2)
        for i in list(open_):
            try:
                if socks[i].recv(4096) == b"":
                    open_.discard(i)
            except BlockingIOError:
                pass
            except OSError:
                open_.discard(i)
    print("closed %d of %d in %.0f s" % (n - len(open_), n, time.monotonic() - t0))
    for s in socks:
        s.close()
    return 0


def sync(d, phase):
    open(os.path.join(d, phase + ".ready"), "w").close()
    go = os.path.join(d, phase + ".go")
    for _ in range(600):
        if os.path.exists(go):
            return 0
        time.sleep(0.1)
    print("sync: no %s" % go)
    return 1


def _recut(flight, rec):
    """The handshake bytes of the records in flight, in records of rec bytes."""
    hs, i = b"", 0
    while i + 5 <= len(flight):
        n = struct.unpack(">H", flight[i + 3:i + 5])[0]
        hs += flight[i + 5:i + 5 + n]
        i += 5 + n
    return b"".join(b"\x16\x03\x01" + struct.pack(">H", len(hs[k:k + rec])) + hs[k:k + rec]
                    for k in range(0, len(hs), rec))


def tls(host, port, sni, seg, rec, version, cafile):
    if DIRECT:
        try:
            s = socket.create_connection((host, port), timeout=10)
        except OSError as e:
            print("tls failed: connect: %s" % e)
            return 1
        head = b"HTTP/1.1 200 direct\r\n\r\n"
    else:
        s = socket.create_connection(PROXY, timeout=10)
        s.sendall(b"CONNECT %s:%d HTTP/1.1\r\n\r\n" % (host.encode(), port))
        head = b""
    while b"\r\n\r\n" not in head:
        d = s.recv(1)
        if not d:
            break
        head += d
    if head.split(b" ")[1:2] != [b"200"]:
        print("tls failed: CONNECT answered %r" % head.split(b"\r\n")[0])
        return 1
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.check_hostname = False
    if version != "any":
        v = ssl.TLSVersion.TLSv1_2 if version == "1.2" else ssl.TLSVersion.TLSv1_3
        ctx.minimum_version = ctx.maximum_version = v
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    t = ctx.wrap_bio(inc, out, server_hostname=None if sni == "-" else sni)
    first = True

    def pump(step):
        nonlocal first
        while True:
            try:
                r = step()
                done = True
            except ssl.SSLWantReadError:
                done = False
            data = out.read()
            if data and first:
                first = False
                data = _recut(data, rec) if rec else data
                for k in range(0, len(data), seg or len(data)):
                    s.sendall(data[k:k + (seg or len(data))])
                    if seg:
                        time.sleep(0.002)
            elif data:
                s.sendall(data)
            if done:
                return r
            d = s.recv(65536)
            if not d:
                raise ConnectionError("closed by the proxy")
            inc.write(d)

    try:
        pump(t.do_handshake)
        pump(lambda: t.write(b"GET /tls HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n"
                             % (host.encode(), port)))
        body = b""
        while b"\n" not in body.partition(b"\r\n\r\n")[2]:
            body += pump(lambda: t.read(65536))
    except (ssl.SSLError, OSError) as e:
        print("tls failed: %s" % e)
        return 1
    print("tls ok %s: %s" % (t.version(), body.partition(b"\r\n\r\n")[2].split(b"\n")[0].decode()))
    return 0


DIRECT = False


def main():
    global PROXY, DIRECT
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    a = sys.argv[1:]
    if a[:1] == ["--proxy"]:
        h, _, p = a[1].rpartition(":")
        PROXY = (h, int(p))
        a = a[2:]
    if a[:1] == ["--direct"]:
        DIRECT = True
        a = a[1:]
    if not a:
        sys.exit(__doc__)
    if a[0] == "tunnels":
        return asyncio.run(tunnels(int(a[1]), a[2], int(a[3])))
    if a[0] == "keepalive":
        return keepalive(a[1], a[2], int(a[3]), a[4])
    if a[0] == "abuse":
        return abuse(int(a[1]), a[2], int(a[3]), a[4])
    if a[0] == "slowloris":
        return slowloris(int(a[1]), float(a[2]))
    if a[0] == "sync":
        return sync(a[1], a[2])
    if a[0] == "tls":
        return tls(a[1], int(a[2]), a[3], int(a[4]), int(a[5]), a[6], a[7])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
