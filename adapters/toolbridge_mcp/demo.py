"""``toolbridge demo --mcp``: the example tools served over MCP, driven by an MCP client session."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Mapping
from typing import Any

from .wire import IDEMPOTENCY_META

__all__ = ["run_demo"]

EXAMPLES = "toolbridge.examples:toolbox"


def _text(result: Any) -> str:
    import mcp_types as types

    if result.structured_content is not None:
        return json.dumps(result.structured_content, separators=(",", ":"))
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def _session(script: Mapping[str, Any], show: Any) -> bool:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    # this Python, with this environment (the SDK's default passes only a safe few variables)
    server = StdioServerParameters(command=sys.executable,
                                   args=["-m", "toolbridge", "mcp", "serve", EXAMPLES],
                                   env=dict(os.environ))
    ok = True
    # the server's stderr to ours as it is now (the SDK's default is bound at its import)
    async with Client(stdio_client(server, errlog=sys.stderr)) as client:
        show(f"== mcp  (toolbridge mcp serve {EXAMPLES}, on stdio; protocol "
             f"{client.protocol_version})")
        listed = (await client.list_tools()).tools
        for tool in listed:
            hints = tool.annotations.model_dump(by_alias=True, exclude_none=True) \
                if tool.annotations else {}
            show(f"  tool   {tool.name}" + (f"  {hints}" if hints else ""))
        rounds = [call for turn in script["turns"] for r in turn["rounds"] for call in r]
        tickets: list[str] = []
        for index, call in enumerate(rounds, 1):
            name, arguments = call["name"], call["arguments"]
            meta = {IDEMPOTENCY_META: f"demo-call-{index}"}
            show(f"  call   {name} {json.dumps(arguments, separators=(',', ':'))}")
            result = await client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]
            ok = ok and not result.is_error
            show(f"  {'error ' if result.is_error else 'result'} {_text(result)}")
            if name == "create_ticket":
                again = await client.call_tool(name, arguments, meta=meta)  # type: ignore[arg-type]
                tickets = [_text(result), _text(again)]
        if tickets:
            same = tickets[0] == tickets[1]
            ok = ok and same
            show("  note   create_ticket re-issued with the same idempotency key: "
                 + ("answered from the store, the same ticket (ran once)" if same
                    else "answered differently (it ran twice)"))
    return ok


def run_demo(script: Mapping[str, Any]) -> bool:
    """Serve the example toolbox over MCP and call its tools as ``script``'s rounds do; True
    when every call answered and the re-issued side effect ran once."""
    from toolbridge import BackendError

    try:
        return asyncio.run(_session(script, print))
    except Exception as exc:  # the SDK's task groups raise groups: say what failed, once
        inner: BaseException = exc
        while len(getattr(inner, "exceptions", ())) == 1:  # an exception group of one
            inner = getattr(inner, "exceptions")[0]  # noqa: B009  (any group type)
        raise BackendError(f"the MCP demo failed: {type(inner).__name__}: {inner}") from None
