"""Run the steps of inst/deploy/Dockerfile without Docker (no daemon here).

    python3 run_dockerfile.py DOCKERFILE CONTEXT IMAGE_ROOT

CONTEXT holds what the Dockerfile's header asks for (the source tarball,
install-mcplite.sh, server.R); IMAGE_ROOT is an empty directory standing for
the image's file system: every absolute path under /tmp, /opt, /srv or /var in
the Dockerfile is taken under it. The steps, in order:

* `RUN apt-get install ... PKGS`: the packages must be installed here (the
  image gets what these tests run with); `useradd` is stood in for by the
  user `nobody`, its `--create-home` by a home directory `nobody` owns;
* `COPY` from the context (or the build stage: the same root) into the root;
* the `RUN` that calls install-mcplite.sh runs as written, in a new network
  namespace (no network at all) with an empty CARGO_HOME;
* then `CMD` with every `ENV` (the port changed to a free one, and the token
  `docker run -e MCPLITE_TOKEN=...` would give) as `nobody`, as `USER` says;
  `HEALTHCHECK`'s command must pass; a tool call through the token works;
  SIGTERM (`docker stop`) ends it with status 0.

Prints "ok"/"FAIL" lines, the installed size and the start-up time, and
"N passed, N failed" last.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

results = {"pass": 0, "fail": 0}


def report(ok: bool, what: str, detail: str = "") -> None:
    results["pass" if ok else "fail"] += 1
    print(("ok   - " if ok else "FAIL - ") + what, flush=True)
    if not ok and detail:
        for line in detail.strip().splitlines()[-30:]:
            print("       " + line, flush=True)


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in path.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    return out


def main(dockerfile: Path, context: Path, image: Path) -> None:
    rebase = lambda s: re.sub(r"(?<![\w.])/(tmp|opt|srv|var)/", lambda m: f"{image}/{m.group(1)}/", s)
    home: Path | None = None
    env: dict[str, str] = {}
    cmd: list[str] | None = None
    health: list[str] | None = None
    user = None
    known = {"FROM", "RUN", "COPY", "ENV", "USER", "EXPOSE", "HEALTHCHECK", "CMD"}
    for word, rest in instructions(dockerfile):
        if word not in known:
            report(False, f"the test knows the Dockerfile instruction {word}")
        elif word == "FROM":
            pass
        elif word == "RUN" and "apt-get install" in rest:
            pkgs = [w for w in rest.split("apt-get install", 1)[1].split("&&")[0].split() if not w.startswith("-")]
            missing = [p for p in pkgs if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
            report(not missing, f"the image's Debian packages are those installed here: {' '.join(pkgs)}",
                   "missing: " + " ".join(missing))
            if "useradd" in rest:
                useradd = rest.split("useradd", 1)[1].split("&&")[0].split()
                if "--create-home" in useradd and "--home-dir" in useradd:
                    home = Path(rebase(useradd[useradd.index("--home-dir") + 1]))
        elif word == "RUN" and "install-mcplite.sh" in rest:
            command = rebase(rest)
            cargo_home = image / ".cargo-home"
            cargo_home.mkdir()
            run_env = {k: v for k, v in os.environ.items() if k != "CARGO_TARGET_DIR"}
            run_env["CARGO_HOME"] = str(cargo_home)
            log = image / "install.log"
            with open(log, "wb") as out:
                status = subprocess.run(["unshare", "-n", "sh", "-c", command], env=run_env,
                                        stdout=out, stderr=subprocess.STDOUT).returncode
            text = log.read_text(errors="replace")
            report(status == 0, f"RUN {rest}: installs offline (no network, empty CARGO_HOME)", text)
            report(status == 0 and not re.search(r"Downloading|Updating crates\.io", text),
                   "nothing was downloaded during the install", text)
        elif word == "RUN":
            report("useradd" in rest, f"the test knows the step RUN {rest[:60]}")
        elif word == "COPY":
            parts = shlex.split(rest)
            if parts[0].startswith("--from="):
                src = Path(rebase(parts[1]))
                report(src.exists(), f"COPY {rest}: the build stage made {parts[1]}")
                continue
            *srcs, dest = parts
            dest_path = Path(rebase(dest))
            for s in srcs:
                hits = sorted(context.glob(s))
                report(bool(hits), f"COPY {s}: the build context has it")
                for h in hits:
                    target = dest_path / h.name if dest.endswith("/") else dest_path
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(h, target)
        elif word == "ENV":
            for item in shlex.split(rest):
                k, _, v = item.partition("=")
                env[k] = rebase(v)
        elif word == "USER":
            user = rest
        elif word == "HEALTHCHECK":
            health = json.loads(rest.split("CMD", 1)[1])
        elif word == "CMD":
            cmd = [rebase(a) for a in json.loads(rest)]

    lib = Path(env.get("R_LIBS", ""))
    if not (lib / "mcplite" / "DESCRIPTION").exists() or cmd is None:
        report(False, "the image has mcplite installed and a CMD")
        return
    size = subprocess.run(["du", "-sk", str(lib / "mcplite")], capture_output=True, text=True).stdout.split()[0]
    print(f"measure - installed package size: {int(size) / 1024:.1f} MB ({lib / 'mcplite'})", flush=True)

    # The container runs: CMD with ENV, as an unprivileged user.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = "container-token-0123456789abcdef"
    run_env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/nonexistent", **env,
               "MCPLITE_PORT": str(port), "MCPLITE_TOKEN": token}
    # The user's home, as useradd --create-home makes it, is the ENV's HOME.
    report(home is not None and run_env["HOME"] == str(home),
           f"the image's user has a home of its own and ENV HOME names it ({run_env['HOME']})")
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        shutil.chown(home, "nobody")
    for d in image.glob("*"):
        subprocess.run(["chmod", "-R", "a+rX", str(d)])
    cache = Path(env.get("R_USER_CACHE_DIR", str(image / "tmp" / "cache")))
    cache.mkdir(parents=True, exist_ok=True)
    shutil.chown(cache, "nobody")
    as_user = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if user else []
    err = image / "server.stderr"
    started = time.monotonic()
    proc = subprocess.Popen(as_user + cmd, env=run_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=open(err, "wb"))
    try:
        up = None
        while time.monotonic() - started < 60 and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        up = time.monotonic() - started
                        break
            except OSError:
                time.sleep(0.02)
        report(up is not None, f"CMD serves over HTTP with ENV, as {user or 'root'} (nobody here)", err.read_text())
        report("warning" not in err.read_text().lower(), "the server's start-up says no warning", err.read_text())
        if up is None:
            return
        print(f"measure - start-up time, CMD to a /health answer: {up:.2f} s", flush=True)
        if health is not None:
            h = subprocess.run(as_user + health, env=run_env, capture_output=True, text=True, timeout=60)
            report(h.returncode == 0, "HEALTHCHECK's command passes", h.stdout + h.stderr)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "add_numbers", "arguments": {"x": 2, "y": 40},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}}).encode()
        req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add_numbers",
            "Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                answer = json.load(r)
            report(answer["result"]["content"][0]["text"] == "42",
                   "a tool call with the token (docker run -e MCPLITE_TOKEN) is answered", json.dumps(answer))
        except OSError as e:
            report(False, "a tool call with the token is answered", str(e))
        proc.send_signal(signal.SIGTERM)
        try:
            status = proc.wait(12)
        except subprocess.TimeoutExpired:
            status = None
        report(status == 0, f"SIGTERM (docker stop) ends the server with status 0 within docker's 10 s grace "
                            f"(status {status})", err.read_text())
    finally:
        if proc.poll() is None:
            proc.kill()


if __name__ == "__main__":
    try:
        main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
    except Exception as e:  # noqa: BLE001
        report(False, f"the Dockerfile's steps ran to the end: {type(e).__name__}: {e}")
    print(f"{results['pass']} passed, {results['fail']} failed")
    sys.exit(1 if results["fail"] else 0)
