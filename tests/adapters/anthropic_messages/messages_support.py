"""Shared pieces of the Messages adapter tests: a toolbox, scripts, recorded payloads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import toolbridge

D = "anthropic-messages"
PAYLOADS = Path(__file__).parent / "payloads"
PARALLEL = {"turns": [{"rounds": [[
    {"name": "get_weather", "arguments": {"city": "Paris"}},
    {"name": "get_weather", "arguments": {"city": "Lima", "unit": "f"}},
]], "reply": "Weather: {outputs}"}]}
TWO_ROUNDS = {"turns": [{"rounds": [
    [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
    [{"name": "get_weather", "arguments": {"city": "Rome"}}],
], "reply": "done {outputs}"}]}


def payload(name: str) -> Any:
    return json.loads((PAYLOADS / name).read_text())


def weather_toolbox() -> toolbridge.Toolbox:
    toolbox = toolbridge.Toolbox()

    @toolbox.tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
        """Current weather for a city."""
        return {"city": city, "unit": unit, "temp": 21 if unit == "c" else 70}

    return toolbox
