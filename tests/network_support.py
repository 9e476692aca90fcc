"""Real network parts for the network tests: a forward proxy (proxy.py, started per test on
loopback, its access log read back), TLS certificates from a test CA (trustme), and one
request of every dialect's sync and async client."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trustme

from toolbridge.http import RetryPolicy

ONCE = RetryPolicy(max_attempts=1)
DEMO_APP = "projects/demo/locations/us/apps/demo"


@dataclass
class ForwardProxy:
    """A running proxy.py: its URL and its access log."""

    url: str
    log_file: Path

    def log(self) -> list[str]:
        """The access-log lines so far (``GET 127.0.0.1:PORT/path``, ``CONNECT host:port``)."""
        if not self.log_file.exists():
            return []
        return [line for line in self.log_file.read_text().splitlines()
                if "access_log" in line]

    def saw(self, needle: str, *, within: float = 5.0, since: int = 0) -> bool:
        """Whether an access-log line names ``needle`` (proxy.py writes it when the
        connection closes: wait up to ``within`` seconds); ``since``: only lines after the
        first ``since`` (a `mark` taken before, so that an earlier test's line for a port the
        system gave out again does not count)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if any(needle in line for line in self.log()[since:]):
                return True
            time.sleep(0.05)
        return False

    def mark(self) -> int:
        """How many access-log lines there are now (for `saw`'s ``since``)."""
        return len(self.log())


@contextmanager
def forward_proxy(tmp: Path, *, basic_auth: str | None = None) -> Iterator[ForwardProxy]:
    """proxy.py on a free loopback port for the duration of the block (stopped after it,
    and started within 30 s or the test fails)."""
    port_file, log_file = tmp / "proxy.port", tmp / "proxy.log"
    command = [sys.executable, "-m", "proxy", "--hostname", "127.0.0.1", "--port", "0",
               "--port-file", str(port_file), "--num-workers", "1", "--num-acceptors", "1",
               "--log-file", str(log_file), "--log-level", "INFO"]
    if basic_auth:
        command += ["--basic-auth", basic_auth]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={k: v for k, v in os.environ.items()
                                    if "proxy" not in k.lower()})
    try:
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("proxy.py did not start")
            time.sleep(0.05)
        time.sleep(0.2)  # the acceptor is up just after the port file is written
        yield ForwardProxy(f"http://127.0.0.1:{port_file.read_text().strip()}", log_file)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass
class Certificates:
    """A test CA and a server certificate for 127.0.0.1 signed by it, as PEM files."""

    ca: Path
    server: tuple[str, str]
    other_ca: Path


def certificates(tmp: Path) -> Certificates:
    ca, other = trustme.CA(), trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ca.cert_pem.write_to_path(str(tmp / "ca.pem"))
    other.cert_pem.write_to_path(str(tmp / "other-ca.pem"))
    cert.cert_chain_pems[0].write_to_path(str(tmp / "server.pem"))
    cert.private_key_pem.write_to_path(str(tmp / "server.key"))
    return Certificates(tmp / "ca.pem", (str(tmp / "server.pem"), str(tmp / "server.key")),
                        tmp / "other-ca.pem")


# --------------------------------------------------------------- one request per client
Make = Callable[..., Any]
"""``make(emulator base URL, **network options)``: a client."""


def _clients() -> dict[str, tuple[Make, Make, Callable[[Any], Any]]]:
    """Per dialect: sync client, async client, and the one call (awaited for the async)."""
    from toolbridge_anthropic_messages.client import AsyncMessagesClient, MessagesClient
    from toolbridge_anthropic_sessions.client import AsyncSessionsClient, SessionsClient
    from toolbridge_gemini.client import AsyncGeminiClient, GeminiClient
    from toolbridge_gemini_interactions.client import AsyncInteractionsClient, InteractionsClient
    from toolbridge_google_ces.client import AsyncCesClient, CesClient
    from toolbridge_openai_agents.client import AgentsClient, AsyncAgentsClient
    from toolbridge_openai_assistants.client import AssistantsClient, AsyncAssistantsClient
    from toolbridge_openai_chat.client import AsyncChatClient, ChatClient
    from toolbridge_openai_responses.client import AsyncResponsesClient, ResponsesClient

    def openai(kind: Any) -> Make:
        return lambda base, **net: kind(base_url=base + "/v1", api_key="k", retry=ONCE, **net)

    def anthropic(kind: Any) -> Make:
        return lambda base, **net: kind(base_url=base, api_key="k", retry=ONCE, **net)

    def ces(kind: Any) -> Make:
        return lambda base, **net: kind(base_url=base, token="t", retry=ONCE, **net)

    def gemini(kind: Any) -> Make:
        return lambda base, **net: kind(base_url=base, api_key="k", retry=ONCE, **net)

    return {
        "openai-chat": (openai(ChatClient), openai(AsyncChatClient), lambda c: c.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}])),
        "openai-responses": (openai(ResponsesClient), openai(AsyncResponsesClient),
                             lambda c: c.create(model="gpt-4o", input="hi")),
        "openai-agents": (openai(AgentsClient), openai(AsyncAgentsClient),
                          lambda c: c.create_session(input="hi")),
        "openai-assistants": (openai(AssistantsClient), openai(AsyncAssistantsClient),
                              lambda c: c.create_assistant(model="gpt-4o")),
        "google-ces": (ces(CesClient), ces(AsyncCesClient), lambda c: c.list_tools(DEMO_APP)),
        "gemini": (gemini(GeminiClient), gemini(AsyncGeminiClient), lambda c: c.generate(
            "gemini-2.5-flash", contents=[{"role": "user", "parts": [{"text": "hi"}]}])),
        "anthropic-sessions": (anthropic(SessionsClient), anthropic(AsyncSessionsClient),
                               lambda c: c.create_environment("e")),
        "anthropic-messages": (anthropic(MessagesClient), anthropic(AsyncMessagesClient),
                               lambda c: c.create(model="claude-sonnet-4-5", max_tokens=16,
                                                  messages=[{"role": "user", "content": "hi"}])),
        "gemini-interactions": (gemini(InteractionsClient), gemini(AsyncInteractionsClient),
                                lambda c: c.create(model="gemini-3-flash-preview", input="hi")),
    }


CLIENTS = _clients()
PATHS = {"openai-chat": "/v1/chat/completions", "openai-responses": "/v1/responses",
         "openai-agents": "/v1/agents/sessions", "openai-assistants": "/v1/assistants",
         "google-ces": "/v1/" + DEMO_APP + "/tools",
         "gemini": "/v1/models/gemini-2.5-flash:generateContent",
         "anthropic-sessions": "/v1/environments", "anthropic-messages": "/v1/messages",
         "gemini-interactions": "/v1/interactions"}
"""The path of each dialect's one request, as the proxy and the emulator see it."""


def call_sync(dialect: str, base: str, **network: Any) -> Any:
    make, _, call = CLIENTS[dialect]
    with make(base, **network) as client:
        return call(client)


async def call_async(dialect: str, base: str, **network: Any) -> Any:
    _, make, call = CLIENTS[dialect]
    async with make(base, **network) as client:
        return await call(client)
