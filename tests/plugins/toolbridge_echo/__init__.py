"""A throwaway dialect living in its own package, installed through its own entry point.

It proves a third party can do everything the built-in adapters do, using only ``toolbridge``'s
public names. Wire form::

    payload: {"conversation": "c1", "calls": [{"id": "1", "tool": "add", "args": {...}}]}
    body:    {"answers": [{"id": "1", "ok": true, "value": "..."}]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import Correlation, ToolCall, ToolDefinition, ToolResult, WireFormatError
from toolbridge.plugin import (
    Dialect,
    DialectLimits,
    DialectRegistry,
    PendingCalls,
    RenderedTools,
    hookimpl,
)
from toolbridge.runtime import output_text


class EchoCorrelation(Correlation):
    """The echo dialect needs only the call id back."""

    id: str


class EchoDialect(Dialect):
    name = "echo"
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
            read.append(ToolCall(
                id=item["id"], name=str(item.get("tool", "")), arguments=item.get("args") or {},
                dialect=self.name, conversation=conversation,
                correlation=EchoCorrelation(id=item["id"]),
            ))
        return PendingCalls(tuple(read), tuple(payload.get("other", ())))

    def write_results(self, results: Sequence[ToolResult]) -> dict[str, Any]:
        answers = []
        for r in results:
            assert isinstance(r.call.correlation, EchoCorrelation)
            if r.success:
                answers.append({"id": r.call.correlation.id, "ok": True,
                                "value": output_text(r.output)})
            else:
                answers.append({"id": r.call.correlation.id, "ok": False, "error": r.error})
        return {"answers": answers}


@hookimpl
def toolbridge_register_dialects(registry: DialectRegistry) -> None:
    registry.add(EchoDialect())
