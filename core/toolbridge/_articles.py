"""English for error texts: "an int", "a str", "an emulator", "None" (never "a NoneType")."""

from __future__ import annotations

from typing import Any

__all__ = ["a", "a_value_of"]

_SOUNDS_LIKE_YOU = ("uni", "use", "usa", "uu", "eu", "one")


def a(noun: str) -> str:
    """``noun`` with its indefinite article: ``a("int")`` is ``"an int"``."""
    word = noun.lstrip("'\"`(").lower()
    vowel = word[:1] in ("a", "e", "i", "o", "u") and not word.startswith(_SOUNDS_LIKE_YOU)
    return f"{'an' if vowel else 'a'} {noun}"


def a_value_of(value: Any) -> str:
    """What ``value`` is, for a message: its type with its article, or ``None``."""
    return "None" if value is None else a(type(value).__name__)
