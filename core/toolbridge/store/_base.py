"""The result store's interface and records: keys, stored results, claims."""

from __future__ import annotations

import abc
import json
import json.encoder
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from ..model import Content, ToolCall
from ._owners import owner_alive

if TYPE_CHECKING:
    from ._records import Records

__all__ = ["ResultStore", "StoreClaim", "StoreKey", "StoredResult", "fingerprint"]


def _canonical_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)``, built once.

    The C encoder is called directly where it exists (`json.dumps` builds a new encoder on
    every call, which costs more than encoding small arguments); arguments are JSON data, so
    no cycle check is needed (a cycle still fails, with `RecursionError`).
    """
    reference = json.JSONEncoder(sort_keys=True, separators=(",", ":"), default=str).encode
    probe = {"b": [1.5, None, "é"], "a": True}
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C encoder: the public one
        return reference
    try:
        encode = make(None, str, json.encoder.encode_basestring_ascii, None, ":", ",", True,
                      False, True)
        if "".join(encode(probe, 0)) != reference(probe):
            return reference
    except TypeError:  # another signature: the public encoder
        return reference
    join = "".join
    return lambda value: join(encode(value, 0))


_canonical = _canonical_encoder()


def fingerprint(call: ToolCall) -> str:
    """A call's content (tool and arguments), to catch a call id used for another call."""
    text = call.raw_arguments
    if text is None:
        text = _canonical(call.arguments)
    return f"{call.name}\0{text}"



class StoreKey(NamedTuple):
    """Identifies one call across deliveries."""

    dialect: str
    conversation: str
    """Session or thread."""
    turn: str
    """Turn or run."""
    call_id: str


class StoredResult(NamedTuple):
    """A completed call's answer, without the call (the replay attaches the current one)."""

    success: bool
    output: Any = None
    error: str | None = None

    def to_json(self) -> str:
        """Compact JSON; a `Content` output keeps its parts."""
        if isinstance(self.output, Content):
            body: dict[str, Any] = {"success": self.success, "content": self.output.model_dump()}
        else:
            body = {"success": self.success, "output": self.output}
        if self.error is not None:
            body["error"] = self.error
        return json.dumps(body, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> StoredResult:
        """Inverse of `to_json`."""
        body = json.loads(text)
        output = (Content.model_validate(body["content"]) if "content" in body
                  else body.get("output"))
        return cls(bool(body["success"]), output, body.get("error"))


State = Literal["claimed", "completed", "running", "abandoned"]


class StoreClaim(NamedTuple):
    """What `ResultStore.claim` found.

    ``claimed``: the caller now owns the call and must run it, then `complete` or `release` it.
    ``completed``: ``result`` answers it. ``running``: another live worker holds it.
    ``abandoned``: it started in a worker that is gone and never completed.
    """

    state: State
    fingerprint: str
    """The call's content (tool and arguments) as first stored."""
    owner: str = ""
    started_at: float = 0.0
    result: StoredResult | None = None


class ResultStore(abc.ABC):
    """Where call states live. Methods are synchronous and thread-safe."""

    durable: ClassVar[bool] = False
    """Whether results survive the process."""
    blocking: ClassVar[bool] = False
    """Whether methods do I/O (the async runtime then calls them in a worker thread)."""
    warned_side_effects: bool = False
    """Whether the runtime already warned that a side-effecting tool runs on this store
    although it is not `durable` (it warns once per store)."""

    @abc.abstractmethod
    def claim(self, key: StoreKey, fingerprint: str, tool: str) -> StoreClaim:
        """Mark ``key`` started for a new owner, atomically, or report what is there."""

    def claim_call(self, key: StoreKey, call: ToolCall) -> StoreClaim:
        """`claim` for ``call`` (its `fingerprint` and name): the runtime's entry point.

        A store may defer computing the fingerprint: in a ``claimed`` answer it may be ``""``;
        in every other state it is the stored call's fingerprint text, as `claim` gives it.
        """
        return self.claim(key, fingerprint(call), call.name)

    @abc.abstractmethod
    def take_over(self, key: StoreKey, previous_owner: str) -> str | None:
        """Claim an abandoned call still held by ``previous_owner``: the new owner, or ``None``."""

    @abc.abstractmethod
    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        """Store ``result`` for a call ``owner`` holds; ``False`` if another owner holds it."""

    @abc.abstractmethod
    def release(self, key: StoreKey, owner: str) -> None:
        """Forget a started call ``owner`` holds (it never ran, or may safely run again)."""

    @abc.abstractmethod
    def get(self, key: StoreKey) -> StoreClaim | None:
        """The call's current state, seen by an outsider, or ``None``."""

    def close(self) -> None:  # noqa: B027  (optional for stores without resources)
        """Release resources."""

    def records(self) -> Records | None:
        """This store's `Records` (key/value text beside the calls, same database), or
        ``None`` when it keeps none (the default for third-party stores; the serve driver
        then keeps its checkpoints in memory and warns)."""
        return None

    @staticmethod
    def _found(state: str, fingerprint: str, owner: str, started_at: float,
               result: StoredResult | None) -> StoreClaim:
        if state == "completed":
            return StoreClaim("completed", fingerprint, owner, started_at, result)
        alive = owner_alive(owner)
        return StoreClaim("running" if alive else "abandoned", fingerprint, owner, started_at)


def _digest(fingerprint: str) -> str:
    import hashlib

    return hashlib.blake2b(fingerprint.encode(), digest_size=16).hexdigest()


def _params(key: StoreKey) -> tuple[str, str, str, str]:
    return (key.dialect, key.conversation, key.turn, key.call_id)
