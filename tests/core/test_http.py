"""Retries honouring Retry-After, and secrets that never show."""

from __future__ import annotations

import pickle
import time
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from toolbridge import BackendError
from toolbridge.http import (
    RetryPolicy,
    Secret,
    asend_with_retries,
    raise_for_backend,
    send_with_retries,
)
from toolbridge.testing.emulators import Emulator


class Ok(Emulator):
    dialect = "ok"

    def build_app(self) -> Any:
        async def ok(request: Any) -> JSONResponse:
            return JSONResponse({"ok": True})

        return Starlette(routes=[Route("/ok", ok, methods=["GET", "POST"])])


FAST = RetryPolicy(backoff=0.01, max_attempts=3)


def test_retries_429_and_5xx_then_succeeds() -> None:
    faults = {"fail_requests": [{"nth": 1, "status": 503}, {"nth": 2, "status": 429,
                                                             "retry_after": 0.2}]}
    with Ok(faults=faults).run() as emu, httpx.Client() as client:
        started = time.perf_counter()
        response = send_with_retries(client, client.build_request("GET", emu.url("/ok")), FAST)
        assert response.json() == {"ok": True}
        assert time.perf_counter() - started >= 0.2  # honoured Retry-After
        assert len(emu.journal) == 3


def test_retries_are_bounded_and_the_last_answer_is_returned() -> None:
    faults = {"fail_requests": [{"nth": n, "status": 500} for n in (1, 2, 3)]}
    with Ok(faults=faults).run() as emu, httpx.Client() as client:
        response = send_with_retries(client, client.build_request("GET", emu.url("/ok")), FAST)
        assert response.status_code == 500 and len(emu.journal) == 3
        with pytest.raises(BackendError) as info:
            raise_for_backend(response, "GET /ok")
        assert info.value.status == 500 and "injected failure" in str(info.value)


async def test_async_form_and_custom_retry_condition() -> None:
    faults = {"fail_requests": [{"nth": 1, "status": 502}]}
    with Ok(faults=faults).run() as emu:
        async with httpx.AsyncClient() as client:
            response = await asend_with_retries(
                client, client.build_request("GET", emu.url("/ok")), FAST)
            assert response.status_code == 200


async def test_streamed_requests_retry_and_name_what_failed() -> None:
    """``stream=True``: a retryable answer is retried, the last one is left open to read; a
    transport error names the request as ``what`` says."""
    faults = {"fail_requests": [{"nth": 1, "status": 503}]}
    with Ok(faults=faults).run() as emu, httpx.Client() as client:
        response = send_with_retries(client, client.build_request("GET", emu.url("/ok")), FAST,
                                     stream=True)
        assert not response.is_closed and response.status_code == 200
        assert response.read() == b'{"ok":true}' and len(emu.journal) == 2
        response.close()
    with Ok(faults=faults).run() as emu:
        async with httpx.AsyncClient() as aclient:
            aresponse = await asend_with_retries(
                aclient, aclient.build_request("GET", emu.url("/ok")), FAST, stream=True)
            assert aresponse.status_code == 200 and await aresponse.aread() == b'{"ok":true}'
            await aresponse.aclose()
    with httpx.Client() as client, pytest.raises(BackendError, match=r"^my stream: "):
        send_with_retries(client, client.build_request("GET", "http://127.0.0.1:9/x"),
                          RetryPolicy(backoff=0.001, max_attempts=2), stream=True,
                          what="my stream")


def test_transport_errors_become_backend_errors() -> None:
    with httpx.Client() as client, pytest.raises(BackendError, match="GET /nothing"):
        send_with_retries(client, client.build_request("GET", "http://127.0.0.1:9/nothing"),
                          RetryPolicy(backoff=0.001, max_attempts=2))


def test_secret_never_shows() -> None:
    secret = Secret("sk-live-123")
    assert "sk-live" not in repr(secret) and "sk-live" not in str(secret)
    assert "sk-live" not in f"{secret} {[secret]} {dict(k=secret)}"
    assert secret.get() == "sk-live-123"
    with pytest.raises(TypeError):
        pickle.dumps(secret)


@pytest.mark.parametrize("headers, expected", [
    ({"retry-after": "soon"}, None),
    ({"retry-after": "nan"}, None),
    ({"retry-after": "inf"}, None),
    ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
    ({"retry-after-ms": "250"}, 0.25),
    ({"retry-after": "-3"}, 0.0),
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
])
def test_retry_after_parsing_never_crashes(headers: dict[str, str], expected: Any) -> None:
    response = httpx.Response(429, headers=headers)
    delay = RetryPolicy(backoff=0.5, max_delay=10).delay(1, response)
    if expected is None:
        assert 0.3 <= delay <= 0.7  # ignored: our own backoff
    else:
        assert delay == expected


def test_secret_survives_copies() -> None:
    import copy

    secret = Secret("k")
    config = {"key": secret}
    assert copy.deepcopy(config)["key"].get() == "k" and copy.copy(secret) is secret


def test_non_idempotent_requests_retry_only_errors_before_sending() -> None:
    attempts: list[str] = []

    def failing(kind: type[Exception]) -> httpx.MockTransport:
        def handler(request: httpx.Request) -> httpx.Response:
            attempts.append(kind.__name__)
            raise kind("boom", request=request)  # type: ignore[call-arg]
        return httpx.MockTransport(handler)

    policy = RetryPolicy(backoff=0.001, max_attempts=3)
    with httpx.Client(transport=failing(httpx.ReadError)) as client:
        with pytest.raises(BackendError, match="not retried: the server may have acted on it"):
            send_with_retries(client, client.build_request("POST", "http://x/turn"), policy,
                              idempotent=False)
    assert attempts == ["ReadError"]
    attempts.clear()
    with httpx.Client(transport=failing(httpx.ConnectError)) as client:
        with pytest.raises(BackendError):
            send_with_retries(client, client.build_request("POST", "http://x/turn"), policy,
                              idempotent=False)
    assert attempts == ["ConnectError"] * 3


def test_non_idempotent_requests_retry_only_answers_that_say_nothing_was_done() -> None:
    statuses: list[int] = []
    answers = iter([429, 500])

    def handler(request: httpx.Request) -> httpx.Response:
        statuses.append(next(answers))
        return httpx.Response(statuses[-1], headers={"retry-after": "0"})

    policy = RetryPolicy(backoff=0.001, max_attempts=4)
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        answer = send_with_retries(client, client.build_request("POST", "http://x/turn"),
                                   policy, idempotent=False)
    assert answer.status_code == 429 and statuses == [429]  # it goes to the caller
    answers = iter([429, 500])
    statuses.clear()
    promised = RetryPolicy(backoff=0.001, max_attempts=4, refused_statuses=frozenset({429}))
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        answer = send_with_retries(client, client.build_request("POST", "http://x/turn"),
                                   promised, idempotent=False)
    assert answer.status_code == 500 and statuses == [429, 500]  # a 500 goes to the caller
    answers = iter([500, 200])
    statuses.clear()
    with httpx.Client(transport=httpx.MockTransport(handler)) as client:
        answer = send_with_retries(client, client.build_request("PUT", "http://x/a"), policy)
    assert answer.status_code == 200 and statuses == [500, 200]  # idempotent: retried


def test_sse_decoder_frames() -> None:
    from toolbridge.http import SSEDecoder

    decoder = SSEDecoder()
    lines = [": keep-alive", "event: thread.run.completed", "data: {\"a\":", "data:1}", "",
             "", "retry: 10", "data: [DONE]", ""]
    frames = [f for f in map(decoder.feed, lines) if f is not None]
    assert frames == [("thread.run.completed", '{"a":\n1}'), ("", "[DONE]")]
