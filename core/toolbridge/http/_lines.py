"""An event stream's lines, split here from the body's chunks (sync and async).

httpx's ``iter_lines`` stacks four generators and two decoders per open stream, all suspended
while the stream waits; these read the raw chunks (the decoded ones when the body is
content-encoded) and keep only the bytes of an unfinished line between two reads.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx

__all__ = ["aiter_lines", "iter_lines"]


def _split(pending: bytes, chunk: bytes) -> tuple[list[str], bytes]:
    """The whole lines of ``pending + chunk``, last first (CR, LF or CRLF ends one; a CR at
    the end waits for the next chunk, which may bring its LF), and the bytes left over."""
    lines = (pending + chunk).splitlines(keepends=True)
    rest = lines.pop() if lines and not lines[-1].endswith(b"\n") else b""
    return [_text(line) for line in reversed(lines)], rest


def _text(line: bytes) -> str:
    return line.rstrip(b"\r\n").decode("utf-8", "replace")


def _decoded(response: httpx.Response) -> bool:
    """Whether to read the decoded chunks: the body is content-encoded, or it was read already
    (a response made with its whole content, as test transports make them: its raw stream is
    consumed, its content is served as is)."""
    return response.is_stream_consumed or response.headers.get(
        "content-encoding", "identity").strip().lower() not in ("", "identity")


def iter_lines(response: httpx.Response) -> Iterator[str]:
    """The lines of ``response``'s body, without their line ends."""
    chunks = response.iter_bytes() if _decoded(response) else response.iter_raw()
    pending = b""
    for chunk in chunks:
        lines, pending = _split(pending, chunk)
        while lines:
            yield lines.pop()
    if pending:
        yield _text(pending)


async def aiter_lines(response: httpx.Response) -> AsyncIterator[str]:
    """Async form of `iter_lines`; nothing read is kept while the next chunk is awaited
    but the bytes of an unfinished line."""
    chunks = response.aiter_bytes() if _decoded(response) else response.aiter_raw()
    pending = b""
    while True:
        try:
            chunk = await chunks.__anext__()
        except StopAsyncIteration:
            break
        lines, pending = _split(pending, chunk)
        chunk = b""
        while lines:
            yield lines.pop()
    if pending:
        yield _text(pending)
