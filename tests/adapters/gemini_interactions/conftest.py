from __future__ import annotations

import pytest
from interactions_support import weather_toolbox

import toolbridge


@pytest.fixture
def toolbox() -> toolbridge.Toolbox:
    return weather_toolbox()
