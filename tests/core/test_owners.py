"""Owner liveness that pid reuse cannot fool: the pid and the process's start time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from toolbridge.store import end_owner, new_owner, owner_alive
from toolbridge.store._owners import process_start

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs /proc")
HOST = socket.gethostname()


def test_an_owner_names_this_process_and_its_start_time() -> None:
    owner = new_owner()
    host, pid, start, token, count = owner.split(":")
    found = process_start(os.getpid())
    assert found is not None
    assert (host, pid, start) == (HOST, str(os.getpid()), found[1]) and token and count
    assert owner_alive(owner)
    end_owner(owner)
    assert not owner_alive(owner)


def test_a_live_pid_with_another_start_time_is_dead() -> None:
    """The pid was given to a new process: the worker that made the claim is gone."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        found = process_start(child.pid)
        assert found is not None
        start = found[1]
        assert owner_alive(f"{HOST}:{child.pid}:{start}:abcdef:0")
        assert not owner_alive(f"{HOST}:{child.pid}:{int(start) + 1}:abcdef:0")
        assert owner_alive(f"{HOST}:{child.pid}:abcdef:0")  # the old form: by pid alone
    finally:
        child.kill()
        child.wait()
    assert not owner_alive(f"{HOST}:{child.pid}:{start}:abcdef:0")  # and now gone


def test_an_unreaped_zombie_is_dead() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        found = process_start(child.pid)
        deadline = time.monotonic() + 20
        while found is not None and found[0] != "Z":  # exited, not yet waited for
            assert time.monotonic() < deadline, "the child never exited"
            time.sleep(0.01)
            found = process_start(child.pid)
        assert found is not None and found[0] == "Z"
        assert not owner_alive(f"{HOST}:{child.pid}:{found[1]}:abcdef:0")
    finally:
        child.wait()


def test_owners_elsewhere_are_assumed_alive_and_garbage_is_not_dead() -> None:
    assert owner_alive("another-machine:1:2:abc:0")
    assert owner_alive(f"{HOST}:not-a-pid:1:abc:0")
