"""``toolbridge temporal dev``: the one command that gives a fresh machine a Temporal server."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys

import pytest
from fleet_servers import required

from toolbridge.cli._worker import temporal_binary
from toolbridge.errors import UsageError

required("temporalio")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_temporal_dev_serves_until_interrupted(stop: signal.Signals) -> None:
    """Ctrl-C or a TERM stops the server it started too (no orphan keeps the port)."""
    try:
        temporal_binary()
    except UsageError as exc:  # the temporal-dev extra (in dev) was not installed
        if os.environ.get("CI"):
            pytest.fail(str(exc))
        pytest.skip(str(exc))
    from temporalio.api.workflowservice.v1 import ListNamespacesRequest
    from temporalio.client import Client

    server = subprocess.Popen([sys.executable, "-m", "toolbridge", "temporal", "dev"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith("Temporal dev server on 127.0.0.1:"), first
        address = first.split(" on ", 1)[1].split(" ", 1)[0]

        async def namespaces() -> list[str]:
            client = await Client.connect(address)
            listed = await client.workflow_service.list_namespaces(ListNamespacesRequest())
            return [n.namespace_info.name for n in listed.namespaces]

        assert "default" in asyncio.run(namespaces())
        server.send_signal(stop)
        assert server.wait(30) == 0
        host, port = address.rsplit(":", 1)
        with pytest.raises(OSError), socket.create_connection((host, int(port)), timeout=5):
            pass  # its server stopped with it
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


def test_temporal_dev_refuses_a_port_that_is_none(capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.cli import main

    assert main(["temporal", "dev", "--port", "99999"]) == 2
    assert "port: 99999 is not a TCP port" in capsys.readouterr().err
