"""Every dialect's sync and async client reaches its emulator through a real forward proxy
(proxy.py on loopback; its own access log shows each request) from the environment or given,
``NO_PROXY`` bypasses it, and HTTPS through its CONNECT is trusted through ``SSL_CERT_FILE``
or ``verify=``; a wrong CA fails with a one-line `BackendError` naming the host and the cause.
What the emulator received is read from its journal."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from network_support import (
    CLIENTS,
    PATHS,
    Certificates,
    ForwardProxy,
    call_async,
    call_sync,
    certificates,
    forward_proxy,
)

from toolbridge import BackendError
from toolbridge.testing import emulator, installed_dialects

DIALECTS = sorted(CLIENTS)
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForwardProxy]:
    with forward_proxy(tmp_path_factory.mktemp("proxy")) as running:
        yield running


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return certificates(tmp_path_factory.mktemp("certs"))


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*PROXY_VARIABLES, "SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)


def run(dialect: str, mode: str, base: str, **network: object) -> object:
    if mode == "sync":
        return call_sync(dialect, base, **network)
    return asyncio.run(call_async(dialect, base, **network))


def host_port(base: str) -> str:
    return base.split("://", 1)[1]


def test_every_serving_dialect_has_a_client_row() -> None:
    """A new dialect's clients join the proxy and TLS tests (network_support.CLIENTS)."""
    assert set(installed_dialects()) <= set(CLIENTS)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_environment_proxy_carries_every_client(
        dialect: str, mode: str, proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    with emulator(dialect) as emu:
        run(dialect, mode, emu.base_url)
        assert emu.journal.entries(contains=PATHS[dialect])
    assert proxy.saw(f"{host_port(emu.base_url)}{PATHS[dialect]}"), proxy.log()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_an_explicit_proxy_carries_every_client(dialect: str, mode: str,
                                                proxy: ForwardProxy) -> None:
    with emulator(dialect) as emu:
        run(dialect, mode, emu.base_url, proxy=proxy.url)
        assert emu.journal.entries(contains=PATHS[dialect])
    assert proxy.saw(f"{host_port(emu.base_url)}{PATHS[dialect]}"), proxy.log()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_no_proxy_bypasses_the_proxy(mode: str, proxy: ForwardProxy,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    before = proxy.mark()
    with emulator("openai-chat") as emu:
        run("openai-chat", mode, emu.base_url)
        assert emu.journal.entries(contains=PATHS["openai-chat"])
    assert not proxy.saw(host_port(emu.base_url), within=1.0, since=before), proxy.log()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_https_through_the_proxy_is_trusted_through_ssl_cert_file(
        dialect: str, mode: str, proxy: ForwardProxy, certs: Certificates,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("SSL_CERT_FILE", str(certs.ca))
    with emulator(dialect, tls=certs.server) as emu:
        assert emu.base_url.startswith("https://")
        run(dialect, mode, emu.base_url)
        assert emu.journal.entries(contains=PATHS[dialect])
    assert proxy.saw(f"CONNECT {host_port(emu.base_url)}"), proxy.log()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_https_direct_and_proxied_is_trusted_through_verify(
        mode: str, proxy: ForwardProxy, certs: Certificates) -> None:
    with emulator("openai-responses", tls=certs.server) as emu:
        run("openai-responses", mode, emu.base_url, verify=str(certs.ca))
        run("openai-responses", mode, emu.base_url, verify=str(certs.ca), proxy=proxy.url)
        assert len(emu.journal.entries(contains=PATHS["openai-responses"])) == 2
    assert proxy.saw(f"CONNECT {host_port(emu.base_url)}"), proxy.log()


@pytest.mark.parametrize("through", ["direct", "proxy"])
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_wrong_ca_fails_with_one_line_naming_the_host_and_the_cause(
        mode: str, through: str, proxy: ForwardProxy, certs: Certificates) -> None:
    network: dict[str, object] = {"verify": str(certs.other_ca)}
    if through == "proxy":
        network["proxy"] = proxy.url
    with emulator("openai-chat", tls=certs.server) as emu:
        with pytest.raises(BackendError) as caught:
            run("openai-chat", mode, emu.base_url, **network)
        assert not emu.journal.entries()
    message = str(caught.value)
    assert "\n" not in message
    assert host_port(emu.base_url) in message, message
    assert "CERTIFICATE_VERIFY_FAILED" in message, message


def test_a_missing_ca_file_is_a_usage_error_naming_the_option(tmp_path: Path) -> None:
    from toolbridge import UsageError

    with pytest.raises(UsageError, match="verify"):
        call_sync("openai-chat", "https://127.0.0.1:9", verify=str(tmp_path / "none.pem"))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs openssl to hash a CA dir")
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_https_is_trusted_through_ssl_cert_dir(mode: str, certs: Certificates, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    subject = subprocess.run(["openssl", "x509", "-hash", "-noout", "-in", str(certs.ca)],
                             capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / f"{subject}.0").write_bytes(certs.ca.read_bytes())
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    with emulator("openai-agents", tls=certs.server) as emu:
        run("openai-agents", mode, emu.base_url)
        assert emu.journal.entries(contains=PATHS["openai-agents"])
