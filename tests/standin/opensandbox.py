#!/usr/bin/env python3
"""A local stand-in for an OpenSandbox service: the lifecycle server and execd in one process.

The smallest faithful subset of the API that agentjail's opensandbox backend uses (the facts are
in doc/design.md §4b): creation checked as the spec's CreateSandboxRequest (every required
field — image.uri, timeout 60..86400, resourceLimits, entrypoint — and the types of the
optional ones; 400 INVALID_REQUEST naming the field otherwise) and asynchronous (202 Pending,
then Running), the endpoint lookup (an address with no scheme and a path prefix, and a headers
map that must be sent back), execd's ping, the command stream (one JSON line then a blank line
per event, no `data:` prefix, lines split mid-write, pings, `execution_complete` or `error` with
the exit code as a string, the connection kept open a moment after the end), command status and
interrupt, multipart upload (a metadata part without `filename=` is refused; `mode` is read as
octal digits), download (404 FILE_NOT_FOUND), renew (400 for a time in the past), delete (204,
then 404), and 401 `{code, message}` on a missing or wrong key.

A sandbox is a directory: the sandbox path P is ROOT/P; a command runs under `sh -c` with its cwd
there (commands in the tests use relative paths) and ROOT/usr/local/bin first on its PATH, so a
command can replace the tools later commands run (a hostile sandbox forging agentjail's listing).
It is a test fixture, not a jail.

usage: [STANDIN_API_KEY=KEY] opensandbox.py --state DIR [--key KEY] [--pending S] [--ping S] [--linger S]
                      [--never-ready] [--drop-stream-after N] [--stall-stream-after N]
Writes the port to DIR/port when listening. GET /_standin/sandboxes lists the live sandboxes
(for tests: "none left"); GET /_standin/log returns the request log (method, path, headers)."""
import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlparse

ARGS = None
LOCK = threading.Lock()
SANDBOXES = {}  # id -> dict
COMMANDS = {}  # command id -> dict
LOG = []


def now_iso(t=None):
    return datetime.fromtimestamp(t if t is not None else time.time(), timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def refresh(sb):
    """Pending becomes Running once its time has come (never with --never-ready)."""
    if sb["state"] == "Pending" and not ARGS.never_ready and time.time() >= sb["ready_at"]:
        sb["state"] = "Running"
        sb["transition"] = time.time()


def sandbox_view(sb):
    refresh(sb)
    state = sb["state"]
    return {
        "id": sb["id"],
        "image": sb["image"],
        "status": {"state": state, "reason": None, "message": None,
                   "lastTransitionAt": now_iso(sb["transition"])},
        "expiresAt": now_iso(sb["expires"]) if sb["expires"] else None,
        "createdAt": now_iso(sb["created"]),
        "entrypoint": sb["entrypoint"],
        "metadata": sb["metadata"],
    }


def safe_path(sb, p):
    """The host path of sandbox path p, or None when it leaves the sandbox."""
    if not p or not p.startswith("/"):
        return None
    root = sb["root"]
    full = os.path.normpath(os.path.join(root, p.lstrip("/")))
    if full != root and not full.startswith(root + "/"):
        return None
    return full


# CreateSandboxRequest (specs/sandbox-lifecycle.yml), as strict as the strictest version of the
# spec: `required: [image, timeout, resourceLimits, entrypoint]` (before manual cleanup; later
# versions allow timeout null and keep resourceLimits required outside pool mode), timeout an
# integer in 60..86400, resourceLimits a map of strings, entrypoint at least one string.
TIMEOUT_MAX = 86400


def is_str_map(v):
    return isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str)
                                       for k, x in v.items())


def create_request_fault(req):
    """None when req is a valid CreateSandboxRequest, else the reason, as a server says it."""
    if not isinstance(req, dict):
        return "the body must be a JSON object"
    for field in ("image", "timeout", "resourceLimits", "entrypoint"):
        if field not in req:
            return "%s is required" % field
    img = req["image"]
    if not isinstance(img, dict) or not isinstance(img.get("uri"), str) or not img["uri"]:
        return "image.uri is required"
    if "auth" in img and not is_str_map(img["auth"]):
        return "image.auth must be {username, password}"
    t = req["timeout"]
    if isinstance(t, bool) or not isinstance(t, int) or not 60 <= t <= TIMEOUT_MAX:
        return "timeout must be an integer from 60 to %d seconds" % TIMEOUT_MAX
    if not is_str_map(req["resourceLimits"]):
        return "resourceLimits must be a map of strings (cpu, memory)"
    ep = req["entrypoint"]
    if not isinstance(ep, list) or not ep or not all(isinstance(x, str) for x in ep):
        return "entrypoint must be a non-empty array of strings"
    for field in ("env", "metadata"):
        if field in req and not is_str_map(req[field]):
            return "%s must be a map of strings" % field
    if "networkPolicy" in req:
        np = req["networkPolicy"]
        if not isinstance(np, dict) or set(np) - {"defaultAction", "egress"}:
            return "networkPolicy has only defaultAction and egress"
        if "defaultAction" in np and np["defaultAction"] not in ("allow", "deny"):
            return "networkPolicy.defaultAction is allow or deny"
        eg = np.get("egress", [])
        if not isinstance(eg, list):
            return "networkPolicy.egress must be an array"
        for r in eg:
            if not isinstance(r, dict) or set(r) != {"action", "target"} \
                    or r["action"] not in ("allow", "deny") or not isinstance(r["target"], str):
                return "networkPolicy.egress rules are {action: allow|deny, target}"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "opensandbox-standin/1"

    def log_message(self, fmt, *a):
        if os.environ.get("STANDIN_VERBOSE"):
            sys.stderr.write("standin: " + (fmt % a) + "\n")

    # ---- replies
    def reply(self, code, obj=None, headers=None, raw=None, ctype="application/json"):
        body = raw if raw is not None else (b"" if obj is None else json.dumps(obj).encode())
        self.send_response(code)
        self.send_header("X-Request-ID", uuid.uuid4().hex)
        if code != 204:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if code != 204 and self.command != "HEAD":
            self.wfile.write(body)

    def error(self, code, ecode, msg):
        self.reply(code, {"code": ecode, "message": msg})

    def body(self):
        return self._body

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                line = self.rfile.readline().strip()
                size = int(line.split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        return b""

    def json_body(self):
        try:
            return json.loads(self.body() or b"{}")
        except ValueError:
            return None

    # ---- dispatch
    def handle_any(self):
        u = urlparse(self.path)
        path, q = u.path, parse_qs(u.query)
        self._body = self.read_body()  # always: an unread body would be read as the next request
        with LOCK:
            LOG.append({"method": self.command, "path": self.path,
                        "headers": {k: v for k, v in self.headers.items()}})
        if path.startswith("/_standin/"):
            return self.control(path)
        if path.startswith("/proxy/"):
            return self.execd(path, q)
        if path.startswith("/v1/"):
            path = path[3:]
        if not path.startswith("/sandboxes"):
            return self.error(404, "NOT_FOUND", "no route " + path)
        if ARGS.key is not None:
            got = self.headers.get("OPEN-SANDBOX-API-KEY")
            if got is None:
                return self.error(401, "MISSING_API_KEY", "Authentication credentials are missing")
            if got != ARGS.key:
                return self.error(401, "INVALID_API_KEY", "Authentication credentials are invalid")
        return self.lifecycle(path, q)

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = handle_any

    def control(self, path):
        with LOCK:
            if path == "/_standin/sandboxes":
                return self.reply(200, sorted(SANDBOXES))
            if path == "/_standin/log":
                return self.reply(200, LOG)
        return self.error(404, "NOT_FOUND", path)

    # ---- lifecycle server
    def lifecycle(self, path, q):
        parts = [p for p in path.split("/") if p]
        if parts == ["sandboxes"] and self.command == "POST":
            req = self.json_body()
            bad = create_request_fault(req)
            if bad:
                return self.error(400, "INVALID_REQUEST", bad)
            ep, t = req["entrypoint"], req["timeout"]
            sid = uuid.uuid4().hex[:20]
            root = os.path.join(ARGS.state, "sandboxes", sid)
            os.makedirs(root)
            now = time.time()
            sb = {"id": sid, "image": req["image"], "entrypoint": ep, "root": root,
                  "metadata": req.get("metadata") or {}, "state": "Pending",
                  "created": now, "transition": now, "ready_at": now + ARGS.pending,
                  "expires": now + t if t else None, "token": secrets.token_hex(8),
                  "request": req}
            with LOCK:
                SANDBOXES[sid] = sb
            return self.reply(202, sandbox_view(sb))
        if len(parts) < 2:
            return self.error(404, "NOT_FOUND", "no route " + path)
        with LOCK:
            sb = SANDBOXES.get(parts[1])
        if sb is None:
            return self.error(404, "SANDBOX_NOT_FOUND", "sandbox %s not found" % parts[1])
        if len(parts) == 2 and self.command == "GET":
            return self.reply(200, sandbox_view(sb))
        if len(parts) == 2 and self.command == "DELETE":
            self.kill_sandbox(sb)
            return self.reply(204)
        if len(parts) == 4 and parts[2] == "endpoints" and self.command == "GET":
            port = parts[3]
            host = "127.0.0.1:%d" % self.server.server_address[1]
            return self.reply(200, {
                "endpoint": "%s/proxy/%s/%s" % (host, sb["id"], port),
                "headers": {"X-EXECD-ACCESS-TOKEN": sb["token"]}})
        if len(parts) == 3 and parts[2] == "renew-expiration" and self.command == "POST":
            if sb["expires"] is None:
                return self.error(409, "SANDBOX_NO_EXPIRY", "sandbox has no expiration to renew")
            req = self.json_body() or {}
            try:
                t = datetime.fromisoformat(str(req.get("expiresAt")).replace("Z", "+00:00"))
            except ValueError:
                return self.error(400, "INVALID_REQUEST", "expiresAt must be RFC 3339")
            if t.timestamp() <= time.time():
                return self.error(400, "INVALID_REQUEST", "expiresAt must be in the future")
            sb["expires"] = t.timestamp()
            return self.reply(200, {"expiresAt": now_iso(sb["expires"])})
        return self.error(404, "NOT_FOUND", "no route " + path)

    def kill_sandbox(self, sb):
        with LOCK:
            SANDBOXES.pop(sb["id"], None)
            cmds = [c for c in COMMANDS.values() if c["sandbox"] == sb["id"]]
        for c in cmds:
            stop(c)
        shutil.rmtree(sb["root"], ignore_errors=True)

    # ---- execd (behind /proxy/ID/PORT)
    def execd(self, path, q):
        parts = path.split("/", 4)  # '', 'proxy', id, port, rest
        if len(parts) < 4:
            return self.error(404, "NOT_FOUND", path)
        with LOCK:
            sb = SANDBOXES.get(parts[2])
        if sb is None:
            return self.error(502, "SANDBOX_GONE", "no sandbox " + parts[2])
        refresh(sb)
        if sb["state"] != "Running":
            return self.error(503, "NOT_READY", "sandbox is " + sb["state"])
        if self.headers.get("X-EXECD-ACCESS-TOKEN") != sb["token"]:
            return self.error(401, "UNAUTHORIZED", "missing or wrong X-EXECD-ACCESS-TOKEN")
        rest = "/" + (parts[4] if len(parts) > 4 else "")
        if parts[3] != "44772":
            return self.reply(200, {}) if rest == "/policy" else self.error(404, "NOT_FOUND", rest)
        if rest == "/ping":
            return self.reply(200, raw=b"", ctype="text/plain")
        if rest == "/command" and self.command == "POST":
            return self.run_command(sb, self.json_body())
        if rest == "/command" and self.command == "DELETE":
            cid = (q.get("id") or [""])[0]
            with LOCK:
                c = COMMANDS.get(cid)
            if c is None:
                return self.error(404, "COMMAND_NOT_FOUND", "no command " + cid)
            stop(c)
            return self.reply(200, {})
        if rest.startswith("/command/status/"):
            with LOCK:
                c = COMMANDS.get(rest.rsplit("/", 1)[1])
            if c is None:
                return self.error(404, "COMMAND_NOT_FOUND", rest)
            p = c["proc"]
            code = p.poll()
            return self.reply(200, {"id": c["id"], "running": code is None,
                                    "exit_code": None if code is None else exit_of(c, code),
                                    "error": None, "started_at": now_iso(c["started"]),
                                    "finished_at": None if code is None else now_iso()})
        if rest == "/files/upload" and self.command == "POST":
            return self.upload(sb)
        if rest == "/files/download" and self.command == "GET":
            full = safe_path(sb, (q.get("path") or [""])[0])
            if full is None or not os.path.isfile(full):
                return self.error(404, "FILE_NOT_FOUND", "file not found: %s"
                                  % (q.get("path") or [""])[0])
            with open(full, "rb") as f:
                return self.reply(200, raw=f.read(), ctype="application/octet-stream")
        if rest == "/files/info" and self.command == "GET":
            out = {}
            for p in q.get("path") or []:
                full = safe_path(sb, p)
                if full is None or not os.path.lexists(full):
                    return self.error(404, "FILE_NOT_FOUND", "file not found: " + p)
                st = os.lstat(full)
                out[p] = {"path": p, "size": st.st_size, "mode": int(oct(st.st_mode & 0o7777)[2:]),
                          "modified_at": now_iso(st.st_mtime)}
            return self.reply(200, out)
        if rest == "/directories" and self.command == "POST":
            req = self.json_body() or {}
            for p, m in req.items():
                full = safe_path(sb, p)
                if full is None:
                    return self.error(400, "INVALID_PATH", p)
                os.makedirs(full, exist_ok=True)
                if isinstance(m, dict) and m.get("mode"):
                    os.chmod(full, int(str(m["mode"]), 8))
            return self.reply(200, {})
        if rest == "/files" and self.command == "DELETE":
            for p in q.get("path") or []:
                full = safe_path(sb, p)
                if full and os.path.isfile(full):
                    os.unlink(full)
            return self.reply(200, {})
        return self.error(404, "NOT_FOUND", "execd: no route " + rest)

    def upload(self, sb):
        ctype = self.headers.get("Content-Type", "")
        if "boundary=" not in ctype:
            return self.error(400, "INVALID_REQUEST", "multipart/form-data with a boundary expected")
        boundary = ctype.split("boundary=", 1)[1].split(";")[0].strip().strip('"').encode()
        data = self.body()
        parts = []
        for chunk in data.split(b"--" + boundary)[1:]:
            if chunk.startswith(b"--"):
                break
            chunk = chunk[2:] if chunk.startswith(b"\r\n") else chunk
            head, _, content = chunk.partition(b"\r\n\r\n")
            if content.endswith(b"\r\n"):
                content = content[:-2]
            disp = ""
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-disposition:"):
                    disp = line.decode("utf-8", "replace")
            name = disp.split('name="', 1)[1].split('"', 1)[0] if 'name="' in disp else ""
            parts.append((name, disp, content))
        if not parts or len(parts) % 2:
            return self.error(400, "INVALID_REQUEST", "parts must come in metadata/file pairs")
        for i in range(0, len(parts), 2):
            (mname, mdisp, meta), (fname, _, content) = parts[i], parts[i + 1]
            if mname != "metadata" or fname != "file":
                return self.error(400, "INVALID_REQUEST", "expected a metadata part then a file part")
            if "filename=" not in mdisp:
                # the real execd reads the metadata part as a file: without filename= it is lost
                return self.error(400, "INVALID_REQUEST", "metadata part has no filename=")
            try:
                m = json.loads(meta)
            except ValueError:
                return self.error(400, "INVALID_REQUEST", "metadata is not JSON")
            full = safe_path(sb, m.get("path"))
            if full is None:
                return self.error(400, "INVALID_PATH", "bad path %r" % m.get("path"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(content)
            if m.get("mode") is not None:
                os.chmod(full, int(str(int(m["mode"])), 8))  # 755 -> 0o755
        return self.reply(200, {})

    # ---- the command stream
    def send_chunk(self, b):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(b), b))
        self.wfile.flush()

    def event(self, ev, split=True):
        line = json.dumps(ev).encode() + b"\n\n"
        self.nsplit = getattr(self, "nsplit", 0) + 1
        if split and len(line) > 4:
            # one event in two writes: a client must not expect one event per read (the
            # pause, which makes them two reads, only for a command's first events)
            half = len(line) // 2
            self.send_chunk(line[:half])
            if self.nsplit <= 16:
                time.sleep(0.01)
            self.send_chunk(line[half:])
        else:
            self.send_chunk(line)

    def run_command(self, sb, req):
        if not isinstance(req, dict) or not isinstance(req.get("command"), str):
            return self.error(400, "INVALID_REQUEST", "command is required")
        cwd = safe_path(sb, req.get("cwd") or "/")
        if cwd is None or not os.path.isdir(cwd):
            return self.error(400, "INVALID_REQUEST", "cwd %r does not exist" % req.get("cwd"))
        # the sandbox's own /usr/local/bin (ROOT/usr/local/bin) first, as in an image where a
        # root command can put a `find` or `sha256sum` of its own before the system's: what
        # agentjail's later commands there (its listing) then run
        env = {"PATH": "%s/usr/local/bin:/usr/local/bin:/usr/bin:/bin" % sb["root"],
               "HOME": sb["root"]}
        env.update(req.get("envs") or {})
        cid = uuid.uuid4().hex[:16]
        t0 = time.time()
        proc = subprocess.Popen(["sh", "-c", req["command"]], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
        c = {"id": cid, "sandbox": sb["id"], "proc": proc, "started": t0, "stopped": False}
        with LOCK:
            COMMANDS[cid] = c
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("X-Request-ID", uuid.uuid4().hex)
        self.end_headers()
        ms = lambda: int(time.time() * 1000)
        sent = 0
        try:
            self.event({"type": "init", "text": cid, "timestamp": ms()})
            out = []  # (type, line) from the reader threads
            olock = threading.Lock()

            def reader(stream, kind):
                for line in iter(stream.readline, b""):
                    with olock:
                        out.append((kind, line))
                stream.close()
            th = [threading.Thread(target=reader, args=(proc.stdout, "stdout"), daemon=True),
                  threading.Thread(target=reader, args=(proc.stderr, "stderr"), daemon=True)]
            for t in th:
                t.start()
            last_ping = time.time()
            while True:
                done = proc.poll() is not None and not any(t.is_alive() for t in th)
                with olock:
                    batch, out[:] = list(out), []
                for kind, line in batch:
                    text = line.decode("utf-8", "replace")
                    text = text[:-1] if text.endswith("\n") and text != "\n" else text
                    self.event({"type": kind, "text": text, "timestamp": ms()})
                    sent += 1
                    if ARGS.stall_stream_after is not None and sent >= ARGS.stall_stream_after:
                        time.sleep(3600)  # silent, not even pings: a stalled service
                    if ARGS.drop_stream_after is not None and sent >= ARGS.drop_stream_after:
                        self.close_connection = True
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                if done:
                    break
                if time.time() - last_ping >= ARGS.ping:
                    self.event({"type": "ping", "text": "pong", "timestamp": ms()}, split=False)
                    last_ping = time.time()
                time.sleep(0.1)  # execd polls the output about every 100 ms
            code = exit_of(c, proc.returncode)
            elapsed = int((time.time() - t0) * 1000)
            if code == 0:
                self.event({"type": "execution_complete", "timestamp": ms(),
                            "execution_time": elapsed})
            else:
                self.event({"type": "error", "timestamp": ms(), "execution_time": elapsed,
                            "error": {"ename": "CommandExecError", "evalue": str(code),
                                      "traceback": ["exit status %d" % code]}})
            time.sleep(ARGS.linger)  # the connection stays open a moment after the end event
            self.wfile.write(b"0\r\n\r\n")  # the last chunk
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # a dropped connection does not stop the command (as execd)
        self.close_connection = True


def exit_of(c, rc):
    """execd's exit code: the status, or -1 when killed (timeout or interrupt)."""
    if c["stopped"] or rc < 0:
        return -1
    return rc


def stop(c):
    c["stopped"] = True
    try:
        os.killpg(c["proc"].pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--state", required=True)
    # the key from the environment, so that it is not in this process's argv either
    ap.add_argument("--key", default=os.environ.get("STANDIN_API_KEY") or None)
    ap.add_argument("--pending", type=float, default=0.5)
    ap.add_argument("--ping", type=float, default=3.0)
    ap.add_argument("--linger", type=float, default=1.0)
    ap.add_argument("--never-ready", action="store_true")
    ap.add_argument("--drop-stream-after", type=int)
    ap.add_argument("--stall-stream-after", type=int)
    ARGS = ap.parse_args()
    os.makedirs(os.path.join(ARGS.state, "sandboxes"), exist_ok=True)
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    tmp = os.path.join(ARGS.state, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(ARGS.state, "port"))

    def bye(*_):
        with LOCK:
            for c in COMMANDS.values():
                if c["proc"].poll() is None:
                    stop(c)
        os._exit(0)
    signal.signal(signal.SIGTERM, bye)
    signal.signal(signal.SIGINT, bye)
    srv.serve_forever()


if __name__ == "__main__":
    main()
