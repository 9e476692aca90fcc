"""The models of the Assistants era and what each becomes: `RETIRED_MODELS`, `resolve_model`.

Every family Assistants accepted is a row; a name is reduced to its family by lower-casing
it, reading Azure's spelling (``gpt-35-turbo``) as OpenAI's, and dropping a date
(``-2024-08-06``, ``-0613``; ``gpt-4-1106-preview`` is its own row). Shutdown dates and
OpenAI's recommended replacements are from OpenAI's deprecations page
(https://platform.openai.com/docs/deprecations); where OpenAI's replacement is itself
retired, the row says so and names the current model chosen instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["CURRENT_MODELS", "DEFAULT_MODEL", "RETIRED_MODELS", "ModelChoice", "family_of",
           "remapped", "resolve_model"]

_DEPRECATIONS = "OpenAI deprecations"
_ROWS: dict[str, tuple[str, str]] = {
    # family: (replacement, source)
    "gpt-3.5-turbo": ("gpt-5.1-mini", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23 "
                      "(OpenAI: gpt-4.1-mini, itself shut down 2027-01-14)"),
    "gpt-3.5-turbo-16k": ("gpt-5.1-mini", f"{_DEPRECATIONS} 2023-11-06: 16k snapshots shut "
                          "down 2024-09-13 (OpenAI: gpt-3.5-turbo, itself shut down "
                          "2026-10-23)"),
    "gpt-4": ("gpt-5.1", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23"),
    "gpt-4-32k": ("gpt-5.1", f"{_DEPRECATIONS} 2024-06-06: shut down 2025-06-06 (OpenAI: "
                  "gpt-4o, itself shut down 2027-01-14)"),
    "gpt-4-turbo": ("gpt-5.1", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23"),
    "gpt-4-turbo-preview": ("gpt-5.1", f"{_DEPRECATIONS}: GPT-4 previews shut down "
                            "2026-03-26 (OpenAI: gpt-4.1, itself shut down 2027-01-14)"),
    "gpt-4-1106-preview": ("gpt-5.1", f"{_DEPRECATIONS}: GPT-4 previews shut down "
                           "2026-03-26 (OpenAI: gpt-4.1, itself shut down 2027-01-14)"),
    "gpt-4-0125-preview": ("gpt-5.1", f"{_DEPRECATIONS}: GPT-4 previews shut down "
                           "2026-03-26 (OpenAI: gpt-4.1, itself shut down 2027-01-14)"),
    "gpt-4-vision-preview": ("gpt-5.1", f"{_DEPRECATIONS} 2024-06-06: shut down 2024-12-06 "
                             "(OpenAI: gpt-4o, itself shut down 2027-01-14)"),
    "gpt-4-1106-vision-preview": ("gpt-5.1", f"{_DEPRECATIONS} 2024-06-06: shut down "
                                  "2024-12-06 (OpenAI: gpt-4o, itself shut down 2027-01-14)"),
    "gpt-4.5-preview": ("gpt-5.1", f"{_DEPRECATIONS} 2025-04-14: shut down 2025-07-14 "
                        "(OpenAI: gpt-4.1, itself shut down 2027-01-14)"),
    "gpt-4o": ("gpt-5.1", f"{_DEPRECATIONS}: shut down 2027-01-14"),
    "gpt-4o-mini": ("gpt-5.1-mini", f"{_DEPRECATIONS}: shut down 2027-01-14"),
    "gpt-4.1": ("gpt-5.1", f"{_DEPRECATIONS}: shut down 2027-01-14"),
    "gpt-4.1-mini": ("gpt-5.1-mini", f"{_DEPRECATIONS}: shut down 2027-01-14"),
    "gpt-4.1-nano": ("gpt-5.1-nano", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23"),
    "o1": ("gpt-5.1", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23 (OpenAI: o3, "
           "itself shut down 2026-12-11)"),
    "o1-preview": ("gpt-5.1", f"{_DEPRECATIONS} 2025-04-28: shut down 2025-07-28 (OpenAI: "
                   "o3, itself shut down 2026-12-11)"),
    "o1-mini": ("gpt-5.1-mini", f"{_DEPRECATIONS} 2025-04-28: shut down 2025-10-27 "
                "(OpenAI: o4-mini, itself shut down 2026-10-23)"),
    "o3-mini": ("gpt-5.1-mini", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23"),
    "o4-mini": ("gpt-5.1-mini", f"{_DEPRECATIONS} 2026-04-22: shut down 2026-10-23"),
    "o3": ("gpt-5.1", f"{_DEPRECATIONS}: shut down 2026-12-11"),
    "gpt-5": ("gpt-5.1", f"{_DEPRECATIONS}: shut down 2026-12-11"),
    "gpt-5-mini": ("gpt-5.1-mini", f"{_DEPRECATIONS}: shut down 2026-12-11"),
    "gpt-5-nano": ("gpt-5.1-nano", f"{_DEPRECATIONS}: shut down 2026-12-11"),
}

RETIRED_MODELS: dict[str, str] = {family: row[0] for family, row in _ROWS.items()}
"""Each retired family of the Assistants era and the current model used instead (the
replacement is a choice where OpenAI's own is retired too; the source of each row is in
`resolve_model`'s answer). Override per model with ``remap=`` / ``--model-map OLD=NEW``."""

CURRENT_MODELS = frozenset({"gpt-5.1", "gpt-5.1-mini", "gpt-5.1-nano", "gpt-5.2",
                            "gpt-5.4", "gpt-5.4-mini", "gpt-5.5"})
"""Families that are served today: carried as they are."""

DEFAULT_MODEL = RETIRED_MODELS["gpt-4o"]
"""The model serve options default to: the table's replacement of ``gpt-4o``, the former
default (so it follows the table, and is always one of `CURRENT_MODELS`)."""

_DATE = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4})$")

ModelFate = Literal["carried", "remapped", "unknown"]


@dataclass(frozen=True)
class ModelChoice:
    """What an assistant's ``model`` becomes: ``model`` (the name to write), ``fate``
    (``carried``, ``remapped`` or ``unknown``: kept as is, not in the table) and ``how``
    (the source of the mapping, or the hint)."""

    source: str
    model: str
    fate: ModelFate
    how: str = ""
    override: str | None = None
    """The ``remap`` key that decided it, if one did."""


def family_of(model: str) -> str:
    """The table row a model name belongs to (lower case, OpenAI spelling, no date)."""
    name = model.strip().lower().replace("gpt-35", "gpt-3.5")
    while name not in _ROWS and name not in CURRENT_MODELS:
        shorter = _DATE.sub("", name)
        if shorter == name:
            break
        name = shorter
    return name


def _override(model: str, overrides: Mapping[str, str]) -> str | None:
    """The ``overrides`` key for ``model``: its own name, else its family's."""
    if model in overrides:
        return model
    family = family_of(model)
    return family if family in overrides else None


def resolve_model(model: str, overrides: Mapping[str, str] | None = None,
                  deployments: Mapping[str, str] | None = None) -> ModelChoice:
    """What ``model`` becomes: an override (``remap``; an override of a family covers its
    snapshots) first, then, for an Azure deployment name found in ``deployments`` (name ->
    model, read from the source's deployments API), the model it serves, then the table."""
    overrides = overrides or {}
    key = _override(model, overrides)
    if key is not None:
        new = overrides[key]
        if new == model:
            return ModelChoice(model, model, "carried", f"kept by --model-map {key}={new}", key)
        return ModelChoice(model, new, "remapped", f"remap given: {model} remapped to {new}",
                           key)
    served = (deployments or {}).get(model)
    prefix = ""
    name = model
    if served is not None:
        prefix = f"Azure deployment {model} serves {served} (the source's deployments API); "
        name = served
    family = family_of(name)
    if family in _ROWS:
        new, source = _ROWS[family]
        return ModelChoice(model, new, "remapped",
                           f"{prefix}retired model: {name} remapped to {new} (family "
                           f"{family}; {source})")
    if family in CURRENT_MODELS:
        if name == model and family == model:
            return ModelChoice(model, model, "carried")
        return ModelChoice(model, family, "remapped", f"{prefix}{name} is {family}, current")
    return ModelChoice(model, model, "unknown",
                       f"{prefix}{name} is not in the model table (a fine-tune or an Azure "
                       f"deployment name?): kept as is; pass --model-map {model}=NEW")


def remapped(model: str, overrides: Mapping[str, str]) -> str | None:
    """The model to use instead of ``model``, or ``None`` to keep it (see `resolve_model`)."""
    choice = resolve_model(model, overrides)
    return choice.model if choice.model != model else None
