"""A task that outlives its client's connection (issue 46), run by hand.

Starts tests/clients/servers/tasks.R over HTTP with two workers, starts the
tool `fit` as a task that runs MINUTES minutes (one step a second) in both
eras, closes that client's connection (2025-11-25: DELETE of its session),
then polls the task from a new connection every 30 s (a new session each
time in 2025-11-25) and fetches the result at the end. Prints one line per
poll and a summary; exits non-zero when a poll fails or the result is wrong.

    R_LIBS=/path/to/lib python3 bench/soak/task_outlives.py [MINUTES]
"""
import json, os, re, subprocess, sys, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MINUTES = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
STEPS = int(MINUTES * 60)
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


def post(url, body, headers):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    req = urllib.request.Request(url, json.dumps(body).encode(), h, method="POST")
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
        sid = r.headers.get("Mcp-Session-Id")
    if not text.strip():
        return None, sid
    if text.startswith("{"):
        return json.loads(text), sid
    datas = [l[5:].strip() for l in text.splitlines() if l.startswith("data:")]
    return json.loads([d for d in datas if d][-1]), sid


def modern(url, id, method, params, name):
    params = {**params, "_meta": MODERN}
    hdr = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
    return post(url, {"jsonrpc": "2.0", "id": id, "method": method, "params": params}, hdr)[0]


def legacy_session(url):
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "soak", "version": "1"}}}
    _, sid = post(url, init, {})
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    return sid


def legacy(url, sid, id, method, params):
    return post(url, {"jsonrpc": "2.0", "id": id, "method": method, "params": params},
                {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})[0]


def delete(url, sid):
    req = urllib.request.Request(url, method="DELETE", headers={"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    urllib.request.urlopen(req, timeout=30).read()


def main():
    env = dict(os.environ, MCPLITE_TRANSPORT="http", MCPLITE_PORT="0", MCPLITE_TEST_WORKERS="2")
    srv = subprocess.Popen(["Rscript", "--vanilla", os.path.join(ROOT, "tests/clients/servers/tasks.R")],
                           env=env, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        while url is None:
            line = srv.stderr.readline()
            if not line:
                raise SystemExit("the server did not start")
            m = re.search(r"(http://\S+/mcp)", line)
            url = m and m.group(1)
        args = {"steps": STEPS, "ms": 1000}
        t0 = time.time()
        created = modern(url, 1, "tools/call", {"name": "fit", "arguments": args}, "fit")["result"]
        mid = created["taskId"]
        sid = legacy_session(url)
        lid = legacy(url, sid, 1, "tools/call", {"name": "fit", "arguments": args, "task": {}})["result"]["task"]["taskId"]
        delete(url, sid)
        print(f"started {mid} (2026-07-28) and {lid} (2025-11-25, its session deleted) for {STEPS} s", flush=True)
        failures, polls = 0, 0
        while True:
            time.sleep(30)
            polls += 1
            m = modern(url, 100 + polls, "tasks/get", {"taskId": mid}, mid).get("result", {})
            s = legacy_session(url)
            l = legacy(url, s, 2, "tasks/get", {"taskId": lid}).get("result", {})
            delete(url, s)
            print(f"{time.time() - t0:7.0f} s  modern {m.get('status')} {m.get('statusMessage')!r}  "
                  f"legacy {l.get('status')} {l.get('statusMessage')!r}", flush=True)
            if not m.get("status") or not l.get("status"):
                failures += 1
            if m.get("status") != "working" and l.get("status") != "working":
                break
        want = f"fitted in {STEPS} steps"
        mtext = m.get("result", {}).get("content", [{}])[0].get("text")
        s = legacy_session(url)
        lres = legacy(url, s, 3, "tasks/result", {"taskId": lid})["result"]
        ltext = lres["content"][0]["text"]
        ok = failures == 0 and mtext == want and ltext == want and m["status"] == l["status"] == "completed"
        print(f"{'OK' if ok else 'FAILED'}: {time.time() - t0:.0f} s, {polls} polls from new connections, "
              f"{failures} failed; results {mtext!r} / {ltext!r}")
        return 0 if ok else 1
    finally:
        srv.terminate()
        srv.wait(timeout=30)


if __name__ == "__main__":
    sys.exit(main())
