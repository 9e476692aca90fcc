"""Shared fixtures: the throwaway echo dialect, and plugin state reset between tests; reports
that xdist can send."""

from __future__ import annotations

import sys
from collections.abc import Generator, Iterator
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


def _encodable(text: str) -> str:
    """``text`` with lone surrogates (fuzzed input that a log line quoted) escaped."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A report's captured output as UTF-8 can carry it: under xdist (``-n``), a worker sends
    each report to the controller, which refuses a lone surrogate and loses the worker."""
    report = yield
    report.sections = [(title, _encodable(text)) for title, text in report.sections]
    return report
