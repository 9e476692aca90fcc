"""A re-delivery in an equivalent encoding replays its result, through the real dialects.

The fingerprint that catches a call id used again for another call is taken on the decoded
arguments' canonical JSON, so another encoding of the same call is the same call.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge import Toolbox

ADAPTERS = Path(__file__).resolve().parents[1] / "adapters"
SESSION = "projects/p/locations/us/apps/a/sessions/session-0001"


def counting(store: str) -> tuple[Toolbox, list[int]]:
    box, ran = Toolbox(store=store), []

    @box.tool
    def pick(n: int, tags: list[str], where: dict[str, str]) -> str:
        ran.append(n)
        return f"picked {n}"

    return box, ran


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return "memory://" if request.param == "memory" else f"sqlite:///{tmp_path / 'r.db'}"


def agents_session(arguments: Any) -> dict[str, Any]:
    sample = json.loads((ADAPTERS / "openai_agents" / "payloads" /
                         "openai-agents-sessions.session.retrieve.response.json").read_text())
    action = {"type": "function_call", "turn_id": "turn_1", "call_id": "call_1", "name": "pick",
              "arguments": arguments}
    return {**sample, "required_actions": [action]}


def assistants_run(arguments: str) -> dict[str, Any]:
    run = json.loads((ADAPTERS / "openai_assistants" / "payloads" /
                      "openai-assistants-runs.run.requires-action.response.json").read_text())
    run = copy.deepcopy(run)
    run["required_action"]["submit_tool_outputs"]["tool_calls"] = [
        {"id": "call_1", "type": "function", "function": {"name": "pick",
                                                           "arguments": arguments}}]
    return run


def ces_response(args: dict[str, Any]) -> dict[str, Any]:
    return {"outputs": [{"toolCalls": {"toolCalls": [
        {"id": "toolcall-1", "tool": f"{SESSION.rsplit('/sessions', 1)[0]}/tools/pick",
         "displayName": "pick", "args": args}]}, "turnIndex": 1}]}


ARGS = {"n": 2, "tags": ["a", "b"], "where": {"city": "Oslo", "zip": "0150"}}


def replays(box: Toolbox, ran: list[int], dialect: Any, first: Any, again: Any) -> None:
    one = box.handle(dialect, first)
    two = box.handle(dialect, again)
    assert ran == [2], "the re-delivery ran the call again (or refused it)"
    assert json.dumps(one, sort_keys=True) == json.dumps(two, sort_keys=True)
    assert "already used" not in json.dumps(two)


def test_agents_arguments_as_json_text_or_as_an_object(store: str) -> None:
    box, ran = counting(store)
    text = json.dumps(ARGS, indent=2)  # the text form, with its own spacing
    replays(box, ran, "openai-agents", agents_session(ARGS), agents_session(text))


def test_assistants_arguments_with_other_whitespace_and_key_order(store: str) -> None:
    box, ran = counting(store)
    compact = json.dumps(ARGS, separators=(",", ":"))
    spaced = json.dumps(dict(reversed(list(ARGS.items()))), indent=4)
    replays(box, ran, "openai-assistants", assistants_run(compact), assistants_run(spaced))


def test_ces_doubles_for_integers(store: str) -> None:
    box, ran = counting(store)
    ces = toolbridge.get_dialect("google-ces").bind(SESSION)  # type: ignore[attr-defined]
    doubled = {**ARGS, "n": 2.0}  # a Struct carries every number as a double
    replays(box, ran, ces, ces_response(ARGS), ces_response(doubled))


def test_other_arguments_are_still_refused(store: str) -> None:
    box, ran = counting(store)
    box.handle("openai-agents", agents_session(ARGS))
    body = box.handle("openai-agents", agents_session({**ARGS, "n": 3}))
    assert "already used in this turn for a different call" in json.dumps(body)
    assert ran == [2]
