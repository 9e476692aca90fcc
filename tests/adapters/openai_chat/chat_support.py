"""Shared tools, scripts and helpers for the openai-chat tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openai_weather import PARALLEL, TWO_ROUNDS, weather_toolbox

__all__ = ["D", "PARALLEL", "PAYLOADS", "TWO_ROUNDS", "payload", "weather_toolbox"]

PAYLOADS = Path(__file__).parent / "payloads"
D = "openai-chat"


def payload(name: str) -> Any:
    return json.loads((PAYLOADS / f"{name}.json").read_text())
