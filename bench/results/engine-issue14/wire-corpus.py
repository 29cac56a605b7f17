# Lines for the wire check in README.md (beside this file): every request
# shape of both eras, odd ids, envelope errors, parse errors, notifications,
# client responses and 500 random tool calls. Deterministic (seeded).
#   python3 wire-corpus.py > in.jsonl
import json, random, sys
random.seed(7)
M = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
def init(v, i=0): return '{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' % (i, v)
def call(i, name, args=None, modern=False, extra=""):
    p = {"name": name}
    if args is not None: p["arguments"] = args
    s = json.dumps(p, separators=(",", ":"))
    if modern: s = s[:-1] + "," + M + "}"
    return '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":%s%s}' % (json.dumps(i), s, extra)
lines = []
ids = ['1', '"a\\u0041"', '12345678901234567890', '-0', '""', '"x"']
tools = [("echo", {"text": "h\u00e9\"\n<\/"}), ("add", {"x": 1.5, "y": 2.25}), ("blocks", {}), ("arr", None), ("frame", None), ("fail", None), ("count", {"a": 1, "b": [1, {"c": None}]}), ("nope", None)]
odd = ['', '   ', '{', '[]', 'null', '1', '"s"', '{"jsonrpc":"2.0","id":1,"result":{}}', '{"method":"ping"}', '{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
       '{"jsonrpc":"2.0","id":73}', '{"jsonrpc":"1.0","id":"x","method":"ping"}', '{"jsonrpc":"2.0","id":2,"method":3}', '{"jsonrpc":"2.0","id":1,"method":"ping",}',
       '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}', '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\\udc00"}}',
       '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"big":1e400,"n":123456789012345678901234567890}}',
       '{"jsonrpc":"2.0","id":1,"method":"resources/list"}', '{"jsonrpc":"2.0","method":"notifications/initialized"}',
       '{"jsonrpc":"2.0","id":4,"method":"notifications/initialized"}', '{"jsonrpc":"2.0","id":5,"method":"server/discover"}',
       '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"cursor":"x"}}', '{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":1}}',
       '{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[]}', '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":[]}}',
       '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\u0000b"}}}',
       '{"jsonrpc":"2.0","id":11,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}',
       '{"jsonrpc":"2.0","id":12,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}}}',
       '{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
       '{"jsonrpc":"2.0","id":14,"method":"ping","params":{' + M + '}}', '{"jsonrpc":"2.0","id":15,"method":"server/discover","params":{' + M + ',"x":1}}',
       '{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{' + M + '}}', '{"jsonrpc":"2.0","id":17,"method":"initialize","params":{' + M + '}}',
       '\ufeff{"jsonrpc":"2.0","id":18,"method":"ping"}',
       '{"jsonrpc":"2.0","id":19,"method":"ping","params":%s1%s}' % ("[" * 300, "]" * 300)]
for v in [None, "2024-11-05", "2025-06-18", "2025-11-25", "1999-01-01", "2026-07-28"]:
    if v: lines.append(init(v))
    lines.append('{"jsonrpc":"2.0","method":"notifications/initialized"}')
    lines.append('{"jsonrpc":"2.0","id":"l","method":"tools/list"}')
    for n, a in tools:
        for i in ids[:3]:
            lines.append(call(json.loads(i), n, a))
            lines.append(call(json.loads(i), n, a, modern=True))
    lines.extend(odd)
for k in range(500):
    n, a = random.choice(tools)
    lines.append(call(k, n, a, modern=random.random() < 0.5))
sys.stdout.write("\n".join(lines) + "\n")
