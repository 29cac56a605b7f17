"""A rolling restart behind real nginx, with the shipped inst/deploy/nginx.conf.

Three mcplite replicas (r8081, r8082, r8083, with a bearer token) run behind nginx,
started by the ExecStart of the shipped mcplite-nginx.service (its prefix and
configuration paths moved to a new directory; run from another directory)
with only the ports changed and the commented TLS server block switched on
(a certificate made here). Clients of
the official Python SDK (mcp 2.3.0, modern 2026-07-28 mode, token in
`Authorization`) call a tool without pause, through HTTP and through HTTPS,
while each replica in turn gets SIGTERM (it must finish its calls and exit 0),
is started again, and answers `/health` before the next one is restarted.
Every call must succeed (no failed modern request), every restarted replica
must answer calls through nginx, and every call answered must have run
exactly once.

Usage: python rolling_restart.py   (R_LIBS or MCPLITE_LIB names the library
holding mcplite). Prints "ok"/"FAIL" lines and "N passed, N failed" last.
"""

from __future__ import annotations

import asyncio
import collections
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MODERN = "2026-07-28"
TOKEN = "rolling-restart-token-0123456789abcdef"
CLIENTS = 4  # concurrent clients over HTTP, plus one over HTTPS

results = {"pass": 0, "fail": 0}


def report(ok: bool, what: str, detail: str = "") -> None:
    results["pass" if ok else "fail"] += 1
    print(("ok   - " if ok else "FAIL - ") + what, flush=True)
    if not ok and detail:
        for line in detail.strip().splitlines()[-25:]:
            print("       " + line, flush=True)


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def free_ports(n: int) -> list[int]:
    # Below Linux's ephemeral range, where outgoing connections get theirs.
    ports: list[int] = []
    while len(ports) < n:
        p = random.randint(20000, 32000)
        if p in ports or listening(p):
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
        ports.append(p)
    return ports


def wait_for(cond, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise RuntimeError(f"timed out waiting for {what}")


def r_env() -> dict[str, str]:
    env = dict(os.environ)
    lib = os.environ.get("MCPLITE_LIB") or os.environ.get("R_LIBS")
    if lib:
        env["R_LIBS"] = lib
    for k in ("MCPLITE_TRANSPORT", "MCPLITE_PORT", "MCPLITE_REPLICA", "MCPLITE_TOKEN"):
        env.pop(k, None)
    return env


def installed_file(*parts: str) -> Path:
    args = ", ".join(json.dumps(p) for p in parts)
    out = subprocess.run(
        ["Rscript", "--vanilla", "-e", f'cat(system.file({args}, package = "mcplite"))'],
        env=r_env(), capture_output=True, text=True, check=True,
    ).stdout
    if not out:
        raise RuntimeError(f"mcplite does not install {'/'.join(parts)}")
    return Path(out)


SERVER = r"""
library(mcplite)
# One log per process: appends from several processes to one file interleave.
log <- file.path(Sys.getenv("CALL_LOG"), paste0("calls-", Sys.getpid(), ".txt"))
work <- tool(function(id, ms) {
  Sys.sleep(ms / 1000)
  cat(id, "\n", file = log, append = TRUE, sep = "")
  paste(Sys.getenv("MCPLITE_REPLICA"), Sys.getpid())
}, "Work a while.", name = "work", arguments = list(id = type_string(), ms = type_integer()))
mcp_server(work)
"""


class Replica:
    def __init__(self, name: str, port: int, work: Path):
        self.name, self.port, self.work = name, port, work
        self.proc: subprocess.Popen | None = None
        self.stderr = work / f"{name}.stderr"

    def start(self) -> int:
        env = r_env()
        env.update(
            MCPLITE_TRANSPORT="http", MCPLITE_PORT=str(self.port), MCPLITE_REPLICA=self.name,
            MCPLITE_TOKEN=TOKEN, CALL_LOG=str(self.work / "calls"),
        )
        with open(self.stderr, "ab") as err:
            self.proc = subprocess.Popen(
                ["Rscript", "--vanilla", str(self.work / "server.R")],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
            )
        wait_for(self.healthy, 60, f"replica {self.name} to answer /health")
        return self.proc.pid

    def healthy(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"replica {self.name} exited: {self.stderr.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as r:
                body = json.load(r)
        except OSError:
            return False
        # RULES H1.3: /health names the replica.
        if body.get("replica") != self.name:
            raise RuntimeError(f"replica {self.name}'s /health says {body}")
        return body["status"] == "ok"

    def stop(self) -> int:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)


def nginx_conf(src: str, front: int, tls: int, ports: list[int], cert: Path, key: Path) -> str:
    conf = src.replace("listen 127.0.0.1:8080;", f"listen 127.0.0.1:{front};")
    for i, p in enumerate(ports, start=1):
        conf = re.sub(rf"127\.0\.0\.1:808{i}(?![0-9])", f"127.0.0.1:{p}", conf)
    # Switch the commented TLS server block on, as a reader would.
    lines = conf.split("\n")
    start = next(i for i, l in enumerate(lines) if l.strip() == "# server {")
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == "# }")
    for i in range(start, end + 1):
        lines[i] = re.sub(r"^(\s*)# ?", r"\1", lines[i])
    conf = "\n".join(lines)
    conf = conf.replace("listen 443 ssl;", f"listen 127.0.0.1:{tls} ssl;")
    conf = conf.replace("/etc/ssl/certs/tools.example.com.pem", str(cert))
    conf = conf.replace("/etc/ssl/private/tools.example.com.key", str(key))
    return conf


def transport(url: str, verify) -> object:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, verify=verify, timeout=60)
    return streamable_http_client(url, http_client=http)


async def load(url: str, verify, stop: asyncio.Event, tag: str, stats: dict) -> None:
    n = 0
    while not stop.is_set():
        try:
            async with Client(transport(url, verify), mode=MODERN) as client:
                while not stop.is_set():
                    n += 1
                    call_id = f"{tag}-{n}"
                    try:
                        res = await client.call_tool("work", {"id": call_id, "ms": 20})
                        text = res.content[0].text if res.content else ""
                        if res.is_error or not re.match(r"^r808[123] \d+$", text):
                            stats["failures"].append(f"{call_id}: {text}")
                        else:
                            stats["answered"].append(call_id)
                            stats["by"].setdefault(text, 0)
                            stats["by"][text] += 1
                    except Exception as e:  # noqa: BLE001 - every failure counts
                        stats["failures"].append(f"{call_id}: {type(e).__name__}: {e}")
                    if n % 10 == 0:
                        try:
                            listing = await client.list_tools()
                            if [t.name for t in listing.tools] != ["work"]:
                                stats["failures"].append(f"{tag} tools/list: {listing}")
                        except Exception as e:  # noqa: BLE001
                            stats["failures"].append(f"{tag} tools/list: {type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - a client that cannot connect is a failure too
            stats["failures"].append(f"{tag} connect: {type(e).__name__}: {e}")
            await asyncio.sleep(0.1)


async def main() -> None:
    if not shutil.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
        report(False, "nginx is installed (scripts/setup.sh installs it)")
        return
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    work = Path(tempfile.mkdtemp(prefix="rolling-"))
    (work / "server.R").write_text(SERVER)
    (work / "calls").mkdir()
    front, tls, *ports = free_ports(5)
    # Named as nginx.conf routes them: mcplite@8081 is replica r8081 (its port).
    replicas = [Replica(f"r808{i}", p, work) for i, p in enumerate(ports, start=1)]
    nginx_proc = None
    try:
        first_pids = {r.name: r.start() for r in replicas}

        # nginx, started as documented: from another directory, its paths
        # under the prefix.
        cert, key = work / "cert.pem", work / "key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True, capture_output=True,
        )
        prefix = work / "run-nginx"
        prefix.mkdir()
        conf = work / "etc" / "nginx.conf"
        conf.parent.mkdir()
        src = installed_file("deploy", "nginx.conf").read_text()
        conf.write_text(nginx_conf(src, front, tls, ports, cert, key))
        unit = installed_file("deploy", "mcplite-nginx.service").read_text()
        exec_start = shlex.split(re.search(r"^ExecStart=(.*)$", unit, re.M).group(1))
        exec_start = [a.replace("/run/mcplite-nginx", str(prefix)).replace("/etc/mcplite/nginx.conf", str(conf))
                      for a in exec_start]
        if exec_start[0] == "/usr/sbin/nginx":
            exec_start[0] = nginx
        nginx_proc = subprocess.Popen(
            exec_start, cwd="/", stdout=subprocess.DEVNULL, stderr=open(work / "nginx.stderr", "wb"),
        )
        try:
            wait_for(lambda: nginx_proc.poll() is None and listening(front) and listening(tls)
                     and (prefix / "nginx.pid").exists(), 15, "nginx")
            report(True, "nginx starts by mcplite-nginx.service's ExecStart with the shipped configuration (TLS block on), from /, its pid file under the prefix")
        except RuntimeError:
            report(False, "nginx starts with the shipped configuration", (work / "nginx.stderr").read_text())
            return

        ctx = ssl.create_default_context(cafile=str(cert))
        stats = {"answered": [], "failures": [], "by": {}}
        stop = asyncio.Event()
        tasks = [asyncio.create_task(load(f"http://127.0.0.1:{front}/mcp", True, stop, f"c{i}", stats))
                 for i in range(CLIENTS)]
        tasks.append(asyncio.create_task(load(f"https://127.0.0.1:{tls}/mcp", ctx, stop, "tls", stats)))

        async def answered_by(pid: int, name: str, timeout: float = 30) -> bool:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if stats["by"].get(f"{name} {pid}", 0) > 0:
                    return True
                await asyncio.sleep(0.05)
            return False

        for r in replicas:
            ok = await answered_by(first_pids[r.name], r.name)
            report(ok, f"replica {r.name} answers modern calls through nginx before the restart")
        over_https = lambda: sum(1 for a in stats["answered"] if a.startswith("tls-"))
        deadline = time.monotonic() + 30
        while over_https() == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        report(over_https() > 0, "calls over HTTPS (the TLS server block) are answered")

        # The rolling restart: one replica after another, each back (answering
        # /health) before the next gets SIGTERM.
        new_pids = {}
        for r in replicas:
            before = len(stats["answered"])
            status = await asyncio.to_thread(r.stop)
            said = "mcplite: HTTP server stopped (SIGTERM)" in r.stderr.read_text()
            report(status == 0 and said, f"replica {r.name} drains, says SIGTERM stopped it and exits with "
                                         f"status 0 (status {status})", r.stderr.read_text())
            new_pids[r.name] = await asyncio.to_thread(r.start)
            report(await answered_by(new_pids[r.name], r.name),
                   f"replica {r.name}, restarted, answers modern calls through nginx again")
            report(len(stats["answered"]) > before, f"calls kept being answered while {r.name} restarted")

        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), 60)

        failures = stats["failures"]
        report(not failures, f"no failed modern request during the rolling restart "
                             f"({len(stats['answered'])} answered, {over_https()} of them over HTTPS, {len(failures)} failed)",
               "\n".join(failures[:20]))
        ran = [l.strip() for f in (work / "calls").iterdir() for l in f.read_text().splitlines() if l.strip()]
        dup = sorted(x for x, k in collections.Counter(ran).items() if k > 1)
        report(not dup, "no call ran twice", " ".join(dup[:20]))
        missing = sorted(set(stats["answered"]) - set(ran))
        report(not missing, "every answered call ran", " ".join(missing[:20]))
    finally:
        for r in replicas:
            if r.proc is not None and r.proc.poll() is None:
                r.proc.kill()
        if nginx_proc is not None and nginx_proc.poll() is None:
            nginx_proc.send_signal(signal.SIGQUIT)
            try:
                nginx_proc.wait(10)
            except subprocess.TimeoutExpired:
                nginx_proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # noqa: BLE001
        report(False, f"the rolling-restart test ran to the end: {type(e).__name__}: {e}")
    print(f"{results['pass']} passed, {results['fail']} failed")
    sys.exit(1 if results["fail"] else 0)
