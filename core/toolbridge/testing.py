"""Helpers for testing handlers and adapters: emulators by dialect name, conversations on
them, conformance checks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import UsageError, WireFormatError
from .model import ToolDefinition, ToolResult
from .plugin import Dialect, dialects, get_dialect

if TYPE_CHECKING:
    from .emulation import Faults, RunningEmulator, Script
    from .serve import Transcript
    from .toolbox import Toolbox

__all__ = ["aconverse", "check_dialect", "converse", "emulator", "installed_dialects"]


@contextmanager
def emulator(dialect: str | Dialect, **options: Any) -> Iterator[RunningEmulator]:
    """Start ``dialect``'s emulator on a free loopback port; yields a `RunningEmulator`.

    ``options`` (``script``, ``faults``, dialect-specific ones) go to the emulator::

        with emulator("openai-agents", script={"turns": [...]}) as emu:
            client = OpenAI(base_url=emu.base_url + "/v1", api_key="test")
    """
    d = get_dialect(dialect)
    emu = d.create_emulator(d.emulator_options.parse(options))
    with emu.run() as running:
        yield running


def installed_dialects() -> list[str]:
    """The installed dialects that ship an emulator, sorted: what to parametrize a test over
    to run it on every backend::

        @pytest.mark.parametrize("dialect", installed_dialects())
    """
    return [name for name, dialect in dialects().items()
            if type(dialect).create_emulator is not Dialect.create_emulator]


async def aconverse(
    toolbox: Toolbox, dialect: str | Dialect, messages: str | Sequence[str], *,
    script: Script | Mapping[str, Any] | str | Path | None = None,
    faults: Faults | Mapping[str, Any] | None = None, running: RunningEmulator | None = None,
    **options: Any,
) -> Transcript:
    """Hold a conversation with ``toolbox`` on ``dialect``'s emulator; return its transcript.

    The same as `toolbridge.serve.aconverse` (same argument order), against an emulator: it is
    started for the conversation with ``script`` and ``faults``, unless ``running`` is one
    already started (by `emulator` or the ``toolbridge_emulator`` fixture, to read its journal
    afterwards). ``options`` are more of the dialect's serve options (``model=...``).
    """
    from .serve import aconverse as serve_aconverse

    chosen = get_dialect(dialect)
    texts = [messages] if isinstance(messages, str) else list(messages)
    if running is not None and (script is not None or faults is not None):
        raise UsageError("converse: give script= and faults= to the emulator you pass as "
                         "running=, not to converse")
    if "base_url" in options:
        raise UsageError("converse talks to the emulator, whose base_url it passes; for another "
                         "backend use toolbridge.serve.converse")
    async with _serving(chosen, running, script, faults) as backend:
        settings = chosen.serve_options.emulated(backend.base_url)
        if options:
            settings = chosen.serve_options.parse({**settings.model_dump(exclude_unset=True),
                                                   **options})
        return await serve_aconverse(toolbox, chosen, texts, settings)


def converse(
    toolbox: Toolbox, dialect: str | Dialect, messages: str | Sequence[str], *,
    script: Script | Mapping[str, Any] | str | Path | None = None,
    faults: Faults | Mapping[str, Any] | None = None, running: RunningEmulator | None = None,
    **options: Any,
) -> Transcript:
    """Blocking `aconverse` (not inside a running event loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # no loop runs here (outside the handler: its errors chain nothing)
    else:
        raise UsageError("converse was called inside a running event loop; use "
                         "await toolbridge.testing.aconverse(...) instead")
    return asyncio.run(aconverse(toolbox, dialect, messages, script=script, faults=faults,
                                 running=running, **options))


@asynccontextmanager
async def _serving(dialect: Dialect, running: RunningEmulator | None, script: Any, faults: Any
                   ) -> AsyncIterator[RunningEmulator]:
    if running is not None:
        yield running
        return
    with emulator(dialect, script=script, faults=faults) as started:
        yield started


def check_dialect(
    dialect: Dialect, tools: Sequence[ToolDefinition], payload: Mapping[str, Any]
) -> None:
    """Conformance checks every dialect should pass; raises `AssertionError` naming the rule.

    ``payload`` must hold at least one pending call of one of ``tools``.
    """
    rendered = dialect.render_tools(tools)
    assert len(rendered.definitions) >= len(tools), "render_tools dropped a tool"
    json.dumps(rendered.definitions)  # must be JSON-compatible
    pending = dialect.read_calls(payload)
    assert pending.calls, "read_calls found no call in a payload that has one"
    for call in pending.calls:
        assert call.dialect == dialect.name, f"call.dialect is {call.dialect!r}"
    results = [ToolResult.ok(c, {"ok": True}) if i % 2 == 0 else ToolResult.failed(c, "nope")
               for i, c in enumerate(pending.calls)]
    body = dialect.write_results(results)
    text = json.dumps(body)
    for call in pending.calls:
        assert call.id in text, f"write_results does not echo call id {call.id!r}"
    for bad in ({}, {"unexpected": 1}):
        try:
            dialect.read_calls(bad)
        except WireFormatError as exc:
            assert exc.dialect == dialect.name, "WireFormatError must name the dialect"
        else:
            if dialect.read_calls(bad).calls:
                raise AssertionError("read_calls invented calls from an empty payload")
