"""Emulators by dialect name, and the serve options that reach them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..plugin import Dialect, ServeOptions, capabilities, get_dialect

if TYPE_CHECKING:
    from .emulators import RunningEmulator

__all__ = ["emulated_options", "emulator"]


@contextmanager
def emulator(dialect: str | Dialect, *, tls: tuple[str, str] | None = None,
             **options: Any) -> Iterator[RunningEmulator]:
    """Start ``dialect``'s emulator on a free loopback port; yields a `RunningEmulator`.
    With ``tls`` (``(certificate file, key file)``, PEM) it serves HTTPS.

    ``options`` (``script``, ``faults``, dialect-specific ones) go to the emulator::

        with emulator("openai-agents", script={"turns": [...]}) as emu:
            client = OpenAI(base_url=emu.base_url + "/v1", api_key="test")
    """
    emu = capabilities().emulator(get_dialect(dialect).name).create(options)
    with emu.run(tls=tls) as running:
        yield running


def emulated_options(dialect: str | Dialect, base_url: str, **options: Any) -> ServeOptions:
    """``dialect``'s serve options for its emulator at ``base_url`` (dummy credentials where
    its client needs them), with more of its ``options`` (``model=...``)."""
    serve_options = capabilities().serving(get_dialect(dialect).name).options
    settings = serve_options.emulated(base_url)
    if options:
        settings = serve_options.parse({**settings.model_dump(exclude_unset=True), **options})
    return settings
