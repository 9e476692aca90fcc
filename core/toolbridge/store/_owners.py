"""Owner ids of store claims, and whether the worker behind one may still be running it.

An owner is ``host:pid:token:n``: the token tells a recycled pid (or a forked child) from the
process that made the claim, ``n`` counts the claims of that process.
"""

from __future__ import annotations

import itertools
import os
import socket
import uuid
from typing import Any

__all__ = ["end_owner", "new_owner", "owner_alive"]

_HOST = socket.gethostname()
_IN_FLIGHT: set[str] = set()  # set.add / discard / `in` are atomic under the GIL


def _identity() -> list[Any]:
    pid, token = os.getpid(), uuid.uuid4().hex[:12]
    return [pid, token, itertools.count(), f"{_HOST}:{pid}:{token}:"]


_PROCESS: list[Any] = _identity()  # pid, token, claim counter, owner prefix


def _forked() -> None:
    _PROCESS[:] = _identity()


if hasattr(os, "register_at_fork"):  # a forked child gets a new identity before any claim
    os.register_at_fork(after_in_child=_forked)


def _process_token() -> str:
    if _PROCESS[0] != os.getpid():  # forked without the hook: a new process, a new identity
        _PROCESS[:] = _identity()
    return f"{_HOST}:{_PROCESS[0]}:{_PROCESS[1]}"


def new_owner() -> str:
    """A fresh owner id for one claim of this process, registered as in flight."""
    owner = f"{_PROCESS[3]}{next(_PROCESS[2])}"
    _IN_FLIGHT.add(owner)
    return owner


def end_owner(owner: str) -> None:
    """The claim ``owner`` is no longer being run by this process."""
    _IN_FLIGHT.discard(owner)


def owner_alive(owner: str) -> bool:
    """Whether the worker behind ``owner`` may still be running its call.

    Claims of this process are alive while in flight; other processes on this machine while
    their pid exists; other machines are assumed alive.
    """
    host, _, rest = owner.partition(":")
    pid_text, _, rest = rest.partition(":")
    token = rest.partition(":")[0]
    if host != _HOST:
        return True
    mine = _process_token().split(":")
    if pid_text == mine[1]:
        return token == mine[2] and owner in _IN_FLIGHT
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError, OSError):
        return True
    return True
