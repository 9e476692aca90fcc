"""Shared tools, scripts and helpers for the gemini-interactions tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openai_weather import weather_toolbox

__all__ = ["D", "PARALLEL", "PAYLOADS", "TWO_ROUNDS", "payload", "unknown_keys",
           "weather_toolbox"]

PAYLOADS = Path(__file__).parent / "payloads"
PARALLEL = {"turns": [{"rounds": [[
    {"name": "get_weather", "arguments": {"location": "Paris"}},
    {"name": "get_time", "arguments": {"tz": "Europe/Paris"}},
]], "reply": "Answer: {outputs}"}]}
"""Two parallel calls (no strict mode here: absent optional arguments stay absent)."""
TWO_ROUNDS = {"turns": [{"rounds": [
    [{"name": "get_time", "arguments": {"tz": "UTC"}}],
    [{"name": "get_weather", "arguments": {"location": "Lima", "unit": "fahrenheit"}},
     {"name": "get_weather", "arguments": {"location": "Oslo"}}],
], "reply": "{outputs}"}]}
D = "gemini-interactions"


def payload(name: str) -> Any:
    return json.loads((PAYLOADS / f"{name}.json").read_text())


def unknown_keys(model: Any, where: str = "") -> list[str]:
    """Keys a google-genai model (``extra="allow"``) took without declaring them, anywhere in
    it: the SDK accepts unknown keys silently, so a parse alone proves little."""
    found: list[str] = []
    extra = getattr(model, "model_extra", None) or {}
    found += [f"{where}.{key}" for key in extra]
    for name, value in vars(model).items():  # the fields, without the deprecation warnings
        values = value if isinstance(value, list) else [value]
        for i, item in enumerate(values):
            if hasattr(type(item), "model_fields"):
                found += unknown_keys(item, f"{where}.{name}[{i}]")
    return found
