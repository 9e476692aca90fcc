"""Shared fixtures: the throwaway echo dialect, and plugin state reset between tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PLUGINS = Path(__file__).parent / "plugins"


@pytest.fixture
def echo_dialect() -> Iterator[str]:
    """Register the echo test dialect directly (no entry point) and forget it afterwards."""
    sys.path.insert(0, str(PLUGINS))
    import toolbridge_echo

    from toolbridge.plugin import register_plugin
    from toolbridge.plugin._manager import _PLUGINS

    register_plugin(toolbridge_echo, "echo")
    try:
        yield "echo"
    finally:
        _PLUGINS.reset()
        sys.path.remove(str(PLUGINS))
