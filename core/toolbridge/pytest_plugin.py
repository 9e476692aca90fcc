"""The ``toolbridge_emulator`` pytest fixture, registered through the ``pytest11`` entry point."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

__all__ = ["toolbridge_emulator"]


@pytest.fixture
def toolbridge_emulator() -> Iterator[Callable[..., Any]]:
    """A factory: ``toolbridge_emulator(dialect, script=..., faults=...)`` -> `RunningEmulator`.

    Every emulator it started is stopped after the test.
    """
    from .testing import emulator

    with contextlib.ExitStack() as stack:

        def start(dialect: str, **options: Any) -> Any:
            return stack.enter_context(emulator(dialect, **options))

        yield start
