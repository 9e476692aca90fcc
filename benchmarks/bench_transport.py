"""What `exclusive_transport` buys over httpx's own async transport, on direct connections.

Two measurements, each for both transports in the same run, against a loopback HTTP/1.1
server in a child process (another core, as a real service is another machine):

- burst: REQUESTS requests started at once (a worker submitting for many conversations),
  each answered after a short think; the wall time and the latency percentiles per request
  (httpx's pool hands an idle connection to several queued requests, all but one go round
  again: encode/httpcore#1110);
- streams: STREAMS event streams held open at once; the Python memory (tracemalloc) per
  open stream, client side.

    .venv/bin/python benchmarks/bench_transport.py [requests] [streams]
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import statistics
import sys
import time
import tracemalloc
from multiprocessing.connection import Connection
from typing import Any

import httpx

from toolbridge.http import exclusive_transport

REQUESTS, STREAMS = 1000, 500
THINK = 0.005
"""Seconds the server takes per plain answer."""


class Answer(asyncio.Protocol):
    """``/stream`` sends one event and holds the stream open; anything else a small JSON
    answer after THINK seconds (keep-alive)."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport, self.pending = transport, b""

    def data_received(self, data: bytes) -> None:
        self.pending += data
        while b"\r\n\r\n" in self.pending:
            head, _, self.pending = self.pending.partition(b"\r\n\r\n")
            if b" /stream " in head.split(b"\r\n", 1)[0]:
                self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                     b"Transfer-Encoding: chunked\r\n\r\n"
                                     b"e\r\ndata: {\"a\":1}\n\n\r\n")
            else:
                asyncio.get_running_loop().call_later(THINK, self.answer)

    def answer(self) -> None:
        if not self.transport.is_closing():
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: 11\r\n\r\n{\"ok\":true}")


def serve(pipe: Connection) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(Answer, "127.0.0.1", 0,
                                                                backlog=4096)
        pipe.send(server.sockets[0].getsockname()[1])
        await asyncio.get_running_loop().run_in_executor(None, pipe.recv)
        server.close()

    asyncio.run(main())


def client(kind: str) -> httpx.AsyncClient:
    if kind == "exclusive":
        return httpx.AsyncClient(transport=exclusive_transport(keep=64), timeout=60)
    return httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=None,
                                                             max_keepalive_connections=64))


async def burst(kind: str, url: str, requests: int) -> dict[str, float]:
    async with client(kind) as http:
        await http.get(url)  # connect once
        latencies: list[float] = []

        async def one() -> None:
            start = time.perf_counter()
            (await http.get(url)).raise_for_status()
            latencies.append(time.perf_counter() - start)

        start = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(requests)))
        wall = time.perf_counter() - start
    cuts = statistics.quantiles(latencies, n=100)
    return {"wall_s": wall, "p50_ms": cuts[49] * 1000, "p99_ms": cuts[98] * 1000}


async def streams(kind: str, url: str, count: int) -> float:
    """Bytes of Python memory per open event stream (client, response, connection)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    http = client(kind) if kind == "exclusive" else httpx.AsyncClient(
        timeout=None, limits=httpx.Limits(max_connections=None))
    held: list[Any] = []
    for _ in range(count):
        response = await http.send(http.build_request("GET", url), stream=True)
        held.append(response)
    await asyncio.gather(*(r.aiter_raw().__anext__() for r in held))
    gc.collect()
    per = (tracemalloc.get_traced_memory()[0] - before) / count
    tracemalloc.stop()
    for response in held:
        await response.aclose()
    await http.aclose()
    return per


def main() -> None:
    requests = int(sys.argv[1]) if len(sys.argv) > 1 else REQUESTS
    count = int(sys.argv[2]) if len(sys.argv) > 2 else STREAMS
    here, there = multiprocessing.Pipe()
    server = multiprocessing.Process(target=serve, args=(there,), daemon=True)
    server.start()
    port = here.recv()
    base = f"http://127.0.0.1:{port}"
    try:
        bursts, memory = {}, {}
        for kind in ("httpx", "exclusive"):
            result = bursts[kind] = asyncio.run(burst(kind, base + "/answer", requests))
            print(f"burst   {kind:9} {requests} requests: wall {result['wall_s']:.2f} s, "
                  f"p50 {result['p50_ms']:.1f} ms, p99 {result['p99_ms']:.1f} ms")
        for kind in ("httpx", "exclusive"):
            per = memory[kind] = asyncio.run(streams(kind, base + "/stream", count))
            print(f"streams {kind:9} {count} open: {per / 1024:.1f} KB per stream")
        print(f"ratio httpx/exclusive: wall "
              f"{bursts['httpx']['wall_s'] / bursts['exclusive']['wall_s']:.2f}x, p99 "
              f"{bursts['httpx']['p99_ms'] / bursts['exclusive']['p99_ms']:.2f}x, memory per "
              f"stream {memory['httpx'] / memory['exclusive']:.2f}x")
    finally:
        here.send("stop")
        server.join(timeout=10)


if __name__ == "__main__":
    main()
