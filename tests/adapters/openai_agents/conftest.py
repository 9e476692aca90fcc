from __future__ import annotations

import pytest
import toolbridge
from agents_support import weather_toolbox


@pytest.fixture
def toolbox() -> toolbridge.Toolbox:
    return weather_toolbox()
