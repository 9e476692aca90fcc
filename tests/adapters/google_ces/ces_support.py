from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolbridge

PAYLOADS = Path(__file__).parent / "payloads"
SESSION = "projects/p/locations/us/apps/a/sessions/session-0001"
APP = "projects/p/locations/us/apps/a"


def payload(name: str) -> Any:
    return json.loads((PAYLOADS / f"google-ces.{name}.json").read_text())


@pytest.fixture
def toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()
    seen: list[Any] = []

    @box.tool
    def get_nearest_store(zip_code: str, max_results: int | None = None) -> dict[str, Any]:
        """Find the store closest to a US zip code."""
        seen.append(max_results)
        return {"name": "Alibaba", "results": max_results}

    @box.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        seen.append((type(a), type(b)))
        return a + b

    @box.tool
    def broken(reason: str) -> str:
        """Always fails."""
        raise toolbridge.ToolError(f"cannot: {reason}")

    box.seen = seen  # type: ignore[attr-defined]
    return box


ADD_SCRIPT = {"turns": [
    {"rounds": [[{"name": "add", "arguments": {"a": 2, "b": 3}}],
                [{"name": "add", "arguments": {"a": 40, "b": 2}},
                 {"name": "broken", "arguments": {"reason": "no"}}]],
     "reply": "done: {outputs}"},
]}
