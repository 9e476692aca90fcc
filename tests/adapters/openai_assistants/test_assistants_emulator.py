"""The emulator is strict like the real service: real status codes and error texts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from assistants_support import PARALLEL, D, weather_toolbox
from openai.types.beta.threads.run import Run
from openai_sdk_types import check_model

from toolbridge.testing import emulator

HEADERS = {"Authorization": "Bearer sk-test", "OpenAI-Beta": "assistants=v2"}


class Api:
    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base + "/v1", headers=HEADERS)

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.http.post(path, json=body)

    def ok(self, path: str, body: Any = None) -> Any:
        response = self.http.post(path, json=body or {}) if body is not None else self.http.get(
            path)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture
def waiting() -> Iterator[tuple[Api, dict[str, Any], Any]]:
    """A run waiting on two parallel calls."""
    with emulator(D, script=PARALLEL, expire_after=1.0) as emu:
        api = Api(emu.base_url)
        assistant = api.ok("/assistants", {"model": "gpt-4o",
                                           "tools": weather_toolbox().definitions(D)})
        thread = api.ok("/threads", {})
        api.ok(f"/threads/{thread['id']}/messages", {"role": "user", "content": "hi"})
        run = api.ok(f"/threads/{thread['id']}/runs", {"assistant_id": assistant["id"]})
        path = f"/threads/{thread['id']}/runs/{run['id']}"
        while run["status"] != "requires_action":
            run = api.ok(path)
        yield api, run, emu


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def _submit(api: Api, run: dict[str, Any], outputs: Any) -> httpx.Response:
    return api.post(f"/threads/{run['thread_id']}/runs/{run['id']}/submit_tool_outputs",
                    {"tool_outputs": outputs} if outputs is not None else {})


def test_runs_validate_against_the_sdk(waiting: tuple[Api, dict[str, Any], Any]) -> None:
    assert check_model(waiting[1], Run) == []


def test_partial_and_unknown_submissions_are_refused(
        waiting: tuple[Api, dict[str, Any], Any]) -> None:
    api, run, _ = waiting
    ids = [c["id"] for c in run["required_action"]["submit_tool_outputs"]["tool_calls"]]
    error = _error(_submit(api, run, [{"tool_call_id": ids[0], "output": "x"}]), 400)
    assert error["message"] == f"Expected tool outputs for call_ids {ids}, got {ids[:1]}"
    wrong = [{"tool_call_id": ids[0], "output": "x"}, {"tool_call_id": "call_zz", "output": "y"}]
    assert "call_zz" in _error(_submit(api, run, wrong), 400)["message"]


def test_missing_fields_and_wrong_types(waiting: tuple[Api, dict[str, Any], Any]) -> None:
    api, run, _ = waiting
    error = _error(_submit(api, run, None), 400)
    assert (error["message"], error["code"], error["param"]) == (
        "Missing required parameter: 'tool_outputs'.", "missing_required_parameter",
        "tool_outputs")
    error = _error(_submit(api, run, [{"tool_call_id": "c"}]), 400)
    assert error["param"] == "tool_outputs[0].output"
    error = _error(_submit(api, run, [{"tool_call_id": "c", "output": {"a": 1}}]), 400)
    assert error["code"] == "invalid_type"


def test_output_too_long(waiting: tuple[Api, dict[str, Any], Any]) -> None:
    api, run, _ = waiting
    ids = [c["id"] for c in run["required_action"]["submit_tool_outputs"]["tool_calls"]]
    outputs = [{"tool_call_id": i, "output": "x" * 1_048_577} for i in ids]
    error = _error(_submit(api, run, outputs), 400)
    assert error["code"] == "string_above_max_length"
    assert error["message"].startswith("Invalid 'tool_outputs[0].output': string too long.")


def test_submission_to_an_expired_run(waiting: tuple[Api, dict[str, Any], Any]) -> None:
    api, run, _ = waiting
    ids = [c["id"] for c in run["required_action"]["submit_tool_outputs"]["tool_calls"]]
    time.sleep(1.05)
    error = _error(_submit(api, run, [{"tool_call_id": i, "output": "x"} for i in ids]), 400)
    assert error["message"] == 'Runs in status "expired" do not accept tool outputs.'
    assert api.ok(f"/threads/{run['thread_id']}/runs/{run['id']}")["status"] == "expired"


def test_cancel_and_second_run_on_a_busy_thread(
        waiting: tuple[Api, dict[str, Any], Any]) -> None:
    api, run, _ = waiting
    busy = api.post(f"/threads/{run['thread_id']}/runs", {"assistant_id": run["assistant_id"]})
    assert _error(busy, 400)["message"] == (
        f"Thread {run['thread_id']} already has an active run {run['id']}.")
    path = f"/threads/{run['thread_id']}/runs/{run['id']}"
    assert api.ok(path + "/cancel", {})["status"] == "cancelled"
    assert _error(api.post(path + "/cancel", {}), 400)["message"] == (
        "Cannot cancel run with status 'cancelled'.")


def test_unknown_ids_and_missing_assistant_id() -> None:
    with emulator(D) as emu:
        api = Api(emu.base_url)
        assert _error(api.http.get("/threads/thread_x"), 404)["message"] == (
            "No thread found with id 'thread_x'.")
        thread = api.ok("/threads", {})
        error = _error(api.post(f"/threads/{thread['id']}/runs", {}), 400)
        assert error["message"] == "Missing required parameter: 'assistant_id'."
        error = _error(api.post(f"/threads/{thread['id']}/runs", {"assistant_id": "asst_x"}),
                       404)
        assert error["message"] == "No assistant found with id 'asst_x'."


def test_strict_tool_schemas_are_checked() -> None:
    loose = {"type": "function", "function": {"name": "f", "strict": True, "parameters": {
        "type": "object", "properties": {"a": {"type": "string"}}}}}
    with emulator(D) as emu:
        error = _error(Api(emu.base_url).post("/assistants", {"model": "m", "tools": [loose]}),
                       400)
    assert error["code"] == "invalid_function_parameters"


def test_auth_beta_header_and_azure_api_version() -> None:
    with emulator(D) as emu:
        assert httpx.post(emu.base_url + "/v1/threads", json={}).status_code == 401
        no_beta = httpx.post(emu.base_url + "/v1/threads", json={},
                             headers={"Authorization": "Bearer k"})
        assert "OpenAI-Beta" in _error(no_beta, 400)["message"]
        azure = emu.base_url + "/openai/threads"
        assert httpx.post(azure, json={}, headers={"api-key": "k"}).status_code == 404
        assert httpx.post(azure + "?api-version=2024-07-01-preview", json={}).status_code == 401
        ok = httpx.post(azure + "?api-version=2024-07-01-preview", json={},
                        headers={"api-key": "k"})
        assert ok.status_code == 200 and ok.headers["openai-poll-after-ms"] == "20"


def test_stream_ends_with_done_and_script_errors_fail_the_run() -> None:
    bad = {"turns": [{"rounds": [[{"name": "nope", "arguments": {}}]]}]}
    with emulator(D, script=bad) as emu:
        api = Api(emu.base_url)
        assistant = api.ok("/assistants", {"model": "m", "tools": []})
        thread = api.ok("/threads", {"messages": [{"role": "user", "content": "hi"}]})
        response = api.post(f"/threads/{thread['id']}/runs",
                            {"assistant_id": assistant["id"], "stream": True})
    assert response.headers["content-type"].startswith("text/event-stream")
    assert response.text.endswith("data: [DONE]\n\n")
    assert "event: thread.run.failed" in response.text and "nope" in response.text


def test_unknown_paths_answer_the_service_404() -> None:
    with emulator(D) as emu:
        azure = httpx.post(emu.base_url + "/openai/deployments/gpt-4o/threads",
                           params={"api-version": "2024-07-01-preview"}, json={},
                           headers={"api-key": "k"})
        openai = Api(emu.base_url).http.get("/nope/threads")
    assert azure.status_code == 404
    assert azure.json() == {"error": {"code": "404", "message": "Resource not found"}}
    assert _error(openai, 404)["message"] == "Invalid URL (GET /v1/nope/threads)"


def _first_run(script: dict[str, Any]) -> dict[str, Any]:
    """The run of ``script``'s first turn once it stops (requires_action or failed)."""
    with emulator(D, script=script) as emu:
        api = Api(emu.base_url)
        assistant = api.ok("/assistants", {"model": "gpt-4o",
                                           "tools": weather_toolbox().definitions(D)})
        thread = api.ok("/threads", {})
        api.ok(f"/threads/{thread['id']}/messages", {"role": "user", "content": "hi"})
        run = api.ok(f"/threads/{thread['id']}/runs", {"assistant_id": assistant["id"]})
        while run["status"] in ("queued", "in_progress"):
            run = api.ok(f"/threads/{thread['id']}/runs/{run['id']}")
        return dict(run)


def _arguments(run: dict[str, Any]) -> list[str]:
    return [c["function"]["arguments"]
            for c in run["required_action"]["submit_tool_outputs"]["tool_calls"]]


def test_a_strict_tool_gets_null_for_each_absent_optional_argument() -> None:
    # The script leaves `unit` out, as it would for Agents or CES; a strict model sends null.
    run = _first_run({"turns": [{"rounds": [[
        {"name": "get_weather", "arguments": {"location": "Paris"}},
        {"name": "get_time", "arguments": {"tz": "UTC"}}]]}]})
    assert _arguments(run) == ['{"location": "Paris", "unit": null}', '{"tz": "UTC"}']


def test_a_strict_tool_still_needs_its_required_arguments() -> None:
    run = _first_run({"turns": [{"rounds": [[{"name": "get_weather", "arguments": {}}]]}]})
    assert run["status"] == "failed"
    assert "'location' is a required property" in run["last_error"]["message"]


def test_broken_json_is_sent_as_the_arguments_text() -> None:
    run = _first_run({"turns": [{"rounds": [[
        {"name": "get_time", "raw_arguments": '{"tz": "UTC"', "misbehave": "broken_json"}]]}]})
    assert _arguments(run) == ['{"tz": "UTC"']
