"""``toolbridge convert`` between the built-in dialects and from OpenAPI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import toolbridge
from toolbridge.cli import main
from toolbridge.examples import toolbox

OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "Pets", "version": "1"},
    "servers": [{"url": "https://pets.example"}],
    "paths": {"/pets/{petId}": {"get": {
        "operationId": "getPet", "summary": "Fetch one pet.",
        "parameters": [{"name": "petId", "in": "path", "required": True,
                        "schema": {"type": "integer"}},
                       {"name": "verbose", "in": "query", "schema": {"type": "boolean",
                                                                       "nullable": True}}],
        "responses": {"200": {"description": "ok"}}}}},
}


def _convert(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: Any, source: str,
             target: str) -> dict[str, Any]:
    """stdout: the tool list the backend takes; the report (``losses``, ``skipped``) in a file."""
    path, report = tmp_path / "tools.json", tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code = main(["convert", "--from", source, "--to", target, "--report", str(report),
                 str(path)])
    out, err = capsys.readouterr()
    assert code == 0, err
    tools = json.loads(out)
    assert isinstance(tools, list), "convert prints the tool list itself"
    result: dict[str, Any] = {"tools": tools, **json.loads(report.read_text())}
    return result


def test_the_report_goes_to_stderr_without_report_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wire = toolbridge.get_dialect("openai-assistants").render_tools(list(toolbox)).definitions
    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"type": "file_search"}, *wire]), encoding="utf-8")
    assert main(["convert", "--from", "openai-assistants", "--to", "google-ces",
                 str(path)]) == 0
    out, err = capsys.readouterr()
    tools = json.loads(out)  # stdout is the tool list alone, ready for the backend
    read = toolbridge.get_dialect("google-ces").read_tools(tools)
    assert [t.name for t in read] == toolbox.names()
    assert "toolbridge: skipped:" in err and "file_search" in err
    assert "toolbridge: loss:" in err


def test_assistants_to_agents(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wire = toolbridge.get_dialect("openai-assistants").render_tools(list(toolbox)).definitions
    result = _convert(tmp_path, capsys, {"tools": [{"type": "file_search"}, *wire]},
                      "openai-assistants", "openai-agents")
    assert [t["name"] for t in result["tools"]] == toolbox.names()
    assert all(t["type"] == "function" and t["description"] for t in result["tools"])
    assert toolbridge.get_dialect("openai-agents").read_tools(result["tools"])


def test_ces_to_assistants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wire = toolbridge.get_dialect("google-ces").render_tools(list(toolbox)).definitions
    result = _convert(tmp_path, capsys, wire, "google-ces", "openai-assistants")
    functions = [t["function"] for t in result["tools"]]
    assert [f["name"] for f in functions] == toolbox.names()
    weather = functions[toolbox.names().index("get_weather")]
    assert weather["parameters"]["properties"]["days"]["type"] == ["integer", "null"]


def test_openapi_to_ces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = _convert(tmp_path, capsys, OPENAPI, "openapi", "google-ces")
    (tool,) = result["tools"]
    params = tool["clientFunction"]["parameters"]
    assert tool["clientFunction"]["name"] == "getPet"
    assert params["properties"]["petId"]["type"] == "INTEGER"
    assert params["required"] == ["petId"]
    assert toolbridge.get_dialect("google-ces").read_tools(result["tools"])[0].name == "getPet"


def test_malformed_input_is_a_failure_naming_the_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"type": "function", "function": {"name": 3}}]))
    assert main(["convert", "--from", "openai-assistants", "--to", "google-ces",
                 str(path)]) != 0
    assert "tools[0].function.name" in capsys.readouterr().err
