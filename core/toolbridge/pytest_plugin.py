"""The ``toolbridge_emulator`` pytest fixture, registered through the ``pytest11`` entry point."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .testing import RunningEmulator

__all__ = ["toolbridge_emulator"]


@pytest.fixture
def toolbridge_emulator() -> Iterator[Callable[..., RunningEmulator]]:
    """A factory: ``toolbridge_emulator(dialect, script=..., faults=...)`` -> `RunningEmulator`.

    Every emulator it started is stopped after the test. Pass one to
    `toolbridge.testing.converse` (``running=``) to hold a conversation on it and then read
    its journal.
    """
    from .testing import emulator

    with contextlib.ExitStack() as stack:

        def start(dialect: str, **options: Any) -> RunningEmulator:
            running: RunningEmulator = stack.enter_context(emulator(dialect, **options))
            return running

        yield start
