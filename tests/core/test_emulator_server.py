"""The emulator server's uvicorn: the declared version bound, and the surface it builds on.

`EmulatorServer` stops promptly by overriding `uvicorn.Server.main_loop` and `shutdown`, which
read uvicorn's server state. Those are not uvicorn's documented API, so the `emulators` extra
bounds uvicorn to the versions whose surface is checked here (0.29, the lower bound, and the
installed one); raising the bound means running this file on the new version.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import socket
import threading
from collections.abc import AsyncIterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from packaging.requirements import Requirement
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

from toolbridge.testing.emulators import EmulatorServer
from toolbridge.testing.emulators._server import _prompt_server_class

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def declared_uvicorn() -> Requirement:
    """The uvicorn of the ``emulators = [...]`` line (tomllib is 3.11+; 3.10 is supported)."""
    line = next(x for x in PYPROJECT.read_text().splitlines() if x.startswith("emulators = "))
    extra = ast.literal_eval(line.partition("=")[2].strip())
    found = [Requirement(r) for r in extra if Requirement(r).name == "uvicorn"]
    assert len(found) == 1, extra
    return found[0]


def test_uvicorn_is_bounded_above_and_the_installed_one_is_inside() -> None:
    requirement = declared_uvicorn()
    assert any(s.operator == "<" for s in requirement.specifier), requirement
    assert requirement.specifier.contains(version("uvicorn")), (requirement, version("uvicorn"))


def test_the_overrides_keep_uvicorns_signatures() -> None:
    prompt = _prompt_server_class()
    overridden = {name for name in vars(prompt) if not name.startswith("__")}
    assert overridden == {"exit", "main_loop", "shutdown"}
    for name in ("main_loop", "shutdown", "on_tick"):
        assert inspect.iscoroutinefunction(getattr(uvicorn.Server, name)), name
    for name in ("main_loop", "shutdown"):
        ours = inspect.signature(getattr(prompt, name)).parameters
        theirs = inspect.signature(getattr(uvicorn.Server, name)).parameters
        assert list(ours) == list(theirs), name


async def endless(request: Request) -> StreamingResponse:
    async def frames() -> AsyncIterator[bytes]:
        yield b"data: 1\n\n"
        await asyncio.Event().wait()  # never set: the stream stays open until the server stops

    return StreamingResponse(frames(), media_type="text/event-stream")


def test_stop_ends_an_open_stream_and_closes_the_port() -> None:
    """What `shutdown` reads (connections, tasks, servers, lifespan) is there and works."""
    server = EmulatorServer(Starlette(routes=[Route("/stream", endless)]))
    server.start()
    state: Any = server._server.server_state
    got: list[bytes] = []
    ended = threading.Event()

    def read() -> None:
        with httpx.stream("GET", server.base_url + "/stream") as response:
            try:
                for chunk in response.iter_bytes():
                    got.append(chunk)
            except httpx.HTTPError:
                pass
        ended.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    for _ in range(1000):  # until the first frame: the stream is open
        if got:
            break
        threading.Event().wait(0.01)
    assert len(state.connections) == 1 and len(state.tasks) == 1
    server.stop()
    assert ended.wait(10), "the open stream was not ended by stop()"
    assert not state.connections and not state.tasks
    with pytest.raises(ConnectionRefusedError), socket.create_connection(
            (server.host, server.port), timeout=5):
        pass
