#!/usr/bin/env python3
"""netsrv: local test servers for the `--net allow` tests (tests/sh/82-net-allow.t).

usage:
  netsrv.py http  [--name NAME] [--cert CRT --key KEY] [--git-root DIR] [--bind ADDR --port N]
  netsrv.py echo
  netsrv.py canary [--bind ADDR]

Every server binds 127.0.0.1 on an ephemeral port (http: ADDR and N when given), prints
"ready PORT" on stdout once it listens, and serves until killed.

http:  HTTP/1.1 with keep-alive (so a test can see whether a proxy lets one connection switch
       hosts). GET /anything answers 200 "hello from NAME host=HOST path=PATH\n"; with --cert and
       --key it speaks TLS (HTTPS). With --log FILE, each request is appended to FILE as one
       JSON line {"method", "path", "headers"} (what a server received, for the tests of
       doc/design.md §4d). With --git-root, paths under /git/ are served by
       `git http-backend` (smart HTTP: clone and fetch), GIT_PROJECT_ROOT=DIR.
echo:  raw TCP: every byte read is written back (a stand-in for a host loopback service).
canary: a service nothing in the jail may reach (tests/sh/88-capture.t): on ADDR (default
       127.0.0.1; 0.0.0.0 for every address of the host), prints "accept PEER" for each
       connection it is handed, and closes it.
Python standard library only.
"""
import asyncio
import json
import os
import resource
import ssl
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def ready(port):
    sys.stdout.write("ready %d\n" % port)
    sys.stdout.flush()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "netsrv"
    name = "server"
    git_root = None
    log = None
    lock = threading.Lock()

    def log_message(self, fmt, *args):  # quiet
        pass

    def _record(self):
        if self.log:
            with self.lock, open(self.log, "a", encoding="utf-8") as f:
                f.write(json.dumps({"method": self.command, "path": self.path,
                                    "headers": dict(self.headers.items())}) + "\n")

    def _reply(self, code, body, ctype="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _git(self):
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.git_root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path[len("/git"):],
            "REQUEST_METHOD": self.command,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": "HTTP/1.1",
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        p = subprocess.run(["git", "http-backend"], input=body, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
        head, _, out = p.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, out = p.stdout.partition(b"\n\n")
        code = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            k, _, v = line.partition(":")
            if k.lower() == "status":
                code = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def do_GET(self):
        self._record()
        if self.git_root and self.path.startswith("/git/"):
            return self._git()
        body = ("hello from %s host=%s path=%s\n" % (
            self.name, self.headers.get("Host", ""), self.path)).encode()
        self._reply(200, body)

    do_HEAD = do_GET

    def do_POST(self):
        self._record()
        if self.git_root and self.path.startswith("/git/"):
            return self._git()
        length = int(self.headers.get("Content-Length") or 0)
        data = self.rfile.read(length) if length else b""
        self._reply(200, b"posted %d bytes to %s\n" % (len(data), self.name.encode()))


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024


def serve_http(args):
    opts = dict(zip(args[::2], args[1::2]))
    Handler.name = opts.get("--name", "server")
    Handler.git_root = opts.get("--git-root")
    Handler.log = opts.get("--log")
    srv = Server((opts.get("--bind", "127.0.0.1"), int(opts.get("--port", 0))), Handler)
    if "--cert" in opts:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(opts["--cert"], opts["--key"])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    ready(srv.server_address[1])
    srv.serve_forever()


async def _echo(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


def serve_echo(_args):
    """asyncio, not a thread per connection: the tests open a thousand at once."""
    async def run():
        srv = await asyncio.start_server(_echo, "127.0.0.1", 0, backlog=2048)
        ready(srv.sockets[0].getsockname()[1])
        await srv.serve_forever()
    asyncio.run(run())


def serve_canary(args):
    import socket
    opts = dict(zip(args[::2], args[1::2]))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((opts.get("--bind", "127.0.0.1"), 0))
    s.listen(128)
    ready(s.getsockname()[1])
    while True:
        c, peer = s.accept()
        sys.stdout.write("accept %s:%d\n" % peer[:2])
        sys.stdout.flush()
        c.close()


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "http":
        serve_http(args)
    elif mode == "echo":
        serve_echo(args)
    elif mode == "canary":
        serve_canary(args)
    else:
        sys.exit("netsrv: unknown mode %s" % mode)


if __name__ == "__main__":
    threading.current_thread().name = "netsrv"
    main()
