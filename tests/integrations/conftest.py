"""The Temporal dev server the fleet's tests use (started by scripts/test or scripts/temporal)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from fleet_servers import required, temporal_address

required("temporalio")

from temporalio.client import Client  # noqa: E402 (after the check above)


@pytest.fixture
async def temporal() -> AsyncIterator[Client]:
    yield await Client.connect(temporal_address())
