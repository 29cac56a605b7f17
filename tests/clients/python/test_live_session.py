"""Live R sessions (RULES R10) driven by the official Python SDK: a real
interactive R in a tmux pseudo-terminal opens itself with mcp_session(), a
server started with session_tools = TRUE is launched by the SDK's stdio
client, and the objects made at the R prompt are what the tools see. Also a
session closed while selected (the tools run in the server and say so)."""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from mcplite_driver import rscript, server_env

TIMEOUT = 60

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None or os.name != "posix",
    reason="needs tmux (scripts/setup.sh installs it) and a Unix",
)


def wait_for(cond, what: str, timeout: float = 30) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class InteractiveR:
    """An interactive R in a detached tmux session on a private tmux server
    (its socket in the test's temporary directory)."""

    def __init__(self, session_dir: Path, files: Path, socket: Path):
        self.socket = str(socket)
        self.files = files
        r = Path(rscript()).with_name("R")
        env = {"MCPLITE_SESSION_DIR": str(session_dir), "LANG": "C.UTF-8"}
        env.update(server_env())
        cmd = "env " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        cmd += f" {shlex.quote(str(r))} --quiet --no-save --no-restore"
        self.tmux("new-session", "-d", "-s", "r", "-x", "200", "-y", "50", cmd)
        self.n = 0

    def tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-S", self.socket, *args], capture_output=True, text=True)
        return out.stdout

    def type(self, code: str) -> None:
        """Type `code` at the prompt (and Enter)."""
        self.tmux("send-keys", "-t", "r", "-l", code)
        self.tmux("send-keys", "-t", "r", "Enter")

    def run(self, code: str) -> None:
        """Type `code` at the prompt and wait until R has run it."""
        self.n += 1
        marker = self.files / f"done-{self.n}"
        self.type(f'{code}; cat("", file = "{marker}")')
        wait_for(marker.exists, f"R to run {code!r}\n{self.screen()}")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "r")

    def close(self) -> None:
        self.tmux("kill-server")


def start_r(tmp_path: Path, session_dir: Path, name: str) -> tuple[InteractiveR, str]:
    """An interactive R (not yet opened with mcp_session()) and its pid."""
    files = tmp_path / f"files-{name}"
    files.mkdir()
    r = InteractiveR(session_dir, files, tmp_path / f"tmux-{name}")
    r.run(f'cat(Sys.getpid(), file = "{files}/pid")')
    return r, (files / "pid").read_text().strip()


@pytest.fixture
def session_dir(tmp_path):
    d = tmp_path / "sessions"
    d.mkdir(mode=0o700)
    os.chmod(d, 0o700)
    return d


@pytest.fixture
def live(tmp_path, session_dir):
    r = None
    try:
        r, pid = start_r(tmp_path, session_dir, "a")
        yield r, session_dir, pid
    finally:
        if r is not None:
            r.close()


def server_params(tmp_path: Path, session_dir: Path) -> StdioServerParameters:
    script = tmp_path / "server.R"
    script.write_text(
        "library(mcplite)\n"
        "nrow_of <- tool(function(name) nrow(get(name, envir = globalenv())), name = 'nrow_of',\n"
        "  description = 'Rows of a data frame.', arguments = list(name = type_string()))\n"
        "who <- tool(function() get('who', envir = globalenv()), name = 'who', description = 'Who.')\n"
        "mcp_server(list(nrow_of, who), session_tools = TRUE)\n"
    )
    env = server_env()
    env["MCPLITE_SESSION_DIR"] = str(session_dir)
    # Heartbeats every half second while a call waits for a busy session.
    env["MCPLITE_PROGRESS_INTERVAL"] = "0.5"
    return StdioServerParameters(command=rscript(), args=["--vanilla", str(script)], env=env)


def text(result) -> list[str]:
    return [block.text for block in result.content]


def test_prompt_objects_visible_to_python_sdk_client(live, tmp_path):
    r, session_dir, pid = live
    r.run('h <- mcplite::mcp_session(label = "from-python")')
    sock = session_dir / f"{pid}.sock"
    wait_for(sock.exists, "the session's socket")
    assert oct(sock.stat().st_mode & 0o777) == "0o600"
    assert oct(session_dir.stat().st_mode & 0o777) == "0o700"
    r.run('sales <- data.frame(region = c("north", "south", "east"), total = c(10.5, 20, 7))')

    async def scenario() -> dict:
        out: dict = {}
        async with Client(server_params(tmp_path, session_dir), client_info=None) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            out["names"] = names
            out["before"] = await client.call_tool("nrow_of", {"name": "mtcars"})
            out["listed"] = await client.call_tool("list_r_sessions", {})
            out["selected"] = await client.call_tool("select_r_session", {"id": pid})
            out["objects"] = await client.call_tool("list_r_objects", {})
            out["nrow"] = await client.call_tool("nrow_of", {"name": "sales"})
            out["described"] = await client.call_tool("describe_r_object", {"name": "sales"})
            out["code"] = await client.call_tool("run_r_code", {"code": f"file.create('{r.files}/code-ran')"})
            # The user closes the session at the prompt while it is selected.
            await asyncio.to_thread(r.run, "close(h)")
            out["after_close"] = await client.call_tool("nrow_of", {"name": "mtcars"})
            out["unselected"] = await client.call_tool("nrow_of", {"name": "mtcars"})
        return out

    out = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
    assert {"nrow_of", "list_r_sessions", "select_r_session", "list_r_objects",
            "describe_r_object", "read_r_help", "run_r_code"} <= out["names"]
    # Before a session is selected the tool runs in the server, and says so.
    assert text(out["before"])[0] == "32"
    assert "No R session is selected" in text(out["before"])[1]
    sessions = out["listed"].structured_content["sessions"]
    assert [s["id"] for s in sessions] == [pid]
    assert sessions[0]["label"] == "from-python"
    assert sessions[0]["front_end"] == "terminal"
    assert out["selected"].is_error is False
    assert f"Selected R session {pid}" in text(out["selected"])[0]
    objects = {o["name"]: o for o in out["objects"].structured_content["objects"]}
    assert objects["sales"]["class"] == "data.frame"
    assert objects["sales"]["dimensions"] == "3 x 2"
    assert text(out["nrow"]) == ["3"]
    described = text(out["described"])[0]
    assert "| south | 20.0 |" in described
    # run_r_code is refused: the session did not allow it.
    assert out["code"].is_error is True
    assert "does not allow running code" in text(out["code"])[0]
    assert not (r.files / "code-ran").exists()
    # Closed while selected: the call does not run anywhere, and says so as
    # an error (RULES R10.6); then, unselected, tools run in the server.
    assert out["after_close"].is_error is True
    assert f"The selected R session {pid} is gone" in text(out["after_close"])[0]
    assert "did not run, there or anywhere else" in text(out["after_close"])[0]
    assert text(out["unselected"])[0] == "32"
    assert "No R session is selected" in text(out["unselected"])[1]
    screen = r.screen()
    # The console shows each call with its arguments (RULES R10.10).
    assert '[mcplite] nrow_of(name = "sales") (' in screen
    # (a refused run_r_code is not read: its name only)
    assert "[mcplite] run_r_code refused (" in screen


def test_two_sessions_and_a_busy_one(tmp_path, session_dir):
    """Two R sessions at once, each selected in turn; a call to a session
    whose user's code runs waits (with progress heartbeats) and runs once R
    is back at the prompt, after that code."""
    a = b = None
    try:
        a, pid_a = start_r(tmp_path, session_dir, "a")
        b, pid_b = start_r(tmp_path, session_dir, "b")
        for r, who in ((a, "a"), (b, "b")):
            r.run(f'h <- mcplite::mcp_session(); who <- "{who}"')
        for pid in (pid_a, pid_b):
            wait_for((session_dir / f"{pid}.sock").exists, "the sessions' sockets")
        stop = tmp_path / "stop"
        beats: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress, total, message):
            beats.append((progress, total, message))
            # The user's code ends once the client has heard a heartbeat.
            stop.touch()

        async def scenario() -> dict:
            out: dict = {}
            async with Client(server_params(tmp_path, session_dir), client_info=None) as client:
                listed = await client.call_tool("list_r_sessions", {})
                out["ids"] = sorted(s["id"] for s in listed.structured_content["sessions"])
                await client.call_tool("select_r_session", {"id": pid_a})
                out["a"] = await client.call_tool("who", {})
                await client.call_tool("select_r_session", {"id": pid_b})
                out["b"] = await client.call_tool("who", {})
                await client.call_tool("select_r_session", {"id": pid_a})
                # The user starts a computation in session a.
                a.type(f'{{ while (!file.exists("{stop}")) Sys.sleep(0.05); who <- "a, after the loop" }}')

                async def busy() -> bool:
                    listed = await client.call_tool("list_r_sessions", {})
                    return any(s["id"] == pid_a and s["busy"] for s in listed.structured_content["sessions"])

                for _ in range(200):
                    if await busy():
                        break
                    await asyncio.sleep(0.05)
                out["waited"] = await client.call_tool("who", {}, progress_callback=on_progress)
            return out

        out = asyncio.run(asyncio.wait_for(scenario(), TIMEOUT))
        assert out["ids"] == sorted([pid_a, pid_b])
        assert text(out["a"]) == ["a"]
        assert text(out["b"]) == ["b"]
        # It ran after the user's loop (which set `who`), not in its middle.
        assert text(out["waited"]) == ["a, after the loop"]
        assert len(beats) >= 1
        assert all(later[0] > earlier[0] for earlier, later in zip(beats, beats[1:]))
        # RULES N3.2: they say what the call waits for.
        assert beats[0][2].startswith("waiting for the selected R session to be idle at its prompt for "), beats
    finally:
        for r in (a, b):
            if r is not None:
                r.close()
