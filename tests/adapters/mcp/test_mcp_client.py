"""`Toolbox.add_mcp`: tools of a server written with the SDK's own server API
(``sdk_server.py``, on stdio) and of our own server (on HTTP), run through the pipeline and
used from an Agents and a Chat conversation on their emulators."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_support import HERE, http_server, lines

import toolbridge
from toolbridge import Toolbox, ToolCall, ToolDefinitionError, UsageError
from toolbridge.testing import converse, emulator

SERVER = [sys.executable, str(HERE / "sdk_server.py")]


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server.log"


@pytest.fixture
def toolbox(log: Path) -> Iterator[Toolbox]:
    with Toolbox(store=None, timeout=30) as box:
        box.add_mcp([*SERVER, str(log)], prefix="desk")
        yield box


def call(name: str, call_id: str = "c1", **arguments: object) -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments, dialect="test")


def test_imported_tools_render_to_every_dialect(toolbox: Toolbox) -> None:
    assert toolbox.names() == ["desk_forecast", "desk_book_room", "desk_explode", "desk_slow",
                               "desk_die", "desk_hold", "desk_reshape", "desk_crunch"]
    forecast = toolbox.get("desk_forecast")
    assert forecast.read_only and not forecast.side_effects
    assert toolbox.get("desk_book_room").side_effects  # MCP's default: not read-only
    assert forecast.parameters["type"] == "object" and "city" in forecast.parameters["required"]
    assert toolbox.get("desk_die").parameters["properties"] == {}
    for name in toolbridge.dialects():
        rendered = toolbox.render(name)
        assert len(rendered.definitions) == len(toolbox), name


def test_calls_map_structured_content_and_is_error(toolbox: Toolbox, log: Path) -> None:
    forecast, booked, exploded = toolbox.execute([
        call("desk_forecast", "1", city="Lima"), call("desk_book_room", "2", room="A"),
        call("desk_explode", "3", reason="boom")])
    assert forecast.success and forecast.output == {"city": "Lima", "temp_c": 14}
    assert booked.success and booked.output == {"result": "booked A"}  # the dotted book.room
    assert not exploded.success and "explode" in (exploded.error or "")
    assert sorted(lines(log)) == ["book A", "forecast Lima"]


def test_the_toolbox_timeout_cancels_a_remote_call(log: Path) -> None:
    with Toolbox(store=None) as box:
        box.add_mcp([*SERVER, str(log)], timeout=0.5)
        slow, = box.execute([call("slow", seconds=600)])
        fast, = box.execute([call("forecast", city="Oslo")])  # the session lives on
    assert not slow.success and "timed out" in (slow.error or "")
    assert fast.success


def test_a_server_that_disappears_gives_error_results(toolbox: Toolbox) -> None:
    died, = toolbox.execute([call("desk_die")])
    after, = toolbox.execute([call("desk_forecast", city="Lima")])
    for result in (died, after):
        assert not result.success and "is gone" in (result.error or ""), result.error


def test_two_servers_collide_without_a_prefix(log: Path) -> None:
    with Toolbox(store=None) as box:
        box.add_mcp([*SERVER, str(log)])
        with pytest.raises(ToolDefinitionError, match="forecast"):
            box.add_mcp([*SERVER, str(log)])
        box.add_mcp([*SERVER, str(log)], prefix="second")
        assert {"forecast", "second_forecast"} <= set(box.names())


def test_an_unreachable_server_is_a_backend_error(tmp_path: Path) -> None:
    with Toolbox(store=None) as box, pytest.raises(toolbridge.BackendError, match="could not"):
        box.add_mcp([sys.executable, "-c", "import sys; sys.exit(2)"], connect_timeout=30)
    assert len(box) == 0


def test_the_missing_extra_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "toolbridge_mcp.client", None)
    with Toolbox(store=None) as box, pytest.raises(UsageError, match=r"toolbridge\[mcp\]"):
        box.add_mcp("http://127.0.0.1:9/mcp")


def test_results_of_imported_side_effects_are_stored(tmp_path: Path, log: Path) -> None:
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
        "index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": None, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": "book_room", "arguments": '{"room": "B"}'}}]}}]}
    with Toolbox(store=f"sqlite:///{tmp_path}/results.db") as box:
        box.add_mcp([*SERVER, str(log)])
        first = box.handle("openai-chat", completion, conversation="conv-1")
        again = box.handle("openai-chat", completion, conversation="conv-1")
    assert first == again
    assert lines(log) == ["book B"]  # the re-delivered call was answered from the store


@pytest.mark.parametrize("dialect", ["openai-agents", "openai-chat"])
def test_imported_tools_in_a_conversation(dialect: str, tmp_path: Path, log: Path) -> None:
    script = {"turns": [{"rounds": [
        [{"name": "desk_forecast", "arguments": {"city": "Lima"}},
         {"name": "desk_book_room", "arguments": {"room": "C"}}]],
        "reply": "Done: {outputs}"}]}
    with Toolbox(store=f"sqlite:///{tmp_path}/results.db") as box:
        box.add_mcp([*SERVER, str(log)], prefix="desk")
        with emulator(dialect, script=script) as emu:
            transcript = converse(box, dialect, "Book room C and check Lima.", running=emu)
            received = emu.state.results_received()
    assert transcript.ok, transcript.render()
    assert len(received) == 2
    assert "temp_c" in transcript.render() and "booked C" in transcript.render()
    assert sorted(lines(log)) == ["book C", "forecast Lima"]


def test_our_own_server_over_http_forwards_the_idempotency_key(tmp_path: Path) -> None:
    """A toolbridge client of a toolbridge server: the call's key travels in ``_meta``, so
    the server answers a re-run of the same call from its store."""
    with http_server(tmp_path) as url, Toolbox(store=None) as box:
        imported = box.add_mcp(url, prefix="shop")
        assert "127.0.0.1" in imported.server
        charge = ToolCall(id="call_9", name="shop_charge", arguments={"amount": 3},
                          dialect="test", conversation="conv", turn="t1")
        first, = box.execute([charge])
        again, = box.execute([charge])  # no store here: it runs again, with the same key
        looked, = box.execute([call("shop_lookup", order=2)])
    assert first.success and again.success and first.output == again.output == "charged 3"
    assert len(lines(tmp_path / "effects.log")) == 1
    assert looked.output == {"order": 2, "status": "shipped"}


def test_credentials_in_a_url_stay_out_of_messages() -> None:
    with Toolbox(store=None) as box, pytest.raises(toolbridge.BackendError) as caught:
        box.add_mcp("http://ana:s3cret@127.0.0.1:9/mcp?token=abc123", connect_timeout=30)
    text = f"{caught.value} {caught.value!r}"
    assert "127.0.0.1:9/mcp" in text
    assert "s3cret" not in text and "abc123" not in text


def test_imported_tools_wait_for_approval(tmp_path: Path, log: Path) -> None:
    from toolbridge.errors import AwaitingApproval

    booking = ToolCall(id="call_1", name="book_room", arguments={"room": "D"}, dialect="test",
                       conversation="conv", turn="t1")
    with Toolbox(store=f"sqlite:///{tmp_path}/results.db") as box:
        box.add_mcp([*SERVER, str(log)],
                    needs_approval=lambda call: call.name == "book_room")
        with pytest.raises(AwaitingApproval) as waiting:
            box.execute([booking])
        assert lines(log) == []  # nothing ran before the decision
        box.approvals.approve(waiting.value.requests[0], by="ana")
        booked, = box.execute([booking])
        again, = box.execute([booking])
    assert booked.output == again.output == {"result": "booked D"}
    assert lines(log) == ["book D"]
