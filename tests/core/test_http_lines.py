"""`toolbridge.http`'s event-stream line reader: lines split from the body's chunks."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator, Iterator

import httpx

from toolbridge.http import JsonEvents, aread_events, read_events
from toolbridge.http._lines import aiter_lines, iter_lines

BODY = b'data: {"a": 1}\r\n\r\ndata: {"b": "\xc3\xa9"}\n\n: comment\rdata: {"c": 3}\r\rtail'
LINES = ['data: {"a": 1}', "", 'data: {"b": "\u00e9"}', "", ": comment", 'data: {"c": 3}', "",
         "tail"]


class Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body sent in the given chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Iterator[bytes]:
        yield from self.chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


def splits(body: bytes) -> list[list[bytes]]:
    """``body`` whole, byte by byte, and cut in two at every place."""
    return [[body], [body[i:i + 1] for i in range(len(body))],
            *([body[:i], body[i:]] for i in range(1, len(body)))]


def test_lines_are_the_same_wherever_the_chunks_are_cut() -> None:
    for chunks in splits(BODY):
        response = httpx.Response(200, stream=Chunks(chunks))
        assert list(iter_lines(response)) == LINES, chunks


async def test_async_lines_are_the_same_wherever_the_chunks_are_cut() -> None:
    for chunks in splits(BODY):
        response = httpx.Response(200, stream=Chunks(chunks))
        assert [line async for line in aiter_lines(response)] == LINES, chunks


async def test_a_content_encoded_body_is_decoded_before_it_is_split() -> None:
    packed = gzip.compress(BODY)
    headers = {"content-encoding": "gzip"}
    response = httpx.Response(200, headers=headers, stream=Chunks([packed[:7], packed[7:]]))
    assert [line async for line in aiter_lines(response)] == LINES
    response = httpx.Response(200, headers=headers, stream=Chunks([packed]))
    assert list(iter_lines(response)) == LINES


async def test_events_read_from_split_lines() -> None:
    body = b'data: {"n": 1}\n\nevent: x\ndata: {"n": 2}\r\n\r\n'
    chunks = [body[i:i + 3] for i in range(0, len(body), 3)]
    events = list(read_events(httpx.Response(200, stream=Chunks(chunks)), JsonEvents("d")))
    assert events == [{"n": 1}, {"n": 2}]
    response = httpx.Response(200, stream=Chunks(chunks))
    assert [e async for e in aread_events(response, JsonEvents("d"))] == [{"n": 1}, {"n": 2}]


async def test_a_body_read_already_is_split_from_its_content() -> None:
    """A response made with its whole content (httpx reads it at once: its raw stream is
    consumed, as a test transport's answers are) gives its lines all the same."""
    body = b"data: 1\r\n\r\ndata: 2\n\n"
    assert list(iter_lines(httpx.Response(200, content=body))) == [
        "data: 1", "", "data: 2", ""]
    assert [line async for line in aiter_lines(httpx.Response(200, content=body))] == [
        "data: 1", "", "data: 2", ""]
