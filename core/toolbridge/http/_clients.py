"""`Network`: how every adapter client reaches its service (proxies, CAs, client certificates,
HTTP/2), and the sync and async httpx clients built from it, the same for every dialect.

With ``trust_env`` (the default) the environment counts as httpx reads it: ``HTTP_PROXY``,
``HTTPS_PROXY``, ``ALL_PROXY`` and ``NO_PROXY`` (any case), ``SSL_CERT_FILE`` and
``SSL_CERT_DIR``. Where a proxy (explicit or from the environment) or HTTP/2 applies, httpx's
own transport carries the requests; only direct HTTP/1.1 connections of an async client go
through `exclusive_transport` (a connection per request in flight). TLS contexts are built
once per setting and shared by every client of the process.
"""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._redact import redact_url
from ..errors import UsageError
from ._logs import redact_httpx_logs
from ._retries import Secret
from ._tls import CertFiles, tls_context

if TYPE_CHECKING:
    import httpx

__all__ = ["NETWORK_OPTIONS", "Network"]

NETWORK_OPTIONS = ("trust_env", "proxy", "verify", "cert", "http2")
"""The client keywords a `Network` takes (`Network.take` removes them from a client's)."""


@dataclass(frozen=True)
class Network:
    """Network settings of one client.

    ``proxy``: a proxy URL (credentials in it stay secret); ``verify``: ``True`` (the
    environment's CAs, else certifi's), ``False``, a CA bundle file or directory, or an
    `ssl.SSLContext`; ``cert``: a client certificate file, or ``(cert, key)`` or ``(cert,
    key, password)``; ``http2``: offer HTTP/2 (needs the ``http2`` extra, ``h2``);
    ``trust_env``: read proxies and CAs from the environment.
    """

    trust_env: bool = True
    proxy: Secret | str | None = None
    verify: ssl.SSLContext | str | bool = True
    cert: CertFiles | None = None
    http2: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.proxy, str):
            object.__setattr__(self, "proxy", Secret(self.proxy) if self.proxy else None)
        for name, kinds in (("trust_env", bool), ("http2", bool),
                            ("verify", (ssl.SSLContext, str, bool)),
                            ("proxy", (Secret, type(None))), ("cert", (str, tuple, type(None)))):
            if not isinstance(getattr(self, name), kinds):
                raise UsageError(f"network option {name}: unexpected "
                                 f"{type(getattr(self, name)).__name__}")
        if self.http2:
            try:
                import h2  # noqa: F401
            except ImportError:
                raise UsageError("network option http2: needs the h2 package (install "
                                 "toolbridge[http2])") from None

    @classmethod
    def take(cls, options: MutableMapping[str, Any]) -> Network:
        """The network settings among a client's keyword ``options``, removed from them."""
        return cls(**{k: options.pop(k) for k in NETWORK_OPTIONS if k in options})

    def __repr__(self) -> str:
        url = self.proxy_url()
        proxy = redact_url(url) if url is not None else None
        return (f"Network(trust_env={self.trust_env}, proxy={proxy!r}, verify={self.verify!r}, "
                f"http2={self.http2})")

    def direct(self) -> bool:
        """Whether requests go straight to the server over HTTP/1.1: no HTTP/2, and no proxy
        given or in the environment (``NO_PROXY`` then lets httpx's transport go direct)."""
        return not self.http2 and self.proxy is None and not (
            self.trust_env and environment_proxies())

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS context of these settings (one per distinct setting, shared)."""
        return tls_context(self.verify, self.cert, trust_env=self.trust_env)

    def proxy_url(self) -> str | None:
        """The proxy's URL, credentials included (for httpx only; never logged)."""
        return self.proxy.get() if isinstance(self.proxy, Secret) else self.proxy

    def _settings(self) -> dict[str, Any]:
        return {"verify": self.ssl_context(), "trust_env": self.trust_env, "http2": self.http2,
                "proxy": self.proxy_url()}

    def client(self, timeout: float | None, *, limits: httpx.Limits | None = None
               ) -> httpx.Client:
        """A blocking httpx client with these settings (httpx's own transport)."""
        import httpx

        redact_httpx_logs()

        return httpx.Client(timeout=timeout, limits=limits or httpx.Limits(
            max_connections=100, max_keepalive_connections=20), **self._settings())

    def async_client(self, timeout: float | None, *, keep: int = 64) -> httpx.AsyncClient:
        """An async httpx client: direct connections through `exclusive_transport` (``keep``
        idle connections kept), the rest through httpx's own transport."""
        import httpx

        redact_httpx_logs()

        if self.direct():
            from ._transport import exclusive_transport

            return httpx.AsyncClient(timeout=timeout, transport=exclusive_transport(
                keep=keep, verify=self.ssl_context()))
        return httpx.AsyncClient(timeout=timeout, **self._settings())


def environment_proxies() -> dict[str, str]:
    """The proxies the environment names for HTTP(S), by scheme (``NO_PROXY=*``: none)."""
    found = urllib.request.getproxies()
    if any(host.strip() == "*" for host in found.get("no", "").split(",")):
        return {}
    return {k: v for k, v in found.items() if k in ("http", "https", "all") and v}
