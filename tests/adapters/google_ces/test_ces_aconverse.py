"""``aconverse`` of google-ces on the real service: what is missing is named."""

from __future__ import annotations

import pytest

import toolbridge
from toolbridge.examples import toolbox

CES = toolbridge.get_dialect("google-ces")


@pytest.fixture(autouse=True)
def _no_app(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOOGLE_CES_APP", "TOOLBRIDGE_GOOGLE_CES_APP"):
        monkeypatch.delenv(name, raising=False)


async def test_missing_app_is_named_before_any_network_call(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge_google_ces.converse as converse

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError("looked for credentials or opened a session without an app")

    monkeypatch.setattr(converse, "_default_credentials", no_network)
    monkeypatch.setattr(converse, "arun_conversation", no_network)
    with pytest.raises(toolbridge.UsageError) as info:
        await CES.aconverse(toolbox, ["hi"], base_url=None)
    assert "GOOGLE_CES_APP" in str(info.value) and "credentials" in str(info.value)
    with pytest.raises(toolbridge.UsageError) as info:
        await CES.aconverse(toolbox, ["hi"], base_url=None, api_key="t")
    assert "GOOGLE_CES_APP" in str(info.value) and "credentials" not in str(info.value)


async def test_app_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolbridge_google_ces.converse as converse

    monkeypatch.setenv("GOOGLE_CES_APP", "projects/p/locations/us/apps/a")
    monkeypatch.setattr(converse, "_default_credentials", lambda: None)
    with pytest.raises(toolbridge.UsageError) as info:
        await CES.aconverse(toolbox, ["hi"])
    assert "GOOGLE_CES_APP" not in str(info.value) and "credentials" in str(info.value)
