"""Approvals as the store keeps them: a request for one call, and the decision taken on it.

A call that needs a person's approval is stored in the state ``awaiting`` with its
`ApprovalRequest`; `ResultStore.decide` puts a `Decision` beside it (once: a second one is
refused), and the next claim of the call consumes it in the claim's transaction (the call is
then claimed, like any other, by the worker that will answer it). Both travel as compact
JSON text, so every store keeps them in a text column.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..errors import UsageError
from ._base import StoreKey, fingerprint_digest

__all__ = ["ApprovalRequest", "Decision", "DecisionKind", "Origin", "Scope"]

DecisionKind = Literal["approve", "deny", "answer"]
Scope = Literal["call", "tool"]
Origin = Literal["tool", "backend"]
_KINDS = ("approve", "deny", "answer")
_SCOPES = ("call", "tool")


@dataclass(frozen=True)
class ApprovalRequest:
    """A call waiting for a person: who asked, for what, and until when."""

    key: StoreKey
    """The call's identity: dialect, conversation, turn, call id."""
    tool: str
    arguments: Mapping[str, Any]
    """The decoded (normalized) arguments the person is shown."""
    digest: str
    """The digest of the tool and arguments (`fingerprint`); a decision is bound to it."""
    origin: Origin = "tool"
    """``tool``: the tool's ``needs_approval``; ``backend``: the wire's approval item."""
    batch: tuple[str, ...] = ()
    """The ids of the calls delivered with it (the payload's)."""
    requested_at: float = field(default_factory=time.time)
    expires_at: float | None = None
    """When the wait ends (a Unix time): later decisions are refused and the call is denied
    as expired; ``None``: it never does."""

    @classmethod
    def of(cls, key: StoreKey, tool: str, arguments: Mapping[str, Any], *,
           origin: Origin = "tool", batch: tuple[str, ...] = (),
           expires_in: float | None = None) -> ApprovalRequest:
        """The request for a call, its digest taken now."""
        now = time.time()
        return cls(key, tool, dict(arguments), fingerprint_digest(tool, arguments), origin,
                   batch, now, None if expires_in is None else now + expires_in)

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and (time.time() if now is None else now) >= (
            self.expires_at)

    def to_json(self) -> str:
        return json.dumps({
            "key": list(self.key), "tool": self.tool, "arguments": self.arguments,
            "digest": self.digest, "origin": self.origin, "batch": list(self.batch),
            "requested_at": self.requested_at, "expires_at": self.expires_at,
        }, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> ApprovalRequest:
        body = json.loads(text)
        return cls(StoreKey(*body["key"]), body["tool"], body["arguments"], body["digest"],
                   body["origin"], tuple(body["batch"]), body["requested_at"],
                   body["expires_at"])


@dataclass(frozen=True)
class Decision:
    """A person's answer to an `ApprovalRequest`.

    ``approve`` runs the call (with ``arguments`` instead of the model's, validated again,
    when given); ``deny`` answers it with ``message`` as its error result (what the model
    sees); ``answer`` gives ``output`` as its result, unrun. ``scope="tool"`` also decides
    the tool's later calls in the same conversation.
    """

    kind: DecisionKind
    scope: Scope = "call"
    arguments: Mapping[str, Any] | None = None
    message: str = ""
    output: Any = None
    by: str = ""
    """Who decided (free text, for the record)."""
    decided_at: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise UsageError(f"decision kind must be one of {', '.join(_KINDS)}, not "
                             f"{self.kind!r}")
        if self.scope not in _SCOPES:
            raise UsageError(f"decision scope must be 'call' or 'tool', not {self.scope!r}")
        if self.arguments is not None and self.kind != "approve":
            raise UsageError("decision arguments: only an approval edits the arguments")
        if self.kind == "answer" and self.scope == "tool":
            raise UsageError("decision scope: an answer is given to one call, not a tool")

    @property
    def outcome(self) -> str:
        """``approved``, ``denied`` or ``answered`` (telemetry's word)."""
        return {"approve": "approved", "deny": "denied", "answer": "answered"}[self.kind]

    def to_json(self) -> str:
        return json.dumps({
            "kind": self.kind, "scope": self.scope,
            "arguments": None if self.arguments is None else dict(self.arguments),
            "message": self.message, "output": self.output, "by": self.by,
            "decided_at": self.decided_at,
        }, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Decision:
        body = json.loads(text)
        return cls(body["kind"], body["scope"], body["arguments"], body["message"],
                   body["output"], body["by"], body["decided_at"])
