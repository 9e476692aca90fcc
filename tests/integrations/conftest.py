"""The Temporal dev server the fleet's tests use (started by scripts/test or scripts/temporal)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

pytest.importorskip("temporalio")

from fleet_servers import temporal_address
from temporalio.client import Client


@pytest.fixture
async def temporal() -> AsyncIterator[Client]:
    yield await Client.connect(temporal_address())
