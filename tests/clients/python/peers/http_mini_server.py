"""A minimal modern (2026-07-28) Streamable HTTP MCP server for mcplite's
client tests, standard library only, plus endpoints that fail on purpose.

    python3 http_mini_server.py PORT

POST /mcp              server/discover, tools/list, tools/call:
                         headers  -> structured content: the request's headers
                         stream   -> an SSE answer: two progress events, then the result
                         hang     -> never answers (until the client goes away)
                         route    -> x-mcp-header arguments: answers 400 / -32020 unless
                                     Mcp-Param-Region matches `region` (Base64 sentinel
                                     decoded), else the Mcp-Param-* headers it got
                       `bad_header` is listed with an invalid x-mcp-header (on a number)
                       unlisted tools that fail on purpose:
                         drop        -> closes the connection without answering
                         drop_body   -> 200 with a Content-Length it never sends in full, then closes
                         drop_stream -> an SSE answer: one progress event, then closes
                         huge        -> 200 with a JSON answer of `bytes` bytes (default 200000)
                         huge_stream -> an SSE answer whose one event is `bytes` bytes
POST /legacy           a legacy (2025-11-25) server with a session, as the conformance
                       suite's client scenarios serve one: server/discover is answered
                       200 with an empty result `{}` (and a session id the client must
                       not adopt); initialize assigns the session "legacy-session";
                       tools/call:
                         session -> structured content: the session id and protocol
                                    version headers of the request
                         resume  -> an SSE answer that only primes (event id r1, retry
                                    300 ms) and closes; the answer comes on the streams
                                    the client resumes with GET and Last-Event-ID (r2
                                    primes again with retry 100 ms and closes, r3 answers)
                         cut     -> an SSE answer without event ids that closes early
GET /legacy            resumes the `resume` stream (Last-Event-ID r1 or r2), else 405;
                       logs "mini: resumed from <id> after <ms> ms" on stderr
POST /status/<code>    answers with that HTTP status and a non-JSON-RPC body
anything else          404
"""

import json
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

META = {"io.modelcontextprotocol/serverInfo": {"name": "mini-http", "version": "0.1"}}
TOOLS = [
    {"name": "headers", "description": "Report the request's headers.", "inputSchema": {"type": "object"}},
    {"name": "stream", "description": "Answer on an event stream.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}},
    {"name": "route", "description": "Mirror arguments into headers.", "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"tenant": {"type": "integer", "x-mcp-header": "Tenant"}}},
            "query": {"type": "string"},
        },
    }},
    {"name": "bad_header", "description": "An invalid annotation.", "inputSchema": {
        "type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}},
    }},
]


LEGACY_TOOLS = [{"name": n, "inputSchema": {"type": "object"}} for n in ("session", "resume", "cut")]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # the `resume` call waiting for its answer: (request id, when its stream closed)
    pending = None

    def log_message(self, *args):
        pass

    def reply(self, status, body, ctype="application/json", extra=None):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def sse(self, chunks):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Mcp-Session-Id", "legacy-session")
        self.end_headers()
        for c in chunks:
            self.wfile.write(c)
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        last = self.headers.get("Last-Event-ID")
        if self.path != "/legacy" or Handler.pending is None or last not in ("r1", "r2"):
            self.reply(405, "", "text/plain")
            return
        rid, closed = Handler.pending
        print(f"mini: resumed from {last} after {(time.monotonic() - closed) * 1000:.0f} ms", file=sys.stderr, flush=True)
        if last == "r1":
            Handler.pending = (rid, time.monotonic())
            self.sse([b"id: r2\nretry: 100\ndata: \n\n"])
            return
        Handler.pending = None
        answer = {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": "resumed"}]}}
        self.sse([b"id: r3\nevent: message\ndata: " + json.dumps(answer).encode() + b"\n\n"])

    def accepted(self, msg):
        """Answer a notification (or response) 202; true when `msg` was one."""
        if "id" in msg:
            return False
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return True

    def legacy(self, msg):
        if self.accepted(msg):
            return
        rid, method, params = msg["id"], msg["method"], msg.get("params") or {}

        def result(r, session="legacy-session"):
            self.reply(200, json.dumps({"jsonrpc": "2.0", "id": rid, "result": r}), extra={"Mcp-Session-Id": session})

        if method == "server/discover":
            result({}, session="discover-session")
        elif method == "initialize":
            result({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mini-legacy", "version": "0.1"}})
        elif method == "tools/list":
            result({"tools": LEGACY_TOOLS})
        elif method == "tools/call" and params.get("name") == "session":
            seen = {"session": self.headers.get("Mcp-Session-Id"), "version": self.headers.get("MCP-Protocol-Version")}
            result({"content": [{"type": "text", "text": "ok"}], "structuredContent": seen})
        elif method == "tools/call" and params.get("name") == "resume":
            self.sse([b"id: r1\nretry: 300\ndata: \n\n"])
            Handler.pending = (rid, time.monotonic())
        elif method == "tools/call" and params.get("name") == "cut":
            event = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}}
            self.sse([b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n"])
        else:
            err = {"code": -32601, "message": "Method not found"}
            result_err = {"jsonrpc": "2.0", "id": rid, "error": err}
            self.reply(200, json.dumps(result_err), extra={"Mcp-Session-Id": "legacy-session"})

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path == "/legacy":
            self.legacy(json.loads(body))
            return
        if self.path.startswith("/status/"):
            code = int(self.path.rsplit("/", 1)[1])
            extra = {"WWW-Authenticate": 'Bearer realm="mcp"'} if code == 401 else None
            self.reply(code, "<html><body>nope</body></html>", "text/html", extra)
            return
        if self.path != "/mcp":
            self.reply(404, "not found", "text/plain")
            return
        msg = json.loads(body)
        if self.accepted(msg):
            return
        rid, method, params = msg["id"], msg["method"], msg.get("params") or {}
        version = params.get("_meta", {}).get("io.modelcontextprotocol/protocolVersion")
        if version != "2026-07-28":
            err = {"code": -32022, "message": "Unsupported protocol version",
                   "data": {"supported": ["2026-07-28"], "requested": version}}
            self.reply(400, json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}))
            return

        def result(r):
            r = {"resultType": "complete", **r, "_meta": META}
            return json.dumps({"jsonrpc": "2.0", "id": rid, "result": r})

        if method == "server/discover":
            self.reply(200, result({"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}}))
        elif method == "tools/list":
            self.reply(200, result({"tools": TOOLS}))
        elif method == "tools/call" and params.get("name") == "headers":
            hdrs = {k.lower(): v for k, v in self.headers.items()}
            self.reply(200, result({"content": [{"type": "text", "text": "ok"}], "structuredContent": hdrs}))
        elif method == "tools/call" and params.get("name") == "stream":
            token = params["_meta"].get("progressToken")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            events = []
            for i in (1, 2):
                if token is not None:
                    events.append({"jsonrpc": "2.0", "method": "notifications/progress",
                                   "params": {"progressToken": token, "progress": i, "total": 2}})
            events.append(json.loads(result({"content": [{"type": "text", "text": "streamed"}]})))
            for e in events:
                self.wfile.write(b": keep-alive\n\nevent: message\ndata: " + json.dumps(e).encode() + b"\n\n")
                self.wfile.flush()
                time.sleep(0.05)
            self.close_connection = True
        elif method == "tools/call" and params.get("name") == "route":
            import base64
            got = self.headers.get("Mcp-Param-Region")
            if got is not None and got.startswith("=?base64?") and got.endswith("?="):
                got = base64.b64decode(got[9:-2]).decode()
            want = (params.get("arguments") or {}).get("region")
            if got != want:
                err = {"code": -32020, "message": f"Header mismatch: Mcp-Param-Region {got!r} vs body {want!r}"}
                self.reply(400, json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}))
                return
            mirrored = {k.lower(): v for k, v in self.headers.items() if k.lower().startswith("mcp-param-")}
            self.reply(200, result({"content": [{"type": "text", "text": "routed"}], "structuredContent": mirrored}))
        elif method == "tools/call" and params.get("name") == "drop":
            self.close_connection = True
        elif method == "tools/call" and params.get("name") == "drop_body":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(result({"content": [{"type": "text", "text": "cut"}]}).encode()[:20])
            self.wfile.flush()
            self.close_connection = True
        elif method == "tools/call" and params.get("name") == "drop_stream":
            token = params["_meta"].get("progressToken")
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            if token is not None:
                event = {"jsonrpc": "2.0", "method": "notifications/progress",
                         "params": {"progressToken": token, "progress": 1, "total": 2}}
                self.wfile.write(b"event: message\ndata: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.flush()
            self.close_connection = True
        elif method == "tools/call" and params.get("name") in ("huge", "huge_stream"):
            size = int((params.get("arguments") or {}).get("bytes", 200000))
            text = result({"content": [{"type": "text", "text": "x" * size}]})
            if params["name"] == "huge":
                self.reply(200, text)
            else:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                self.wfile.write(b"event: message\ndata: " + text.encode() + b"\n\n")
                self.wfile.flush()
                self.close_connection = True
        elif method == "tools/call" and params.get("name") == "hang":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            try:
                for _ in range(600):
                    self.wfile.write(b": waiting\n\n")
                    self.wfile.flush()
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                print("mini: the client closed the stream", file=sys.stderr, flush=True)
            self.close_connection = True
        else:
            err = {"code": -32601, "message": "Method not found"}
            self.reply(404, json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}))


if __name__ == "__main__":
    ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
