"""`Emulator`: the base every dialect's emulated backend builds on."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ._faults import Faults, faults_from
from ._journal import Intake, Journal
from ._script import Script
from ._server import ASGIApp, RunningEmulator, instrument, run_app

if TYPE_CHECKING:
    from typing_extensions import Self

__all__ = ["Emulator"]


class Emulator(abc.ABC):
    """A vendor service on loopback: strict like the real one, playing a scripted model.

    Subclasses build the dialect's ASGI app in `build_app` and give the vendor's error shape in
    `error_body`; this base adds the journal, latency and failed-request faults, and serving.
    """

    dialect: ClassVar[str]
    faults_type: ClassVar[type[Faults]] = Faults
    """The faults this emulator offers: `Faults`, `StreamFaults` or its own subclass (a fault
    it does not declare is refused, listing the valid ones)."""

    def __init__(
        self,
        *,
        script: Script | Mapping[str, Any] | str | Path | None = None,
        faults: Faults | Mapping[str, Any] | None = None,
    ) -> None:
        self.script = Script.load(script)
        self.faults = faults_from(faults, self.faults_type, self.dialect)
        self.journal = Journal()
        self.intake = Intake(lambda: len(self.journal))
        """What the service took (user messages, results), filled where it accepts them."""

    @classmethod
    def from_options(cls, options: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Self:
        """The emulator made with each option (an `EmulatorOptions`' fields) as the keyword of
        its name: what ``Emulates(..., "package.emulator:MyEmulator.from_options")`` creates."""
        return cls(**dict(options))

    def messages_received(self) -> dict[str, list[str]]:
        """The user messages the service stored, in order, per conversation (its id): what
        it received whatever happened to the replies; the same record on every dialect."""
        return self.intake.messages()

    def results_received(self) -> list[str]:
        """The call ids whose results the service accepted, in order (twice if twice)."""
        return self.intake.results()

    @abc.abstractmethod
    def build_app(self) -> ASGIApp:
        """The dialect's routes as an ASGI app (e.g. a Starlette application)."""

    def error_body(self, status: int, message: str) -> Any:
        """The vendor's JSON error body for ``status``."""
        return {"error": {"code": status, "message": message}}

    @cached_property
    def app(self) -> ASGIApp:
        """The instrumented ASGI app, to mount in any ASGI server."""
        return instrument(self.build_app(), self.journal, self.faults, self.error_body)

    @contextmanager
    def run(self, host: str = "127.0.0.1", port: int = 0,
            tls: tuple[str, str] | None = None) -> Iterator[RunningEmulator]:
        """Serve on loopback (a free port by default) for the duration of the block; over
        HTTPS with ``tls``, ``(certificate file, key file)`` (PEM)."""
        with run_app(self.app, self, self.journal, host, port, tls) as running:
            yield running
