#!/usr/bin/env python3
"""fake_anthropic: a scripted stand-in for the Anthropic Messages API (tests/sh/83-net-claude.t).

usage: fake_anthropic.py --log FILE --command CMD [--cert CRT --key KEY]

Listens on 127.0.0.1 (ephemeral port), prints "ready PORT", and answers POST /v1/messages
(over TLS with --cert and --key: tests/sh/89-secrets-claude.t, where agentjail adds the key;
"{PORT}" in CMD becomes the port it listens on):
  - a request whose messages carry no tool_result and that offers the Bash tool: one tool_use
    block asking for `Bash` with {"command": CMD} (stop_reason "tool_use");
  - a request carrying a tool_result: a final text block ("stand-in: done");
  - anything else on /v1/messages (side requests a client may make: titles, quota checks): a
    short text block.
With "stream": true the answer is server-sent events as the real API sends them
(message_start, content_block_start, content_block_delta — input_json_delta for the tool's
input, text_delta for text —, content_block_stop, message_delta, message_stop); without, one
JSON message. Other paths get 404 with an API-style error body (count_tokens gets a count).
Every request is appended to FILE as one JSON line {"method", "path", "headers", "body"} so
the test can read the tool_result the client sent back. Python standard library only.
"""
import json
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
OPTS = {}
TOOL_ID = "toolu_01AgentjailStandIn0001"


def record(entry):
    with LOCK, open(OPTS["--log"], "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def has_tool_result(req):
    for m in req.get("messages", []):
        c = m.get("content")
        if isinstance(c, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in c):
            return True
    return False


def offers_bash(req):
    return any(t.get("name") == "Bash" for t in req.get("tools", []) if isinstance(t, dict))


def plan(req):
    """The content blocks and stop reason to answer with."""
    if has_tool_result(req):
        return [{"type": "text", "text": "stand-in: done"}], "end_turn"
    if offers_bash(req):
        return [{"type": "tool_use", "id": TOOL_ID, "name": "Bash",
                 "input": {"command": OPTS["--command"].replace("{PORT}", OPTS["port"]),
                           "description": "the stand-in's one command"}}], "tool_use"
    return [{"type": "text", "text": "stand-in"}], "end_turn"


def message(req, content, stop):
    return {"id": "msg_01AgentjailStandIn", "type": "message", "role": "assistant",
            "model": req.get("model", "claude-stand-in"), "content": content,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def sse_events(req, content, stop):
    start = message(req, [], None)
    start["usage"]["output_tokens"] = 1
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(content):
        if block["type"] == "tool_use":
            yield "content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "tool_use", "id": block["id"],
                                  "name": block["name"], "input": {}}}
            js = json.dumps(block["input"])
            for k in range(0, len(js), 40):
                yield "content_block_delta", {
                    "type": "content_block_delta", "index": i,
                    "delta": {"type": "input_json_delta", "partial_json": js[k:k + 40]}}
        else:
            yield "content_block_start", {
                "type": "content_block_start", "index": i,
                "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {
                "type": "content_block_delta", "index": i,
                "delta": {"type": "text_delta", "text": block["text"]}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 5}}
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def _send(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_standin")
        self.end_headers()
        self.wfile.write(body)

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"unparsed": raw.decode("utf-8", "replace")}

    def _log(self, body):
        record({"method": self.command, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})

    def do_GET(self):
        self._log(None)
        self._send(404, {"type": "error",
                         "error": {"type": "not_found_error", "message": "stand-in"}})

    def do_POST(self):
        req = self._body()
        self._log(req)
        path = self.path.split("?")[0]
        if path == "/v1/messages/count_tokens":
            return self._send(200, {"input_tokens": 10})
        if path != "/v1/messages":
            return self._send(404, {"type": "error",
                                    "error": {"type": "not_found_error", "message": "stand-in"}})
        content, stop = plan(req)
        if not req.get("stream"):
            return self._send(200, message(req, content, stop))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.send_header("request-id", "req_standin")
        self.end_headers()
        for name, data in sse_events(req, content, stop):
            self.wfile.write(("event: %s\ndata: %s\n\n" % (name, json.dumps(data))).encode())
            self.wfile.flush()
        self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True


def main():
    args = sys.argv[1:]
    OPTS.update(zip(args[::2], args[1::2]))
    if "--log" not in OPTS or "--command" not in OPTS:
        sys.exit(__doc__)
    srv = Server(("127.0.0.1", 0), Handler)
    if "--cert" in OPTS:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(OPTS["--cert"], OPTS["--key"])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    OPTS["port"] = str(srv.server_address[1])
    sys.stdout.write("ready %d\n" % srv.server_address[1])
    sys.stdout.flush()
    srv.serve_forever()


if __name__ == "__main__":
    main()
