# The wire corpus of ../engine-issue14 (wire-corpus.py) over Streamable HTTP:
# every line is POSTed to a running server three ways, and each answer's
# status, Content-Type, Mcp-Session-Id (its shape: random ids differ between
# runs), Connection and WWW-Authenticate/Allow/Retry-After headers and body
# are written one line per request, in order. Sequential, so the output is
# deterministic for one server build.
#   1. legacy, in one session: the first `initialize` of each block mints it
#      (no Mcp-Session-Id), every later line carries it;
#   2. modern with the mirrored headers taken from the body
#      (MCP-Protocol-Version 2026-07-28, Mcp-Method, Mcp-Name);
#   3. modern without them (header mismatch answers).
# Then a few transport-level cases (wrong media types, GET, DELETE, /health,
# unknown paths, unknown protocol header, oversized body).
#   python3 http-wire.py <port> < in.jsonl > out.txt
import http.client, json, re, sys

port = int(sys.argv[1])
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
SHOWN = ["content-type", "connection", "www-authenticate", "allow", "retry-after", "cache-control",
         "x-accel-buffering"]

def post(body, headers=None, method="POST", path="/mcp"):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    data = body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass")
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    text = r.read().decode("utf-8", "backslashreplace")
    sid = r.getheader("mcp-session-id")
    if r.getheader("connection", "").lower() == "close":
        conn.close()
    shown = {k: r.getheader(k) for k in SHOWN if r.getheader(k) is not None}
    if sid is not None:
        shown["mcp-session-id"] = re.sub(r"[0-9a-f]{32}$", "<32 hex>", sid)
    return r.status, shown, text, sid

def out(tag, status, shown, text):
    sys.stdout.write(json.dumps([tag, status, shown, text], ensure_ascii=False) + "\n")

lines = sys.stdin.read().split("\n")[:-1]
session = None
for i, line in enumerate(lines):
    try:
        msg = json.loads(line)
    except Exception:
        msg = None
    is_init = isinstance(msg, dict) and msg.get("method") == "initialize" and "id" in msg
    h = {}
    if session and not is_init:
        h["Mcp-Session-Id"] = session
    status, shown, text, sid = post(line, h)
    if sid:
        session = sid
    out("legacy %d" % i, status, shown, text)
    # modern, mirrored
    h = {"MCP-Protocol-Version": "2026-07-28"}
    if isinstance(msg, dict):
        if isinstance(msg.get("method"), str):
            h["Mcp-Method"] = msg["method"]
        p = msg.get("params")
        if isinstance(p, dict) and isinstance(p.get("name"), str):
            name = p["name"]
            h["Mcp-Name"] = name if name.isascii() else "=?base64?" + __import__("base64").b64encode(name.encode()).decode() + "?="
    out("modern %d" % i, *post(line, h)[:3])
    out("bare %d" % i, *post(line, {"MCP-Protocol-Version": "2026-07-28"})[:3])

ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}'
for tag, args in [
    ("text/plain", dict(body=ping, headers={"Content-Type": "text/plain"})),
    ("accept sse only", dict(body=ping, headers={"Accept": "text/event-stream"})),
    ("GET", dict(body=b"", method="GET")),
    ("DELETE no session", dict(body=b"", method="DELETE")),
    ("DELETE unknown", dict(body=b"", method="DELETE", headers={"Mcp-Session-Id": "nope"})),
    ("health", dict(body=b"", method="GET", path="/health")),
    ("other path", dict(body=ping, path="/other")),
    ("unknown version header", dict(body=ping, headers={"MCP-Protocol-Version": "1999-01-01"})),
    ("headerless legacy header", dict(body=ping, headers={"MCP-Protocol-Version": "2025-03-26"})),
    ("bad origin", dict(body=ping, headers={"Origin": "http://evil.example"})),
    ("bad host", dict(body=ping, headers={"Host": "evil.example"})),
]:
    out(tag, *post(**args)[:3])
# A declared length over the limit: answered before the body is sent.
conn.putrequest("POST", "/mcp")
for k, v in [("Content-Type", "application/json"), ("Accept", "application/json"), ("Content-Length", str(17 << 20))]:
    conn.putheader(k, v)
conn.endheaders()
r = conn.getresponse()
out("too large", r.status, {k: r.getheader(k) for k in SHOWN if r.getheader(k) is not None}, r.read().decode())
conn.close()
if session:
    out("DELETE session", *post(b"", {"Mcp-Session-Id": session}, method="DELETE")[:3])
    out("after DELETE", *post(ping, {"Mcp-Session-Id": session})[:3])
