"""OpenAI's documented size limits on strict schemas, measured on a converted schema.

Source: OpenAI's Structured Outputs guide, "Supported schemas" (platform.openai.com/docs/
guides/structured-outputs#supported-schemas), as restated in ``shared/protocols/
schema-dialects.md`` §2. Counted as the schema is written: ``$defs`` once, references not
followed (a definition starts at level 1), ``anyOf`` branches at their parent's level.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["STRICT_LIMITS", "strict_limit_breaches"]

STRICT_LIMITS: Mapping[str, int] = {
    "object properties": 5_000,
    "nesting levels": 10,
    "enum values": 1_000,
    "name and value characters": 120_000,
    "characters of one string enum with more than 250 values": 15_000,
}
"""Each limit, by the name errors and loss reports give it."""
_LARGE_ENUM = 250


def strict_limit_breaches(schema: Mapping[str, Any]) -> list[str]:
    """One line per limit ``schema`` (a strict conversion's output) is over; empty if none."""
    properties = enums = characters = deepest = largest = 0
    characters += sum(len(str(name)) for name in _map(schema.get("$defs")))
    stack: list[tuple[Any, int]] = [(schema, 1)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, Mapping):
            continue
        deepest = max(deepest, level)
        for name, sub in _map(node.get("properties")).items():
            properties += 1
            characters += len(str(name))
            stack.append((sub, level + 1))
        values = node.get("enum")
        if isinstance(values, list):
            enums += len(values)
            texts = [v for v in values if isinstance(v, str)]
            text = sum(map(len, texts))
            characters += text
            if len(texts) > _LARGE_ENUM:
                largest = max(largest, text)
        if isinstance(node.get("const"), str):
            characters += len(node["const"])
        stack.append((node.get("items"), level + 1))
        branches = node.get("anyOf")
        stack.extend((sub, level) for sub in (branches if isinstance(branches, list) else ()))
        stack.extend((sub, 1) for sub in _map(node.get("$defs")).values())
    sizes = dict(zip(STRICT_LIMITS, (properties, deepest, enums, characters, largest),
                     strict=True))
    return [f"{size:,} {what}, over OpenAI's strict-mode limit of {STRICT_LIMITS[what]:,}"
            for what, size in sizes.items() if size > STRICT_LIMITS[what]]


def _map(value: Any) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}
