"""TLS contexts from httpx-style settings, built once per distinct setting and shared."""

from __future__ import annotations

import functools
import os
import ssl

from ..errors import UsageError

__all__ = ["CertFiles", "tls_context"]

CertFiles = str | tuple[str, str] | tuple[str, str, str]
"""A client certificate: one PEM file, ``(cert, key)`` or ``(cert, key, password)``."""


def tls_context(verify: ssl.SSLContext | str | bool, cert: CertFiles | None = None, *,
                trust_env: bool = True) -> ssl.SSLContext:
    """The context for ``verify`` (``True``: ``SSL_CERT_FILE`` or ``SSL_CERT_DIR`` when
    ``trust_env``, else certifi's CAs; ``False``; a CA file or directory; a context, as is)
    with the client certificate ``cert``; `UsageError` names the file that does not load."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    cafile = capath = None
    if isinstance(verify, str):
        cafile, capath = (None, verify) if os.path.isdir(verify) else (verify, None)
    elif verify and trust_env:
        cafile = os.environ.get("SSL_CERT_FILE") or None
        capath = None if cafile else os.environ.get("SSL_CERT_DIR") or None
    return _context(bool(verify), cafile, capath, (cert,) if isinstance(cert, str) else cert)


@functools.lru_cache(maxsize=32)
def _context(verify: bool, cafile: str | None, capath: str | None,
             cert: tuple[str, ...] | None) -> ssl.SSLContext:
    if not verify:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    else:
        if cafile is None and capath is None:
            import certifi

            cafile = certifi.where()
        try:
            context = ssl.create_default_context(cafile=cafile, capath=capath)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"network option verify: cannot load CAs from "
                             f"{cafile or capath}: {exc.strerror or exc}") from None
    if cert is not None:
        try:
            context.load_cert_chain(*cert)
        except (OSError, ssl.SSLError) as exc:
            raise UsageError(f"network option cert: cannot load {cert[0]}: "
                             f"{getattr(exc, 'strerror', None) or exc}") from None
    return context
