#!/usr/bin/env python3
"""What confining the workers costs a call (issue 40: at most 50 µs more at
p50 than an unconfined worker; RULES N7). Rounds interleaved (unconfined,
confined, ...), each a fresh stdio server with 2 workers and n sequential
`add` calls after warm-up ones, as W2 of run.py. Prints JSON.

    python3 bench/workers/confine.py [--rounds 5] [--calls 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run  # noqa: E402  (the W2 client of bench/workers/run.py)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000)
    a = ap.parse_args()
    p50s: dict[str, list[float]] = {"unconfined": [], "confined": []}
    for _ in range(a.rounds):
        for kind in p50s:
            os.environ["MCPLITE_BENCH_CONFINE"] = "1" if kind == "confined" else "0"
            s = run.Stdio(2)
            try:
                xs = run.sequential(s, a.calls, a.calls // 10)
            finally:
                s.close()
            p50s[kind].append(statistics.median(xs))
    out = {k: {"p50_us": statistics.median(v), "round_p50s_us": v} for k, v in p50s.items()}
    out["added_p50_us"] = out["confined"]["p50_us"] - out["unconfined"]["p50_us"]
    out["load"] = run.load()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
