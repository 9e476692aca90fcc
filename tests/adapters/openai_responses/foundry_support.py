"""A fixed Entra credential (no network) and a saved Foundry agent for the tests."""

from __future__ import annotations

import time
from typing import Any

from azure.core.credentials import AccessToken, AccessTokenInfo


class FixedCredential:
    """A `TokenCredential` that hands out one token and counts the requests for it."""

    def __init__(self, token: str = "entra-token-123") -> None:
        self.token = token
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **options: Any) -> AccessToken:
        self.scopes.append(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)

    def get_token_info(self, *scopes: str, options: Any = None) -> AccessTokenInfo:
        self.scopes.append(scopes)
        return AccessTokenInfo(self.token, int(time.time()) + 3600)


class AsyncFixedCredential(FixedCredential):
    async def get_token(self, *scopes: str, **options: Any) -> AccessToken:  # type: ignore[override]
        return super().get_token(*scopes)
