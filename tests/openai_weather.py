"""The weather toolbox and scripts the OpenAI-family adapter tests share (Assistants,
Responses, Chat): a strict tool with an optional parameter, a plain one, two scripts."""

from __future__ import annotations

from typing import Any

import toolbridge


def weather_toolbox(**options: Any) -> toolbridge.Toolbox:
    box = toolbridge.Toolbox(**options)

    @box.tool(strict=True)
    def get_weather(location: str, unit: str = "celsius") -> dict[str, Any]:
        """Get the current weather for a city."""
        return {"location": location, "temp": 14, "unit": unit}

    @box.tool
    def get_time(tz: str) -> str:
        """Get the local time in an IANA time zone."""
        return f"12:00 in {tz}"

    return box


PARALLEL = {"turns": [{"rounds": [[
    {"name": "get_weather", "arguments": {"location": "Paris", "unit": None}},
    {"name": "get_time", "arguments": {"tz": "Europe/Paris"}},
]], "reply": "Answer: {outputs}"}]}
TWO_ROUNDS = {"turns": [{"rounds": [
    [{"name": "get_time", "arguments": {"tz": "UTC"}}],
    [{"name": "get_weather", "arguments": {"location": "Lima", "unit": "fahrenheit"}},
     {"name": "get_weather", "arguments": {"location": "Oslo", "unit": None}}],
], "reply": "{outputs}"}]}
