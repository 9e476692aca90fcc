"""A throwaway dialect living in its own package, installed through its own entry point.

It proves a third party can do everything the built-in adapters do, using only ``toolbridge``'s
public names: translations (here), a serve backend (`backend`), an emulator of its own small
JSON service (`emulator`), a demo, and a migration target writing files (`migration`), each
declared through its capability hook at the bottom; their options are in `options`. Wire form::

    payload: {"conversation": "c1", "calls": [{"id": "1", "tool": "add", "args": {...}}]}
    body:    {"answers": [{"id": "1", "ok": true, "value": "..."}]}
    tools:   [{"tool": "add", "about": "...", "schema": {...}}]

Importing this package is light: the backend, emulator and migration modules (and their
option classes) load on first use.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolCall, ToolDefinition, ToolResult, WireFormatError
from toolbridge.plugin import (
    Connection,
    Demos,
    Dialect,
    DialectLimits,
    DialectRegistry,
    Emulates,
    MigratesTo,
    PendingCalls,
    RenderedTools,
    Serves,
    hookimpl,
)
from toolbridge.runtime import output_text

DIALECT = "echo"


class EchoDialect(Dialect):
    name = DIALECT
    limits = DialectLimits(max_result_chars=1000)

    def render_tools(
        self, tools: Sequence[ToolDefinition], *, policy: Any = "describe"
    ) -> RenderedTools:
        return RenderedTools([
            {"tool": t.name, "about": t.description, "schema": t.parameters} for t in tools
        ])

    def read_calls(self, payload: Mapping[str, Any]) -> PendingCalls:
        calls = payload.get("calls")
        if not isinstance(calls, list):
            raise WireFormatError(self.name, "calls", "missing or not a list", payload)
        conversation = str(payload.get("conversation", ""))
        read = []
        for i, item in enumerate(calls):
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise WireFormatError(self.name, f"calls[{i}].id", "missing or not a string")
            arguments = item.get("args", {})
            if not isinstance(arguments, dict):
                raise WireFormatError(self.name, f"calls[{i}].args", "not an object")
            read.append(ToolCall(
                id=item["id"], name=str(item.get("tool", "")), arguments=arguments,
                dialect=self.name, conversation=conversation,
            ))
        return PendingCalls(tuple(read), tuple(payload.get("other", ())))

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        answers = []
        for r in results:
            if r.success:
                answers.append({"id": r.call.id, "ok": True, "value": output_text(r.output)})
            else:
                answers.append({"id": r.call.id, "ok": False, "error": r.error})
        return {"answers": answers}


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(EchoDialect())


def _connect(options: Any, tools: Sequence[ToolDefinition]) -> Connection:
    """The serve driver's `Connection` (options: `EchoServeOptions`, already parsed)."""
    from .backend import EchoConnection

    return EchoConnection(options, tools)



@hookimpl
def toolbridge_serve_backends() -> list[Serves]:
    return [Serves(DIALECT, f"{__name__}.options:EchoServeOptions", _connect)]


@hookimpl
def toolbridge_emulators() -> list[Emulates]:
    return [Emulates(DIALECT, f"{__name__}.options:EchoEmulatorOptions",
                     f"{__name__}.emulator:EchoEmulator.from_options",
                     hint="echo service API: {base_url}/v1/conversations  "
                     "(Authorization: Bearer <any key>)")]


@hookimpl
def toolbridge_demos() -> list[Demos]:
    return [Demos(DIALECT, rank=90)]


@hookimpl
def toolbridge_migration_targets() -> list[MigratesTo]:
    return [MigratesTo("echo-files", DIALECT, f"{__name__}.migration:open_target",
                       summary="JSON files: agents/ and conversations/ under -o dir=PATH")]
