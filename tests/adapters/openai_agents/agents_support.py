"""Shared test material: a toolbox, a script, payload loading."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import toolbridge
import toolbridge.http

PAYLOADS = Path(__file__).parent / "payloads"
FAST = toolbridge.http.RetryPolicy(max_attempts=4, backoff=0.005, max_delay=0.05)
"""Short waits so fault tests stay fast."""
RACE = (0.01, 0.02, 0.03)

SCRIPT: dict[str, Any] = {"turns": [
    {"rounds": [
        [{"name": "get_customer", "arguments": {"customer_id": "123"}}],
        [{"name": "get_weather", "arguments": {"location": "Paris"}},
         {"name": "get_weather", "arguments": {"location": "Lima"}}],
    ], "reply": "Here is what I found: {outputs}"},
    {"rounds": [[{"name": "get_weather", "arguments": {"location": "Oslo"}}]],
     "reply": "Oslo: {outputs}"},
]}


def payload(name: str) -> Any:
    return json.loads((PAYLOADS / f"openai-agents-sessions.{name}.json").read_text())


def weather_toolbox(counter: dict[str, int] | None = None, **options: Any) -> toolbridge.Toolbox:
    """Two tools; ``counter`` counts handler runs per tool."""
    runs = counter if counter is not None else {}
    toolbox = toolbridge.Toolbox(**options)

    @toolbox.tool
    def get_customer(customer_id: str) -> dict[str, Any]:
        """Look up a customer by ID."""
        runs["get_customer"] = runs.get("get_customer", 0) + 1
        return {"id": customer_id, "plan": "pro"}

    @toolbox.tool(side_effects=True)
    async def get_weather(location: str) -> str:
        """Current weather for a city."""
        runs["get_weather"] = runs.get("get_weather", 0) + 1
        return f"sunny in {location}"

    return toolbox
