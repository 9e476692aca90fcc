"""Owner ids of store claims, and whether the worker behind one may still be running it.

An owner is ``host:pid:start:token:n``: ``start`` is the process's start time as the kernel
counts it (``/proc/<pid>/stat``, field 22; empty where there is no ``/proc``), so a pid the
system gave to a new process no longer matches; the token tells a forked child from its
parent, ``n`` counts the claims of that process. Owners written before the start time was
recorded (``host:pid:token:n``) are checked by pid alone.
"""

from __future__ import annotations

import itertools
import os
import socket
import uuid
from typing import Any

__all__ = ["end_owner", "new_owner", "owner_alive", "process_start"]

_HOST = socket.gethostname()
_IN_FLIGHT: set[str] = set()  # set.add / discard / `in` are atomic under the GIL


def process_start(pid: int) -> tuple[str, str] | None:
    """``(state, start time)`` of process ``pid`` from ``/proc``; ``None`` if it has no entry
    (gone), ``("", "")`` where ``/proc`` is not available."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except FileNotFoundError:
        return None if os.path.isdir("/proc/self") else ("", "")
    except OSError:
        return ("", "")
    fields = text.rpartition(")")[2].split()  # the command name may hold spaces and ")"
    if len(fields) < 20:
        return ("", "")
    return fields[0], fields[19]  # state (field 3), starttime (field 22)


def _identity() -> list[Any]:
    pid, token = os.getpid(), uuid.uuid4().hex[:12]
    found = process_start(pid)
    start = found[1] if found else ""
    return [pid, token, itertools.count(), f"{_HOST}:{pid}:{start}:{token}:"]


_PROCESS: list[Any] = _identity()  # pid, token, claim counter, owner prefix


def _forked() -> None:
    _PROCESS[:] = _identity()


_AT_FORK = hasattr(os, "register_at_fork")
if _AT_FORK:  # a forked child gets a new identity before any claim
    os.register_at_fork(after_in_child=_forked)


def _current() -> list[Any]:
    if not _AT_FORK and _PROCESS[0] != os.getpid():  # forked without the hook: a new identity
        _PROCESS[:] = _identity()
    return _PROCESS


def process_id() -> int:
    """This process's pid, without a system call where a fork hook keeps it (a connection
    made before a fork is never used after it)."""
    pid: int = _current()[0]
    return pid


def new_owner() -> str:
    """A fresh owner id for one claim of this process, registered as in flight."""
    process = _current()
    owner: str = process[3] + str(next(process[2]))
    _IN_FLIGHT.add(owner)
    return owner


def end_owner(owner: str) -> None:
    """The claim ``owner`` is no longer being run by this process."""
    _IN_FLIGHT.discard(owner)


def owner_alive(owner: str) -> bool:
    """Whether the worker behind ``owner`` may still be running its call.

    Claims of this process are alive while in flight; another process of this machine while
    a process with its pid and start time runs (a zombie, exited but not yet reaped, is dead);
    owners on other machines are assumed alive.
    """
    parts = owner.split(":")
    if parts[0] != _HOST or len(parts) < 4:
        return True
    pid_text = parts[1]
    start, token = (parts[2], parts[3]) if len(parts) >= 5 else (None, parts[2])
    me = _current()
    if pid_text == str(me[0]):
        return token == me[1] and owner in _IN_FLIGHT
    try:
        pid = int(pid_text)
    except ValueError:
        return True
    found = process_start(pid)
    if found is None:
        return False
    state, started = found
    if not state:  # no /proc: whether the pid exists is all there is to know
        return _pid_exists(pid)
    if state in ("Z", "X"):
        return False
    return not start or start == started


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True
