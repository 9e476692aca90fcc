"""The conformance kit (`toolbridge.testing`), run on every installed dialect that serves and
is emulated: the list comes from the registry, so a new dialect is checked with no edit here."""

from __future__ import annotations

import pytest

from toolbridge.testing import acheck_backend, installed_dialects


@pytest.mark.parametrize("dialect", installed_dialects())
async def test_backend_kit(dialect: str) -> None:
    await acheck_backend(dialect)
