"""The gemini clients against the emulator: the key in a header, streams assembled, a stream
that breaks off sent again (bounded), and the API's errors as typed `BackendError`s."""

from __future__ import annotations

import pytest
from gemini_support import D

from toolbridge import BackendError
from toolbridge.http import RetryPolicy
from toolbridge.testing import emulator
from toolbridge_gemini import AsyncGeminiClient, GeminiClient

FAST = RetryPolicy(max_attempts=3, backoff=0.001, max_delay=0.01)
HELLO = [{"role": "user", "parts": [{"text": "hello there"}]}]


def test_a_stream_is_assembled_into_one_response() -> None:
    with emulator(D, faults={"drop_stream_after": 2}) as emu:  # cut after the last chunk
        with GeminiClient(base_url=emu.base_url, api_key="k", retry=FAST) as client:
            seen: list[dict[str, object]] = []
            response = client.stream_response("gemini-2.5-flash", contents=HELLO,
                                              on_chunk=seen.append)
            chunks = list(client.stream("gemini-2.5-flash", contents=HELLO))
    assert len(seen) == 2 and len(chunks) == 2
    candidate = response["candidates"][0]
    assert candidate["content"] == {"role": "model", "parts": [{"text": "hello there"}]}
    assert candidate["finishReason"] == "STOP" and response["responseId"]


async def test_a_stream_that_breaks_off_is_sent_again_then_given_up() -> None:
    with emulator(D, faults={"drop_stream_after": 1}) as emu:  # never reaches finishReason
        async with AsyncGeminiClient(base_url=emu.base_url, api_key="k", retry=FAST) as client:
            with pytest.raises(BackendError, match="broke off 3 times"):
                await client.stream_response("gemini-2.5-flash", contents=HELLO)
        assert len(emu.journal.entries(contains="streamGenerateContent")) == 3
        assert emu.journal.entries()[0].headers["x-goog-api-key"] == "<redacted>"


def test_api_errors_are_backend_errors_with_the_status() -> None:
    with emulator(D) as emu:
        with GeminiClient(base_url=emu.base_url, api_key="secret-key-123", retry=FAST) as client:
            with pytest.raises(BackendError) as caught:
                client.generate("gemini-2.5-flash", contents=[])
    assert caught.value.status == 400 and "contents is not specified" in str(caught.value)
    assert "secret-key-123" not in repr(client) + str(caught.value) + repr(caught.value)
