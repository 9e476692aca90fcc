"""`toolbridge.http.exclusive_transport`: a connection per request in flight, none raced for."""

from __future__ import annotations

import asyncio
import contextlib

import httpx

from toolbridge.http import exclusive_transport
from toolbridge.testing import emulator


async def test_concurrent_requests_each_get_a_connection_and_idle_ones_are_reused() -> None:
    with emulator("openai-agents") as emu:
        transport = exclusive_transport(keep=4)
        async with httpx.AsyncClient(transport=transport) as client:
            url = emu.base_url + "/v1/agents/sessions"
            answers = await asyncio.gather(*(client.get(url) for _ in range(30)))
            assert all(a.status_code == 200 for a in answers)
            assert "4 idle" in repr(transport)  # 30 at once, 4 kept
            again = await asyncio.gather(*(client.get(url) for _ in range(3)))
            assert all(a.status_code == 200 for a in again)
        assert "0 idle" in repr(transport)  # closed with the client


async def test_streams_keep_no_connection_and_errors_free_theirs() -> None:
    with emulator("openai-agents") as emu:
        transport = exclusive_transport(keep=0)
        async with httpx.AsyncClient(transport=transport) as client:
            async with client.stream("GET", emu.base_url + "/v1/agents/sessions") as response:
                assert response.status_code == 200
                await response.aread()
            assert "0 idle" in repr(transport)
            with contextlib.suppress(httpx.ConnectError):
                await client.get("http://127.0.0.1:9/")  # nothing listens there
            assert "0 idle" in repr(transport)
