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

    def run(self, code: str) -> None:
        """Type `code` at the prompt and wait until R has run it."""
        self.n += 1
        marker = self.files / f"done-{self.n}"
        self.tmux("send-keys", "-t", "r", "-l", f'{code}; cat("", file = "{marker}")')
        self.tmux("send-keys", "-t", "r", "Enter")
        wait_for(marker.exists, f"R to run {code!r}\n{self.screen()}")

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "r")

    def close(self) -> None:
        self.tmux("kill-server")


@pytest.fixture
def live(tmp_path):
    session_dir = tmp_path / "sessions"
    session_dir.mkdir(mode=0o700)
    os.chmod(session_dir, 0o700)
    files = tmp_path / "files"
    files.mkdir()
    r = InteractiveR(session_dir, files, tmp_path / "tmux")
    try:
        r.run(f'cat(Sys.getpid(), file = "{files}/pid")')
        pid = (files / "pid").read_text().strip()
        yield r, session_dir, pid
    finally:
        r.close()


def server_params(tmp_path: Path, session_dir: Path) -> StdioServerParameters:
    script = tmp_path / "server.R"
    script.write_text(
        "library(mcplite)\n"
        "nrow_of <- tool(function(name) nrow(get(name, envir = globalenv())), name = 'nrow_of',\n"
        "  description = 'Rows of a data frame.', arguments = list(name = type_string()))\n"
        "mcp_server(list(nrow_of), session_tools = TRUE)\n"
    )
    env = server_env()
    env["MCPLITE_SESSION_DIR"] = str(session_dir)
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
    # Closed while selected: the call runs in the server and the answer says so.
    assert text(out["after_close"])[0] == "32"
    assert f"The selected R session {pid} is gone" in text(out["after_close"])[1]
    assert "No R session is selected" in text(out["unselected"])[1]
    screen = r.screen()
    assert "[mcplite] nrow_of (" in screen
    assert "[mcplite] run_r_code refused (" in screen
