"""Helpers for testing handlers and adapters: emulators by dialect name, conformance checks."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from .errors import WireFormatError
from .model import ToolDefinition, ToolResult
from .plugin import Dialect, get_dialect

__all__ = ["check_dialect", "emulator"]


@contextmanager
def emulator(dialect: str | Dialect, **options: Any) -> Iterator[Any]:
    """Start ``dialect``'s emulator on a free loopback port; yields a `RunningEmulator`.

    ``options`` (``script``, ``faults``, dialect-specific ones) go to the emulator::

        with emulator("openai-agents", script={"turns": [...]}) as emu:
            client = OpenAI(base_url=emu.base_url + "/v1", api_key="test")
    """
    d = get_dialect(dialect)
    emu = d.create_emulator(d.emulator_options.parse(options))
    with emu.run() as running:
        yield running


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
