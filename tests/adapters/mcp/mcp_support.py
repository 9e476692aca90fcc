"""Starting our MCP server for the SDK's client: on stdio, or on streamable HTTP."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from mcp import StdioServerParameters

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
SERVED = "served_toolbox:toolbox"


def environment(folder: Path, **more: str) -> dict[str, str]:
    """The server process's environment: this tree first on the path, ``folder`` for its
    files."""
    paths = [str(ROOT / part) for part in ("core", "adapters", "integrations")]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    env["MCP_TEST_DIR"] = str(folder)
    env.update(more)
    return env


def stdio_server(folder: Path, **env: str) -> StdioServerParameters:
    """``toolbridge mcp serve served_toolbox:toolbox`` on stdio, as the SDK's client starts it."""
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "toolbridge", "mcp", "serve", SERVED],
                                 env=environment(folder, **env), cwd=str(HERE))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def http_server(folder: Path, **env: str) -> Iterator[str]:
    """``toolbridge mcp serve --http`` in a child process; yields its endpoint URL."""
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "toolbridge", "mcp", "serve", "--http", f"127.0.0.1:{port}",
         SERVED], env=environment(folder, **env), cwd=str(HERE))
    try:
        deadline = time.monotonic() + 60
        while True:
            assert child.poll() is None, f"the server exited ({child.returncode})"
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            assert time.monotonic() < deadline, "the server never listened"
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        child.terminate()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def until(condition: object, what: str, seconds: float = 30) -> None:
    """Poll ``condition()`` until true (no timing is asserted: the limit only ends a hang)."""
    import anyio

    with anyio.fail_after(seconds):
        while not condition():  # type: ignore[operator]
            await anyio.sleep(0.02)
