"""``toolbridge convert``: tool definitions from one dialect's form (or OpenAPI) to another's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..model import ToolDefinition
from ..plugin import LossPolicy, get_dialect

__all__ = ["convert_file", "read_definitions"]


def read_definitions(data: Any, source: str) -> list[ToolDefinition]:
    """Neutral definitions from ``data`` in ``source`` form ('neutral', 'openapi' or a dialect)."""
    if source == "openapi":
        from ..schema import tools_from_openapi

        return tools_from_openapi(data)
    items = data.get("tools", data) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise UsageError("expected a JSON list of tool definitions (or {\"tools\": [...]})")
    if source == "neutral":
        return [ToolDefinition.model_validate(item) for item in items]
    return get_dialect(source).read_tools(items)


def convert_file(path: Path, source: str, target: str, *, policy: LossPolicy = "describe"
                 ) -> Any:
    """Read ``path`` as ``source`` definitions and render them as ``target``'s."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    tools = read_definitions(data, source)
    if target == "neutral":
        return [t.model_dump(mode="json", exclude_defaults=True) for t in tools]
    rendered = get_dialect(target).render_tools(tools, policy=policy)
    return {"tools": rendered.definitions,
            "losses": {name: [str(loss) for loss in losses]
                       for name, losses in rendered.losses.items() if losses}}
