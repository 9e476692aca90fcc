"""``toolbridge mcp serve`` and ``toolbridge demo --mcp`` (the served tests drive the server
itself through ``python -m toolbridge mcp serve``)."""

from __future__ import annotations

import sys

import pytest

from toolbridge.cli import main


@pytest.mark.parametrize("address", ["8000", "localhost:", "127.0.0.1:99999", ":80"])
def test_a_bad_http_address_is_a_usage_error(address: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "serve", "--http", address, "toolbridge.examples:toolbox"]) == 2
    assert "HOST:PORT" in capsys.readouterr().err


def test_an_unknown_toolbox_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "serve", "no_such_module_here:toolbox"]) == 2
    assert "cannot import" in capsys.readouterr().err


def test_the_missing_extra_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "toolbridge_mcp.server", None)
    assert main(["mcp", "serve", "toolbridge.examples:toolbox"]) == 2
    assert "toolbridge[mcp]" in capsys.readouterr().err


def test_the_demo_over_mcp(capfd: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--mcp"]) == 0  # the server's stderr needs a real file: capfd
    out = capfd.readouterr().out
    assert "protocol 2026-07-28" in out
    assert "tool   get_customer  {'readOnlyHint': True}" in out
    assert "'destructiveHint': True" in out
    assert out.count("  call   ") == 3 and "  error " not in out
    assert "the same ticket (ran once)" in out
