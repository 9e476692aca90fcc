"""``toolbridge convert``: tool definitions from one dialect's form (or OpenAPI) to another's."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import UsageError, validation_text
from ..model import ToolDefinition
from ..plugin import ImportedTools, LossPolicy, get_dialect

__all__ = ["convert_file", "read_definitions"]

_NOT_SETTINGS = frozenset({"tools", "id", "object", "created_at"})
"""Keys of an input document that are not settings left behind (an assistant's others are)."""


def read_definitions(data: Any, source: str) -> ImportedTools:
    """Neutral definitions from ``data`` in ``source`` form ('neutral', 'openapi' or a dialect),
    with the entries that have no neutral form (skipped)."""
    if source == "openapi":
        from ..schema import tools_from_openapi

        return ImportedTools(tools_from_openapi(data))
    items = data.get("tools", data) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise UsageError("expected a JSON list of tool definitions (or {\"tools\": [...]})")
    if source == "neutral":
        definitions = []
        for index, item in enumerate(items):
            try:
                definitions.append(ToolDefinition.model_validate(item))
            except ValidationError as exc:
                raise UsageError(f"tools[{index}]: {validation_text(exc)}") from None
        return ImportedTools(definitions)
    return get_dialect(source).import_tools(items)


def convert_file(path: Path, source: str, target: str, *, policy: LossPolicy = "describe"
                 ) -> Any:
    """Read ``path`` as ``source`` definitions and render them as ``target``'s.

    The result holds the ``tools``, the schema ``losses`` per tool and the ``skipped`` entries
    of the source (tools without a neutral form); for ``neutral`` it is the list of
    definitions, and skipped entries are noted on stderr.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    imported = read_definitions(data, source)
    skipped = [str(entry) for entry in imported.skipped]
    settings = sorted(k for k in data if k not in _NOT_SETTINGS) if isinstance(
        data, dict) and source not in ("neutral", "openapi") else []
    if settings:
        print(f"toolbridge: note: convert reads tool definitions only; {', '.join(settings)} "
              "are not converted (`toolbridge migrate` carries an assistant's settings and "
              "threads, with a report)", file=sys.stderr)
    if target == "neutral":
        for line in skipped:
            print(f"toolbridge: note: {line}", file=sys.stderr)
        return [t.model_dump(mode="json", exclude_defaults=True) for t in imported.definitions]
    rendered = get_dialect(target).render_tools(imported.definitions, policy=policy)
    result = {"tools": rendered.definitions,
              "losses": {name: [str(loss) for loss in losses]
                         for name, losses in rendered.losses.items() if losses},
              "skipped": skipped}
    if settings:
        result["not_converted"] = settings
    return result
