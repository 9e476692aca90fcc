"""Secrets stay secret: known keys, tokens and passwords configured into every client and store
never show in logs, reprs, messages, exception chains or the results a model sees.

Each case configures a real client (through the dialect's serve options, as users do) with a
fresh secret, turns every logger to DEBUG and provokes a failure over real loopback HTTP: 401,
429 and 500 answers, a server that never answers (timeout), a closed port. Then every object
the user can get hold of is searched: the exception and everything reachable from it
(``args``, attributes, ``__cause__``, ``__context__``, recursively), the transcript, the log
records. Tracebacks' frames are not searched: a frame's locals hold the client's own
configuration by necessity.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import logging
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from toolbridge import BackendError, Toolbox, ToolbridgeError, get_dialect
from toolbridge.http import RetryPolicy, redact_text, redact_url
from toolbridge.plugin import capabilities
from toolbridge.store import open_store
from toolbridge.testing import emulated_options, emulator, installed_dialects

FAST = RetryPolicy(max_attempts=2, backoff=0.01, max_delay=0.05)
TIMEOUT = 0.5
"""The clients' timeout against a server that answers."""
HANG_TIMEOUT, HANG = 0.2, 0.5
"""Against the hanging server: the clients give up after 0.2 s; it drops the connection after
0.5 s (what a client without a read timeout, an event stream, sees)."""
DIALECTS = installed_dialects()


def _secret() -> str:
    return f"sk-test-{uuid.uuid4().hex}"


# ------------------------------------------------------------------ searching for a secret
def _leaks(root: Any, secret: str) -> list[str]:
    """Paths from ``root`` to every text holding ``secret`` (attributes, items, chains)."""
    found: list[str] = []
    seen: set[int] = set()

    def visit(value: Any, path: str, depth: int) -> None:
        if depth > 12 or id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, (str, bytes, bytearray)):
            text = value if isinstance(value, str) else bytes(value).decode("latin-1")
            if secret in text:
                found.append(path)
            return
        if isinstance(value, (int, float, bool, type(None), type, type(len))):
            return
        if isinstance(value, (type(visit.__code__), type(_leaks), type(time))):
            return
        try:
            text = repr(value)
        except Exception:
            text = ""
        if secret in text:
            found.append(f"repr({path})")
        if isinstance(value, BaseException):
            if secret in str(value):
                found.append(f"str({path})")
            visit(value.args, f"{path}.args", depth + 1)
            visit(value.__cause__, f"{path}.__cause__", depth + 1)
            visit(value.__context__, f"{path}.__context__", depth + 1)
        if isinstance(value, dict):
            for key, item in list(value.items()):
                visit(key, f"{path}[key]", depth + 1)
                visit(item, f"{path}[{key!r}]", depth + 1)
            return
        if isinstance(value, (list, tuple, set, frozenset)):
            for index, item in enumerate(list(value)):
                visit(item, f"{path}[{index}]", depth + 1)
            return
        if hasattr(value, "__traceback__") and not isinstance(value, BaseException):
            return
        attributes = dict(getattr(value, "__dict__", {}) or {})
        for cls in type(value).__mro__:
            for slot in getattr(cls, "__slots__", ()):
                if isinstance(slot, str) and slot != "_value" and hasattr(value, slot):
                    attributes[slot] = getattr(value, slot)
        for name, item in attributes.items():
            if name in ("__traceback__", "gi_frame", "cr_frame", "f_locals"):
                continue
            visit(item, f"{path}.{name}", depth + 1)

    visit(root, "error", 0)
    return found


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """Every logger at DEBUG, captured."""
    loggers = [logging.getLogger()] + [logging.getLogger(n) for n in
                                      list(logging.root.manager.loggerDict)]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    try:
        yield caplog
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _assert_no_leak(secret: str, logs: pytest.LogCaptureFixture, *objects: Any) -> None:
    leaks = [path for obj in objects for path in _leaks(obj, secret)]
    leaks += [f"log {r.name}: {r.getMessage()[:300]}" for r in logs.records
              if secret in r.getMessage()]
    leaks += [f"log output: ...{logs.text[max(0, i - 200):i + 50]}" for i in
              [logs.text.find(secret)] if i >= 0]
    assert not leaks, "the secret shows in:\n" + "\n".join(leaks[:20])


# ------------------------------------------------------------------ a hostile server
class _Hostile(http.server.BaseHTTPRequestHandler):
    """Answers every request with the mode in the server's ``mode``: 401, 429, 500, or hangs."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length:
            self.rfile.read(length)
        mode = self.server.mode  # type: ignore[attr-defined]
        if mode == "hang":  # a timeout for clients with a short one, else a dropped connection
            time.sleep(HANG)
            self.close_connection = True
            return
        body = json.dumps({"error": {"message": f"mode {mode}", "type": "test",
                                     "code": mode, "status": "UNAUTHENTICATED"}}).encode()
        self.send_response(int(mode))
        self.send_header("content-type", "application/json")
        self.send_header("retry-after", "0")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _answer

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def _hostile(mode: str) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    server.mode = mode  # type: ignore[attr-defined]
    server.daemon_threads = True
    # shutdown() waits for serve_forever to look again: every 0.5 s by default.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _closed_port() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# ------------------------------------------------------------------ clients with secrets
class _Credential:
    """An azure-core-style TokenCredential handing out ``token``."""

    def __init__(self, token: str) -> None:
        self._token = token

    def get_token(self, *scopes: str, **kwargs: Any) -> Any:
        return type("AccessToken", (), {"token": self._token,
                                        "expires_on": int(time.time()) + 3600})()


def _options(dialect: str, variant: str, base_url: str, secret: str,
             timeout: float = TIMEOUT) -> dict[str, Any]:
    """Serve options pointing at ``base_url`` with ``secret`` as the credential."""
    options = emulated_options(dialect, base_url).model_dump(
        exclude_unset=True)
    options.pop("api_key", None)
    options.pop("token", None)
    root = base_url.removesuffix("/v1")
    described = {item.name for item in capabilities().serving(dialect).options.describe()}
    if variant == "azure":  # Azure OpenAI: the key goes in an api-key header
        options.pop("base_url", None)
        options.update(azure_endpoint=root, api_key=secret)
        if "api_version" in described:  # Responses on Azure is the v1 API: no version
            options.update(api_version="2024-10-21")
        if dialect == "openai-chat":
            options.update(deployment="gpt-test")
    elif variant == "foundry":  # a Foundry project: a bearer token from a credential
        options.pop("base_url", None)
        options.update(project_endpoint=f"{root}/api/projects/p", credential=_Credential(secret))
    elif variant == "query":  # the Gemini API's ?key= form: the key is in every URL
        options.update(api_key=secret, key_in_query=True)
    elif dialect == "google-ces":
        options.update(token=secret)
    elif variant == "auth_token":  # Anthropic: a bearer token instead of x-api-key
        options.update(auth_token=secret)
    else:
        options.update(api_key=secret)
    if "retry" in described:
        options["retry"] = FAST
    if "timeout" in described:
        options["timeout"] = timeout
    return options


VARIANTS = [(d, "key") for d in DIALECTS] + [
    ("openai-assistants", "azure"), ("openai-chat", "azure"), ("openai-responses", "azure"),
    ("openai-responses", "foundry"), ("anthropic-messages", "auth_token"),
    ("gemini-interactions", "query")]


def _toolbox(secret: str) -> Toolbox:
    toolbox = Toolbox()

    @toolbox.tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        request = httpx.Request("GET", f"https://weather.example/v1?city={city}&key={secret}")
        httpx.Response(403, request=request).raise_for_status()
        return "sunny"

    return toolbox


async def _converse(dialect: str, options: dict[str, Any], secret: str
                    ) -> tuple[Any, BaseException | None]:
    from toolbridge.serve import DriverSettings, aconverse

    chosen = get_dialect(dialect)
    try:
        settings = capabilities().serving(chosen.name).options.parse(options)
        return await asyncio.wait_for(
            aconverse(_toolbox(secret), chosen, ["weather in Lima?"], settings,
                      settings=DriverSettings(recovery=FAST)), 30), None
    except ToolbridgeError as exc:
        return None, exc


@pytest.mark.parametrize("mode", ["401", "429", "500", "hang", "closed"])
@pytest.mark.parametrize(("dialect", "variant"), VARIANTS, ids=lambda v: str(v))
def test_failing_backends_never_show_the_secret(
        dialect: str, variant: str, mode: str, debug_logs: pytest.LogCaptureFixture) -> None:
    secret = _secret()
    with contextlib.ExitStack() as stack:
        url = _closed_port() if mode == "closed" else stack.enter_context(_hostile(mode))
        options = _options(dialect, variant, url, secret,
                           HANG_TIMEOUT if mode == "hang" else TIMEOUT)
        transcript, error = asyncio.run(_converse(dialect, options, secret))
    assert error is not None or (transcript is not None and not transcript.ok), (
        f"{mode} should fail the conversation")
    _assert_no_leak(secret, debug_logs, error, transcript,
                    transcript.render() if transcript else "",
                    transcript.to_dict() if transcript else "")
    if error is not None:
        assert secret not in str(error) and secret not in repr(error)


@pytest.mark.parametrize(("dialect", "variant"),
                         [v for v in VARIANTS if v[1] == "key" or v[0] == "openai-assistants"],
                         ids=lambda v: str(v))
def test_error_results_and_transcripts_never_show_the_secret(
        dialect: str, variant: str, debug_logs: pytest.LogCaptureFixture) -> None:
    """A handler failing with an HTTP error for a URL holding the key: the model gets the error
    without it; a 429 injected by the emulator, retried, leaves no trace of the key either."""
    secret = _secret()
    script = {"turns": [{"rounds": [[{"name": "get_weather", "arguments": {"city": "Lima"}}]],
                         "reply": "done: {outputs}"}]}
    faults = {"fail_requests": [{"nth": 1, "status": 429, "retry_after": 0}]}
    with emulator(dialect, script=script, faults=faults) as running:
        options = _options(dialect, variant, running.base_url, secret)
        transcript, error = asyncio.run(_converse(dialect, options, secret))
    assert error is None, error
    outputs = json.dumps(transcript.to_dict())
    assert "HTTPStatusError" in outputs and "weather.example/v1" in outputs, outputs[:2000]
    _assert_no_leak(secret, debug_logs, transcript, transcript.render(),
                    transcript.to_dict())


def test_a_key_in_the_query_never_shows(debug_logs: pytest.LogCaptureFixture) -> None:
    """The Gemini API also takes its key as ``?key=``: the emulator's journal masks it, an
    error for such a request does not show it, and toolbridge's own client sends the key in
    ``x-goog-api-key``, never in a URL (so no log line of httpx's can show it)."""
    from toolbridge.http import raise_for_backend
    from toolbridge_gemini import GeminiClient

    secret = _secret()
    body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    with emulator("gemini") as running:
        root = f"{running.base_url}/v1/models/m"
        assert httpx.post(f"{root}:generateContent?key={secret}", json=body).is_success
        refused = httpx.post(f"{root}:nope?alt=sse&key={secret}", json=body)
        with GeminiClient(base_url=running.base_url, api_key=secret, retry=FAST) as client:
            client.generate("m", **body)
            debug_logs.clear()  # from here on, only toolbridge's client and the emulator log
            client.generate("m", **body)
        journal = [entry.to_dict() for entry in running.journal.entries()]
    assert [e["query"] for e in journal] == ["key=***", "alt=sse&key=***", "", ""]
    with pytest.raises(BackendError) as caught:
        raise_for_backend(refused, "gemini: generate content")
    _assert_no_leak(secret, debug_logs, journal, caught.value)


# ------------------------------------------------------------------ stores
def test_store_urls_are_redacted_in_every_message() -> None:
    for url in ("postgresql+psycopg://app:hunter2@db/x", "sqlite://app:hunter2@",
                "mysql://app:hunter2@db/x", "sqlite:///x.db?timeout=1&password=hunter2"):
        with pytest.raises(ToolbridgeError) as caught:
            open_store(url)
        assert "hunter2" not in str(caught.value) and not _leaks(caught.value, "hunter2"), url
        assert "***" in str(caught.value)


def test_httpx_request_lines_mask_secret_query_parameters(
        caplog: pytest.LogCaptureFixture) -> None:
    """httpx logs every request's URL itself: once toolbridge.http built a client, a key in
    the query (the Gemini API's ``?key=``) shows masked, a caller's own client's too."""
    from toolbridge.http import Network

    Network().client(1.0).close()
    with caplog.at_level(logging.INFO, logger="httpx"), httpx.Client(
            transport=httpx.MockTransport(lambda r: httpx.Response(200))) as own:
        own.get("https://g.test/v1/interactions?key=sk-own-secret&alt=sse")
    lines = [r.getMessage() for r in caplog.records if r.name == "httpx"]
    assert lines and all("sk-own-secret" not in line for line in lines), lines
    assert "key=***&alt=sse" in lines[0]


def test_redaction() -> None:
    assert redact_url("postgresql://app:pw@db:5432/x?table=t&password=pw") == (
        "postgresql://app:***@db:5432/x?table=t&password=***")
    assert redact_url("https://h/p?key=abc&q=1#frag") == "https://h/p?key=***&q=1#frag"
    assert redact_text("GET https://u:pw@h/p?key=abc done") == "GET https://u:***@h/p done"
    assert redact_text("no url here") == "no url here"


@pytest.fixture
def postgres_url() -> str:
    import os

    url = os.environ.get("TOOLBRIDGE_TEST_POSTGRES_URL")
    if not url:
        if os.environ.get("CI"):
            pytest.fail("TOOLBRIDGE_TEST_POSTGRES_URL is unset in CI: scripts/test starts a "
                        "server with scripts/postgres")
        pytest.skip("TOOLBRIDGE_TEST_POSTGRES_URL is not set (scripts/test starts a server)")
    pytest.importorskip("psycopg")
    return url


def test_postgres_with_a_password_never_shows_it(postgres_url: str,
                                                  debug_logs: pytest.LogCaptureFixture) -> None:
    """A role with a password on the test cluster: the store works, and neither its repr nor
    a refused connection (unknown database, unreachable server) shows the password."""
    import psycopg

    secret = _secret()
    role = f"tb_secret_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{secret}' CREATEDB")
        admin.execute(f"CREATE SCHEMA {role} AUTHORIZATION {role}")
    parts = httpx.URL(postgres_url)
    try:
        url = str(parts.copy_with(username=role, password=secret))
        store = open_store(url + f"?table={role}.calls")
        try:
            assert secret not in repr(store) and secret not in str(getattr(store, "url", ""))
        finally:
            store.close()
        refused = [str(parts.copy_with(username=role, password=secret,
                                       path="/no_such_database")),
                   str(httpx.URL(_closed_port().replace("http", "postgresql", 1)).copy_with(
                       username=role, password=secret, path="/x"))]
        for bad in refused:
            with pytest.raises(BackendError) as caught:
                open_store(bad)
            assert "cannot connect" in str(caught.value)
            _assert_no_leak(secret, debug_logs, caught.value)
            assert caught.value.__context__ is None and caught.value.__cause__ is None
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {role} CASCADE")
            admin.execute(f"DROP OWNED BY {role}")
            admin.execute(f"DROP ROLE {role}")
