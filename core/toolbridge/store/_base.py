"""The result store's interface (in batches) and its records: keys, claims, results."""

from __future__ import annotations

import abc
import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, Protocol

from pydantic_core import to_json

from ..errors import UsageError
from ..model import Content
from ._owners import owner_alive

if TYPE_CHECKING:
    from ._records import Records

__all__ = [
    "ResultStore", "StoreCall", "StoreClaim", "StoreCompletion", "StoreKey", "StoredResult",
    "fingerprint", "idempotency_key",
]


def _sorted(value: Any) -> Any:
    """``value`` with every object's keys in sorted order."""
    kind = type(value)
    if kind is dict:
        return _sorted_object(value)
    if kind is list or kind is tuple:
        return _sorted_array(value)
    return value


def _sorted_object(value: dict[Any, Any]) -> dict[Any, Any]:
    # scalars are copied in place, not passed through a call each: most arguments are flat
    out = {}
    for key in sorted(value):
        item = value[key]
        kind = type(item)
        if kind is dict:
            item = _sorted_object(item)
        elif kind is list or kind is tuple:
            item = _sorted_array(item)
        out[key] = item
    return out


def _sorted_array(value: list[Any] | tuple[Any, ...]) -> list[Any]:
    out = []
    for item in value:
        kind = type(item)
        if kind is dict:
            item = _sorted_object(item)
        elif kind is list or kind is tuple:
            item = _sorted_array(item)
        out.append(item)
    return out


def fingerprint(tool: str, arguments: Mapping[str, Any]) -> str:
    """A call's content, to catch a call id used again for another call: the tool's name and
    the canonical JSON of its decoded arguments (sorted keys, no spaces, UTF-8 text).

    Decoded means after the dialect's `decode_arguments`, so a re-delivery in an equivalent
    encoding (arguments as JSON text or as an object, other whitespace, ``2.0`` for ``2``
    where the wire sends every number as a double) has the same fingerprint.
    """
    return f"{tool}\0{to_json(_sorted(arguments)).decode()}"


class StoreKey(NamedTuple):
    """Identifies one call across deliveries."""

    dialect: str
    conversation: str
    """Session or thread."""
    turn: str
    """Turn or run."""
    call_id: str


def idempotency_key(key: StoreKey) -> str:
    """The call's idempotency key: the same for every delivery, retry, worker and resumed
    conversation of the call (it is made of its store key alone), distinct between calls.

    ``tb_`` and 32 hex digits (a 128-bit BLAKE2b digest of the key's four parts), short and
    plain enough for any downstream API's ``Idempotency-Key`` header.
    """
    hashed = hashlib.blake2b("\0".join(key).encode(), digest_size=16,
                             person=b"toolbridge-idem")
    return "tb_" + hashed.hexdigest()


class StoredResult(NamedTuple):
    """A completed call's answer, without the call (the replay attaches the current one)."""

    success: bool
    output: Any = None
    error: str | None = None

    def to_json(self, output_json: str | None = None) -> str:
        """Compact JSON; a `Content` output keeps its parts. ``output_json``: the output
        already encoded (compact JSON), used as is."""
        return result_json(self[0], self[1], self[2], output_json)

    @classmethod
    def from_json(cls, text: str) -> StoredResult:
        """Inverse of `to_json`."""
        body = json.loads(text)
        output = (Content.model_validate(body["content"]) if "content" in body
                  else body.get("output"))
        return cls(bool(body["success"]), output, body.get("error"))


def result_json(success: bool | None, output: Any, error: str | None,
                output_json: str | None = None) -> str:
    """`StoredResult.to_json` of a result given by its fields (a store writing a runtime
    record's fields, `ResultFields`, makes no `StoredResult` first)."""
    if output_json is None:
        if isinstance(output, Content):
            body = '"content":' + json.dumps(output.model_dump(), separators=(",", ":"),
                                             ensure_ascii=False)
        else:
            body = '"output":' + json.dumps(output, separators=(",", ":"), ensure_ascii=False)
    else:
        body = '"output":' + output_json
    head = '{"success":true,' if success else '{"success":false,'
    if error is None:
        return head + body + "}"
    return head + body + ',"error":' + json.dumps(error, ensure_ascii=False) + "}"


class StoreCall(NamedTuple):
    """One call to claim: its key, and what identifies its content (see `fingerprint`)."""

    key: StoreKey
    tool: str
    arguments: Mapping[str, Any]
    """The decoded arguments; a store keeps their `fingerprint` (or what makes it)."""
    approval: str | None = None
    """The call's `ApprovalRequest` as JSON when a person must approve it first: a new call
    is then stored ``awaiting`` with it, not claimed (a store with `ResultStore.approvals`)."""


class StoreCompletion(NamedTuple):
    """A result to store for a call ``owner`` holds."""

    key: StoreKey
    owner: str
    result: StoredResult
    output_json: str | None = None
    """The output already encoded as compact JSON, when the runtime has it (a store that
    keeps JSON text may use it instead of encoding again)."""


State = Literal["claimed", "completed", "running", "abandoned", "reused", "awaiting"]


class StoreClaim(NamedTuple):
    """What the store holds for a call, as `ResultStore.claim` (or `lookup`) found it.

    ``claimed``: the caller now owns the call: it runs it, then completes or releases it;
    ``started_at`` is 0, or when a worker that is gone entered its handler (the call was
    taken over from it). ``completed``: ``result`` answers it. ``running``: another live
    worker holds it. ``abandoned`` (seen by `lookup` only): held by a worker that is gone.
    ``reused``: the key holds another call (another tool or other arguments).
    ``awaiting``: the call waits for a person's decision on ``request``.
    """

    state: State
    owner: str = ""
    started_at: float = 0.0
    """When the handler was entered (a Unix time), 0 if it never was."""
    result: StoredResult | None = None
    request: str | None = None
    """The call's approval request (JSON), when it has one."""
    decision: str | None = None
    """``claimed``: the decision this claim consumed (JSON), when the call awaited one."""


_new_tuple = tuple.__new__  # StoreCall(...) without its Python __new__
Owned = tuple[StoreKey, str]
"""A call and the owner that holds it."""


class ResultFields(Protocol):
    """A call's result as `ResultStore.complete_claimed` reads it: `StoredResult`'s fields, and
    ``text``, the output already encoded as compact JSON (or ``None``)."""

    @property
    def success(self) -> bool | None: ...

    @property
    def output(self) -> Any: ...

    @property
    def error(self) -> str | None: ...

    @property
    def text(self) -> str | None: ...


class ResultStore(abc.ABC):
    """Where call states live: claimed, started, completed. Methods are thread-safe.

    The runtime works in batches: one `claim` for a payload's calls, `write` for the states
    and results that follow (each batch is one transaction where the store has them). It
    claims and completes a payload's calls as columns (`claim_new`, `complete_claimed`), whose
    defaults call `claim` and `write`: a store implements the protocol alone.
    """

    durable: ClassVar[bool] = False
    """Whether results survive the process."""
    blocking: ClassVar[bool] = False
    """Whether methods do I/O (the async runtime then calls them in a worker thread)."""
    approvals: ClassVar[bool] = False
    """Whether the store keeps approval requests and decisions (`decide`, `awaiting`, and
    claims of calls with `StoreCall.approval`); calls that need approval are refused on a
    store that does not."""
    warned_side_effects: bool = False
    """Whether the warning that a side-effecting tool runs on this store although it is not
    `durable` is settled: the runtime warns once per store, and `toolbridge.Toolbox` sets it
    for a store the user chose (only its implicit default warns)."""

    @abc.abstractmethod
    def claim(self, calls: Sequence[StoreCall]) -> list[StoreClaim]:
        """Claim ``calls`` (distinct keys) for one new owner, atomically; one answer each.

        A call the store does not hold, or one held (claimed or started, never completed) by
        a worker that is gone, becomes ``claimed`` by the new owner in the same transaction.
        """

    @abc.abstractmethod
    def write(self, *, started: Sequence[Owned] = (),
              completed: Sequence[StoreCompletion] = (),
              released: Sequence[Owned] = ()) -> list[bool]:
        """In one transaction: mark ``started`` calls as entered, store ``completed`` results,
        forget ``released`` calls (never completed ones). Each change applies only to a call
        its owner still holds; the answer says, per completion, whether it applied."""

    @abc.abstractmethod
    def lookup(self, keys: Sequence[StoreKey]) -> list[StoreClaim | None]:
        """What is stored for each key, seen by an outsider (never ``claimed``)."""

    @abc.abstractmethod
    def prune(self, older_than: float) -> int:
        """Delete calls completed more than ``older_than`` seconds ago; the count."""

    def close(self) -> None:  # noqa: B027  (optional for stores without resources)
        """Release resources."""

    def records(self) -> Records | None:
        """This store's `Records` (key/value text beside the calls, same database), or
        ``None`` when it keeps none (the default for third-party stores; the serve driver
        then keeps its checkpoints in memory and warns)."""
        return None

    # ------------------------------------------------------------------ approvals
    def decide(self, key: StoreKey, digest: str, decision: str) -> bool:
        """Store ``decision`` (JSON) for the awaiting call ``key`` whose fingerprint digest is
        ``digest``, atomically; ``False`` when the call does not await one (decided already,
        or another call)."""
        raise UsageError(f"{type(self).__name__} keeps no approvals")

    def awaiting(self) -> list[tuple[str, str | None]]:
        """Every awaiting call's request and decision (JSON; ``None``: undecided)."""
        raise UsageError(f"{type(self).__name__} keeps no approvals")

    # ------------------------------------------------------------------ a payload's common path
    def claim_new(self, keys: Sequence[StoreKey], tools: Sequence[str],
                  arguments: Sequence[Mapping[str, Any]]) -> list[StoreClaim]:
        """`claim` of calls given as columns, none of them needing approval: what the runtime
        calls for a payload. The default makes the `StoreCall` list; a store may keep the
        batch as it comes (`MemoryStore` keeps one record for a payload of new calls)."""
        return self.claim([_new_tuple(StoreCall, (key, tool, args, None)) for key, tool, args
                           in zip(keys, tools, arguments, strict=True)])

    def complete_claimed(self, owner: str, keys: Sequence[StoreKey],
                         results: Sequence[ResultFields]) -> list[bool]:
        """`write` of the results of calls ``owner`` holds, each given by its fields (the
        runtime hands its own per-call records): what the runtime calls at a payload's end.
        The default makes the `StoreCompletion` list."""
        return self.write(completed=[_new_tuple(StoreCompletion, (key, owner, _new_tuple(
            StoredResult, (r.success, r.output, r.error)), r.text))
            for key, r in zip(keys, results, strict=True)])

    # ------------------------------------------------------------------ one call at a time
    def claim_one(self, key: StoreKey, tool: str, arguments: Mapping[str, Any]) -> StoreClaim:
        """`claim` of one call."""
        return self.claim([StoreCall(key, tool, arguments)])[0]

    def start(self, key: StoreKey, owner: str) -> None:
        """Mark a call ``owner`` holds as started (its handler is about to be entered)."""
        self.write(started=[(key, owner)])

    def complete(self, key: StoreKey, owner: str, result: StoredResult) -> bool:
        """Store ``result`` for a call ``owner`` holds; ``False`` if it does not hold it."""
        return self.write(completed=[StoreCompletion(key, owner, result)])[0]

    def release(self, key: StoreKey, owner: str) -> None:
        """Forget a call ``owner`` holds and never completed (it may run again)."""
        self.write(released=[(key, owner)])

    def get(self, key: StoreKey) -> StoreClaim | None:
        """`lookup` of one key."""
        return self.lookup([key])[0]

    @staticmethod
    def _seen(state: str, owner: str, started_at: float | None,
              result: StoredResult | None, request: str | None = None) -> StoreClaim:
        """A stored row as an outsider sees it: completed, awaiting, or running / abandoned
        by its owner."""
        started = started_at or 0.0
        if state == "awaiting":
            return StoreClaim("awaiting", request=request)
        if state == "completed":
            return StoreClaim("completed", owner, started, result)
        return StoreClaim("running" if owner_alive(owner) else "abandoned", owner, started)


def digest(text: str) -> str:
    """What the SQL stores keep of a fingerprint."""
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def fingerprint_digest(tool: str, arguments: Mapping[str, Any]) -> str:
    """``digest(fingerprint(tool, arguments))``, without decoding and encoding the text."""
    hashed = hashlib.blake2b(tool.encode(), digest_size=16)
    hashed.update(b"\0")
    hashed.update(to_json(_sorted(arguments)))
    return hashed.hexdigest()
