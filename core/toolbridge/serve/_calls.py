"""Where each call of a conversation stands: running, ready, being sent, submitted (no I/O)."""

from __future__ import annotations

from collections.abc import Sequence

from ..model import ToolCall, ToolResult
from ..plugin import Backend, Dialect, DialectLimits, Step
from ._record import Key, remember

__all__ = ["CallTracker"]

_NONE: frozenset[Key] = frozenset()


class CallTracker:
    """The driver's bookkeeping of calls by (turn, id), and of the step they answer.

    A backend with `toolbridge.plugin.Backend.partial_submit` takes each result as it is
    ready; any other takes the step's results together, once all are ready.
    """

    __slots__ = ("_backend", "_by_id", "inflight", "last_round", "ready", "repeats", "sending",
                 "step", "step_keys", "submitted")

    def __init__(self, backend: Backend) -> None:
        self._backend = backend
        limits = backend.dialect.limits if isinstance(backend.dialect, Dialect) else (
            DialectLimits())
        self._by_id = not (limits.repeated_result_ids or limits.results_match_by_tool)
        """The wire matches results to calls by id alone: it keeps one result per id, so an
        id answered before in the turn is never pending again (a later round listing it
        reuses it, and is not answered for it)."""
        self.inflight: dict[Key, None] = {}
        self.ready: dict[Key, ToolResult] = {}
        self.repeats: dict[Key, list[ToolResult]] = {}
        """The error results of calls repeating a ready call's (turn, id), sent with it where
        the wire carries them (`toolbridge.plugin.DialectLimits.repeated_result_ids`)."""
        self.submitted: dict[Key, None] = {}
        """Calls submitted, oldest first (an ordered set, bounded)."""
        self.step: Step | None = None
        """The latest step with calls (its calls are submitted together unless partial)."""
        self.step_keys: list[Key] = []
        self.last_round: frozenset[Key] = _NONE
        """The calls of the last whole step submitted (a backend without `partial_submit`): a
        step listing other calls is a new round, whose every call is answered (again)."""
        self.sending: frozenset[Key] = _NONE
        """The calls of the submission in flight (a step read meanwhile may still list them)."""

    # ------------------------------------------------------------------ steps in
    def new(self, step: Step, calls: Sequence[ToolCall], keys: Sequence[Key]) -> list[ToolCall]:
        """The calls of ``step`` neither running, ready, being sent nor submitted."""
        if step.fresh or (not self._backend.partial_submit and not self._by_id
                          and frozenset(keys) != self.last_round):
            # Read from the service, or a new round that lists an id answered before (a model
            # may reuse one) on a wire that waits for every call it lists: each call is
            # answered, from the store when it holds the call.
            for key in keys:
                self.submitted.pop(key, None)
        return [c for c, k in zip(calls, keys, strict=True)
                if k not in self.inflight and k not in self.submitted and k not in self.ready
                and k not in self.sending]

    def new_round(self, keys: Sequence[Key]) -> bool:
        """Whether new calls of a step listing ``keys`` are a round of their own."""
        return not self._backend.partial_submit or self.step is None or not (
            set(keys) & set(self.step_keys))

    def adopt(self, step: Step, keys: list[Key], new: bool) -> None:
        """Answer ``step`` next (results of calls it no longer lists are dropped, unless each
        result goes on its own); with ``partial_submit``, only a step with ``new`` calls."""
        if not self._backend.partial_submit:
            if self._by_id:  # ids answered for good are not the step's to answer
                keys = [k for k in keys if k not in self.submitted]
            self.step, self.step_keys = step, keys
            current = set(keys)
            self.ready = {k: r for k, r in self.ready.items() if k in current}
        elif new:
            self.step, self.step_keys = step, keys

    def answered(self, keys: Sequence[Key]) -> bool:
        """Nothing runs or waits to be sent, and each of ``keys`` was submitted."""
        return not self.inflight and not self.ready and all(k in self.submitted for k in keys)

    # ------------------------------------------------------------------ calls
    def start(self, calls: Sequence[ToolCall]) -> list[list[ToolCall]]:
        """``calls`` in batches for the toolbox (one per call id where results may go
        separately, with the calls repeating its id; else one), each marked running."""
        if self._backend.partial_submit:
            groups: dict[Key, list[ToolCall]] = {}
            for call in calls:
                groups.setdefault((call.turn, call.id), []).append(call)
            batches = list(groups.values())
        else:
            batches = [list(calls)] if calls else []
        for batch in batches:
            self.inflight.update(dict.fromkeys((c.turn, c.id) for c in batch))
        return batches

    def dropped(self, calls: Sequence[ToolCall]) -> None:
        """``calls`` stopped running without results."""
        for call in calls:
            self.inflight.pop((call.turn, call.id), None)

    def take(self, results: Sequence[ToolResult]) -> None:
        """``results`` are ready (unless their call is no longer the step's)."""
        current = set(self.step_keys)
        taken: set[Key] = set()
        for result in results:
            key = (result.call.turn, result.call.id)
            if key in taken:  # a call repeating an earlier one's id: its error result
                self.repeats.setdefault(key, []).append(result)
                continue
            taken.add(key)
            self.inflight.pop(key, None)
            if self._backend.partial_submit or key in current:
                self.ready[key] = result

    # ------------------------------------------------------------------ results out
    def submittable(self) -> bool:
        if not self.ready or self.step is None:
            return False
        return self._backend.partial_submit or all(k in self.ready for k in self.step_keys)

    def batch(self) -> tuple[Step, list[Key], list[ToolResult]]:
        """The ready results to submit now, with their step and keys: no longer ready, being
        sent from now on (a step read while their checkpoint is saved does not start them)."""
        keys = list(self.ready) if self._backend.partial_submit else list(
            dict.fromkeys(self.step_keys))
        results = [r for k in keys for r in (self.ready.pop(k), *self.repeats.pop(k, ()))]
        assert self.step is not None
        self.sending = frozenset(keys) if keys else _NONE
        return self.step, keys, results

    def sent(self, keys: Sequence[Key], *, landed: bool) -> None:
        """The submission of ``keys`` is over: it ``landed``, or failed."""
        self.sending = _NONE
        if not landed:
            return
        for key in keys:
            remember(self.submitted, key)
        if keys and not self._backend.partial_submit:
            self.last_round = frozenset(keys)

    def clear(self) -> None:
        """The turn is over: forget its calls (not which were submitted)."""
        self.inflight.clear()
        self.ready.clear()
        self.repeats.clear()
        self.step, self.step_keys, self.sending = None, [], _NONE
