"""Shared tools, scripts and helpers for the gemini tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import toolbridge

__all__ = ["D", "PARALLEL", "PAYLOADS", "TWO_ROUNDS", "payload", "weather_toolbox"]

PAYLOADS = Path(__file__).parent / "payloads"
D = "gemini"


def payload(name: str) -> Any:
    return json.loads((PAYLOADS / f"{D}.{name}.json").read_text())


def weather_toolbox(**options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(**options)

    @box.tool
    def get_weather(location: str, days: int = 1, unit: Literal["c", "f"] = "c"
                    ) -> dict[str, Any]:
        """Forecast for a location."""
        return {"location": location, "days": days, "unit": unit}

    @box.tool(side_effects=True)
    def create_ticket(subject: str) -> str:
        """Open a support ticket."""
        return f"ticket: {subject}"

    return box


PARALLEL = {"turns": [{"rounds": [[
    {"name": "get_weather", "arguments": {"location": "Paris", "days": 2}},
    {"name": "get_weather", "arguments": {"location": "Lima"}},
]], "reply": "Answer: {outputs}"}]}
TWO_ROUNDS = {"turns": [{"rounds": [
    [{"name": "create_ticket", "arguments": {"subject": "heating"}}],
    [{"name": "get_weather", "arguments": {"location": "Oslo", "unit": "f"}},
     {"name": "get_weather", "arguments": {"location": "Rome"}}],
], "reply": "{outputs}"}]}
