"""The serve driver, ``toolbridge migrate`` and ``-o`` options reach their emulators through a
real forward proxy (proxy.py on loopback, its access log read back); a proxy's credentials
stay out of every repr, log and error; ``http2=True`` goes through httpx's own transport."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from network_support import (
    PATHS,
    Certificates,
    ForwardProxy,
    call_async,
    call_sync,
    certificates,
    forward_proxy,
)

import toolbridge
from toolbridge import BackendError
from toolbridge.http import Network
from toolbridge.plugin import capabilities
from toolbridge.serve import aconverse
from toolbridge.testing import emulated_options, emulator

DIALECTS = sorted(PATHS)
SCRIPT = {"turns": [{"rounds": [[{"name": "lookup", "arguments": {"key": "a"}}]],
                     "reply": "done {outputs}"}]}
PASSWORD = "pr0xy-s3cret"


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForwardProxy]:
    with forward_proxy(tmp_path_factory.mktemp("proxy")) as running:
        yield running


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForwardProxy]:
    """A proxy asking for basic credentials (``user:PASSWORD``)."""
    with forward_proxy(tmp_path_factory.mktemp("guarded"),
                       basic_auth=f"user:{PASSWORD}") as running:
        yield running


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE",
                 "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def toolbox() -> toolbridge.Toolbox:
    box = toolbridge.Toolbox()

    @box.tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return f"value of {key}"

    return box


def host_port(base: str) -> str:
    return base.split("://", 1)[1]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_serve_driver_reaches_every_backend_through_the_proxy(
        dialect: str, proxy: ForwardProxy) -> None:
    with emulator(dialect, script=SCRIPT) as emu:
        options = emulated_options(dialect, emu.base_url, proxy=proxy.url)
        transcript = asyncio.run(aconverse(toolbox(), dialect, ["go"], options))
        assert transcript.status == "completed", transcript
        received = len(emu.journal)
    assert received
    assert proxy.saw(host_port(emu.base_url)), proxy.log()


def test_command_line_options_take_the_network_settings(tmp_path: Path) -> None:
    options = capabilities().serving("openai-chat").options
    parsed = options.parse({"proxy": "http://u:pw@127.0.0.1:3128", "verify": "false",
                            "http2": "true", "cert": "c.pem", "cert_key": "k.pem",
                            "trust_env": "false"})
    assert parsed.network() == {"proxy": parsed.proxy, "verify": False, "http2": True,
                                "cert": ("c.pem", "k.pem"), "trust_env": False}
    assert "pw" not in repr(parsed) and "pw" not in parsed.model_dump_json()
    ca = tmp_path / "ca.pem"
    assert options.parse({"verify": str(ca)}).network() == {"verify": str(ca)}
    assert options.parse({}).network() == {}


def test_toolbridge_migrate_reads_and_writes_through_the_proxy(
        proxy: ForwardProxy, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toolbridge.cli import main
    from toolbridge_openai_assistants import AssistantsClient

    with emulator("openai-assistants") as source, emulator("openai-agents") as target:
        with AssistantsClient(base_url=source.base_url + "/v1", api_key="k") as client:
            client.create_assistant(model="gpt-4o", name="desk")
            thread = client.create_thread(messages=[{"role": "user", "content": "hello"}])
        before = len(source.journal)
        code = main(["migrate", "--source-option", f"base_url={source.base_url}/v1",
                     "--source-option", "api_key=k", "--source-option", f"proxy={proxy.url}",
                     "--thread", thread["id"], "--to", "openai-agents",
                     "-o", f"base_url={target.base_url}/v1", "-o", "api_key=k",
                     "-o", f"proxy={proxy.url}",
                     "--ledger", str(tmp_path / "ledger.json"), "--json", "-"])
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert json.loads(captured.out)["counts"]["verified"] == 1
        assert len(source.journal) > before and len(target.state.sessions) == 1
    # proxy.py logs a kept-alive connection once, with its first request
    assert proxy.saw(f"{host_port(source.base_url)}/v1/"), proxy.log()
    assert proxy.saw(f"{host_port(target.base_url)}/v1/"), proxy.log()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_proxy_with_credentials_works_and_its_password_shows_nowhere(
        mode: str, guarded: ForwardProxy, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    good = guarded.url.replace("http://", f"http://user:{PASSWORD}@")
    bad = guarded.url.replace("http://", "http://user:wrong-pa55@")
    with emulator("openai-chat") as emu:
        call = call_sync if mode == "sync" else (
            lambda *a, **k: asyncio.run(call_async(*a, **k)))
        call("openai-chat", emu.base_url, proxy=good)
        assert len(emu.journal) == 1
        with pytest.raises(BackendError) as caught:
            call("openai-chat", emu.base_url, proxy=bad)
        assert len(emu.journal) == 1
    assert "407" in str(caught.value)
    shown = [str(caught.value), repr(caught.value), caplog.text, repr(Network(proxy=good)),
             repr(capabilities().serving("openai-chat").options.parse({"proxy": good}))]
    for text in shown:
        assert PASSWORD not in text and "wrong-pa55" not in text, text


def test_http2_goes_through_httpx_own_transport_and_reaches_a_tls_emulator(
        tmp_path: Path) -> None:
    certs: Certificates = certificates(tmp_path)
    network = Network(http2=True, verify=str(certs.ca))
    assert not network.direct()
    assert Network().direct() and not Network(proxy="http://127.0.0.1:9").direct()
    with emulator("openai-responses", tls=certs.server) as emu:
        call_sync("openai-responses", emu.base_url, http2=True, verify=str(certs.ca))
        asyncio.run(call_async("openai-responses", emu.base_url, http2=True,
                               verify=str(certs.ca)))
        assert len(emu.journal.entries(contains=PATHS["openai-responses"])) == 2


def test_a_caller_s_own_client_is_used_and_left_open(proxy: ForwardProxy) -> None:
    import httpx

    from toolbridge_google_ces.client import CesClient

    with emulator("google-ces") as emu, httpx.Client(proxy=proxy.url) as own:
        with CesClient(base_url=emu.base_url, token="t", http_client=own) as client:
            client.list_tools("projects/demo/locations/us/apps/demo")
        assert not own.is_closed
        with pytest.warns(DeprecationWarning, match="http_client"):
            CesClient(base_url=emu.base_url, token="t", http=own).list_tools(
                "projects/demo/locations/us/apps/demo")
    assert proxy.saw(f"{host_port(emu.base_url)}{PATHS['google-ces']}"), proxy.log()
