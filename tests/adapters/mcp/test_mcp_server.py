"""Our MCP server (``toolbridge mcp serve``) driven by the official SDK's client, over stdio
and streamable HTTP: list, call, structured output, errors, progress, cancellation, the
negotiated protocol revision, and a side effect run once across a SIGKILL.

A server process takes seconds to start (the SDK's import): the tests that only call a
server share one per transport for the module (``shared``: one stdio session, one HTTP
server that each test connects a client of its own to), and count its side effects from what
the log held before; those that kill a server or choose the protocol revision at the
handshake start their own (``connect``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client
from mcp_support import http_server, lines, stdio_server, until

from toolbridge_mcp import IDEMPOTENCY_META

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the shared stdio session's loop

Connect = Callable[..., AbstractAsyncContextManager[Client]]


@asynccontextmanager
async def over_stdio(folder: Path, *, mode: str = "auto", **env: str) -> AsyncIterator[Client]:
    async with Client(stdio_server(folder, **env), mode=mode) as client:
        yield client


@asynccontextmanager
async def over_http(folder: Path, *, mode: str = "auto", **env: str) -> AsyncIterator[Client]:
    with http_server(folder, **env) as url:
        async with Client(url, mode=mode) as client:
            yield client


TRANSPORTS = [pytest.param(over_stdio, id="stdio"), pytest.param(over_http, id="http")]


class Shared:
    """A server the module's calling tests share, and the folder of its files."""

    def __init__(self, folder: Path, connect: Callable[[], AbstractAsyncContextManager[Client]]
                 ) -> None:
        self.folder, self.connect = folder, connect


@pytest.fixture(scope="module")
def shared_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    """One HTTP server; each test connects a client of its own (a session of its own)."""
    folder = tmp_path_factory.mktemp("mcp-http")
    with http_server(folder) as url:
        yield Shared(folder, lambda: Client(url))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared_stdio(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Shared]:
    """One stdio server and its one session, held open by a task of the module's loop (the
    SDK's client must be left in the task that entered it)."""
    folder = tmp_path_factory.mktemp("mcp-stdio")
    opened: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with Client(stdio_server(folder)) as client:
                opened.set_result(client)
                await done.wait()
        except BaseException as exc:
            if not opened.done():
                opened.set_exception(exc)
            raise

    holder = asyncio.create_task(hold())
    client = await opened

    @asynccontextmanager
    async def session() -> AsyncIterator[Client]:
        yield client

    yield Shared(folder, session)
    done.set()
    await holder


@pytest.fixture(params=["stdio", "http"])
def shared(request: pytest.FixtureRequest) -> Shared:
    return request.getfixturevalue(f"shared_{request.param}")  # type: ignore[no-any-return]


async def test_tools_are_listed_with_schemas_and_annotations(shared: Shared) -> None:
    async with shared.connect() as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == {"lookup", "charge", "crunch", "wait_forever"}
    lookup = listed["lookup"]
    assert lookup.input_schema["required"] == ["order"]
    assert lookup.input_schema["properties"]["order"]["type"] == "integer"
    assert lookup.output_schema is not None and lookup.output_schema["type"] == "object"
    assert lookup.annotations is not None and lookup.annotations.read_only_hint is True
    charge = listed["charge"].annotations
    assert charge is not None
    assert (charge.read_only_hint, charge.destructive_hint, charge.idempotent_hint) == (
        False, True, True)
    assert listed["crunch"].annotations is None  # safe to re-run is not "reads only"
    assert listed["crunch"].output_schema is None  # a string result: text only
    assert "context" not in listed["charge"].input_schema["properties"]


async def test_a_call_answers_structured_content_and_its_text(shared: Shared) -> None:
    async with shared.connect() as client:
        result = await client.call_tool("lookup", {"order": 7})
        text = await client.call_tool("crunch", {"steps": 1})
    assert result.is_error is False
    assert result.structured_content == {"order": 7, "status": "shipped"}
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    assert block.text == '{"order":7,"status":"shipped"}'
    assert text.structured_content is None
    assert [b.text for b in text.content if isinstance(b, types.TextContent)] == ["1 steps"]


async def test_errors_are_results_marked_is_error(shared: Shared) -> None:
    async with shared.connect() as client:
        refused = await client.call_tool("lookup", {"order": 0})
        invalid = await client.call_tool("lookup", {"order": "seven"})
        unknown = await client.call_tool("no_such_tool", {})

    def text(result: types.CallToolResult) -> str:
        return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))

    assert refused.is_error and text(refused) == "no order 0; order numbers start at 1"
    assert invalid.is_error and "order" in text(invalid)
    assert unknown.is_error and "no_such_tool" in text(unknown)


async def test_progress_is_sent_when_the_client_asks(shared: Shared) -> None:
    seen: list[tuple[float, str | None]] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        seen.append((value, message))

    async with shared.connect() as client:
        result = await client.call_tool("crunch", {"steps": 3}, progress_callback=progress)
        sent = len(seen)  # all of them came before the reply
        quiet = await client.call_tool("crunch", {"steps": 2})
    assert not result.is_error and not quiet.is_error
    steps = [m for _, m in seen if m is not None and m.startswith("step")]
    assert steps == ["step 1 of 3", "step 2 of 3", "step 3 of 3"]  # (a slow run also ticks)
    assert [v for v, _ in seen] == sorted(v for v, _ in seen)  # progress only increases
    assert len(seen) == sent  # the call without a progressToken sent none


async def test_a_cancelled_call_cancels_its_handler(shared: Shared) -> None:
    marks = shared.folder / "marks.log"
    before = len(lines(marks))  # this module's only writer: one "started", one "cancelled"
    async with shared.connect() as client:
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "wait_forever", {})
            await until(lambda: "started" in lines(marks)[before:], "the handler to start")
            group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        await until(lambda: "cancelled" in lines(marks)[before:],
                    "the handler to be cancelled")
        after = await client.call_tool("lookup", {"order": 1})  # the session lives on
    assert not after.is_error


@pytest.mark.parametrize("connect", TRANSPORTS)
@pytest.mark.parametrize(("mode", "revision"), [("auto", "2026-07-28"),
                                                ("legacy", "2025-11-25")])
async def test_the_negotiated_protocol_revision(connect: Connect, mode: str, revision: str,
                                                tmp_path: Path) -> None:
    """A session of its own (the mode is the client's, chosen at the handshake)."""
    async with connect(tmp_path, mode=mode) as client:
        assert client.protocol_version == revision
        assert client.server_info is not None and client.server_info.name == "toolbridge"
        result = await client.call_tool("lookup", {"order": 3})
    assert result.structured_content == {"order": 3, "status": "shipped"}


def _charge(key: str | None) -> dict[str, Any]:
    return {"meta": {IDEMPOTENCY_META: key}} if key else {}


@pytest.mark.parametrize("connect", TRANSPORTS)
async def test_a_reissued_keyed_side_effect_runs_once_after_a_sigkill(
        connect: Connect, tmp_path: Path) -> None:
    """The server dies after the handler ran and its result was stored, before the reply;
    the client re-issues the call (a new request id) with the same key to a new process."""
    effects = tmp_path / "effects.log"
    with pytest.raises(Exception) as lost:
        async with connect(tmp_path, MCP_TEST_KILL_AFTER_STORE="1") as client:
            await client.call_tool("charge", {"amount": 500}, read_timeout_seconds=60,
                                   **_charge("order-77-payment"))
    assert not isinstance(lost.value, AssertionError)
    assert (tmp_path / "killed").exists()
    assert len(lines(effects)) == 1
    async with connect(tmp_path) as client:
        again = await client.call_tool("charge", {"amount": 500}, **_charge("order-77-payment"))
        other = await client.call_tool("charge", {"amount": 500}, **_charge("order-78-payment"))
    assert not again.is_error and not other.is_error
    assert [b.text for b in again.content if isinstance(b, types.TextContent)] == [
        "charged 500"]
    assert again.meta is not None and again.meta[IDEMPOTENCY_META] == "order-77-payment"
    runs = lines(effects)
    assert len(runs) == 2, runs  # order-77 once (before the kill), order-78 once
    assert runs[0].split()[1] != runs[1].split()[1]  # the handlers saw distinct keys


async def test_without_a_key_a_reissued_side_effect_runs_again(shared: Shared) -> None:
    """What docs/mcp.md says: a call without an idempotency key is not stored."""
    effects = shared.folder / "effects.log"
    before = len(lines(effects))
    async with shared.connect() as client:
        await client.call_tool("charge", {"amount": 5})
        await client.call_tool("charge", {"amount": 5})
    assert len(lines(effects)) - before == 2


async def test_a_key_reused_with_other_arguments_is_refused(shared_stdio: Shared) -> None:
    effects = shared_stdio.folder / "effects.log"
    before = len(lines(effects))
    async with shared_stdio.connect() as client:
        first = await client.call_tool("charge", {"amount": 5}, **_charge("reused-k-1"))
        reused = await client.call_tool("charge", {"amount": 6}, **_charge("reused-k-1"))
    assert not first.is_error
    assert reused.is_error
    assert len(lines(effects)) - before == 1


async def test_a_malformed_key_is_an_error_result_naming_the_field(shared_stdio: Shared
                                                                   ) -> None:
    effects = shared_stdio.folder / "effects.log"
    before = len(lines(effects))
    async with shared_stdio.connect() as client:
        result = await client.call_tool("charge", {"amount": 5},
                                        meta={IDEMPOTENCY_META: ""})  # type: ignore[arg-type]
    assert result.is_error
    assert IDEMPOTENCY_META in result.content[0].text  # type: ignore[union-attr]
    assert len(lines(effects)) == before
