"""Fallbacks that keep a tool working say so in the log: none is silent."""

from __future__ import annotations

import logging

import pytest

from toolbridge import Toolbox
from toolbridge.schema._convert import fast_valid


class Opaque:
    """A class pydantic has no schema for."""


def test_a_return_type_without_a_schema_loses_returns_with_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    box = Toolbox(store=None)

    @box.tool
    def make_opaque(n: int) -> Opaque:
        """Make one."""
        return Opaque()

    assert box.get("make_opaque").returns is None
    [record] = [r for r in caplog.records if "return type" in r.getMessage()]
    assert record.levelno == logging.WARNING and "make_opaque" in record.getMessage()


def test_a_handler_whose_hints_cannot_be_resolved_gets_no_context_with_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    box = Toolbox(store=None)

    def lookup(key: str) -> str:
        return key

    lookup.__annotations__ = {"key": "NotDefinedAnywhere", "return": "str"}
    box.add({"name": "lookup", "parameters": {
        "type": "object", "required": ["key"], "properties": {"key": {"type": "string"}}}},
        lookup)
    [record] = [r for r in caplog.records if "type hints" in r.getMessage()]
    assert record.levelno == logging.WARNING and "lookup" in record.getMessage()
    assert "NotDefinedAnywhere" in record.getMessage()


def test_a_schema_jsonschema_rs_cannot_check_is_left_to_jsonschema_with_a_debug_line(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="toolbridge.schema")
    unknown = {"$schema": "https://example.com/not-a-metaschema", "type": "object"}
    assert fast_valid(unknown) is False
    assert any("jsonschema decides" in r.getMessage() for r in caplog.records)
