"""The core driver on google-ces against the real service: what is missing is named first."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import toolbridge
from toolbridge.examples import toolbox
from toolbridge.serve import aconverse

CES = toolbridge.get_dialect("google-ces")


@pytest.fixture(autouse=True)
def _no_app(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_CES_APP", "TOOLBRIDGE_GOOGLE_CES_APP"):
        monkeypatch.delenv(name, raising=False)

    async def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a request was sent")

    monkeypatch.setattr(httpx.AsyncClient, "send", no_network)


async def test_missing_app_is_named_before_any_network_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge_google_ces.backend as backend

    def no_lookup() -> None:
        raise AssertionError("looked for credentials without an app")

    monkeypatch.setattr(backend, "_default_credentials", no_lookup)
    with pytest.raises(toolbridge.UsageError) as info:
        await aconverse(toolbox, CES, ["hi"], {"base_url": None})
    assert "GOOGLE_CES_APP" in str(info.value) and "credentials" in str(info.value)
    with pytest.raises(toolbridge.UsageError) as info:
        await aconverse(toolbox, CES, ["hi"], {"token": "t"})
    assert "GOOGLE_CES_APP" in str(info.value) and "credentials" not in str(info.value)


async def test_app_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge_google_ces.backend as backend

    monkeypatch.setenv("GOOGLE_CES_APP", "projects/p/locations/us/apps/a")
    monkeypatch.setattr(backend, "_default_credentials", lambda: None)
    with pytest.raises(toolbridge.UsageError) as info:
        await aconverse(toolbox, CES, ["hi"])
    assert "GOOGLE_CES_APP" not in str(info.value) and "credentials" in str(info.value)
