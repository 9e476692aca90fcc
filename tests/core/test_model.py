from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from toolbridge import (
    Content,
    Correlation,
    DocumentPart,
    ImagePart,
    TextPart,
    ToolCall,
    ToolChoice,
    ToolDefinition,
    ToolResult,
)


def test_definition_is_frozen_and_checks_names() -> None:
    d = ToolDefinition(name="get_weather", description="Forecast")
    with pytest.raises(ValidationError):
        d.name = "other"  # type: ignore[misc]
    for bad in ("has space", "", "x" * 65, "dots.not.allowed"):
        with pytest.raises(ValidationError, match="must match"):
            ToolDefinition(name=bad)
    ToolDefinition(name="a-b_C9" * 10 + "abcd")


def test_definition_requires_object_parameters() -> None:
    with pytest.raises(ValidationError, match="object"):
        ToolDefinition(name="t", parameters={"type": "string"})


def test_definition_from_model_uses_fields_and_docstring() -> None:
    class Refund(BaseModel):
        """Refund an order."""

        order_id: str = Field(description="The order to refund")
        amount: float | None = None

    d = ToolDefinition.from_model(Refund, side_effects=True)
    assert d.name == "Refund"
    assert d.description == "Refund an order."
    assert d.side_effects is True
    assert d.parameters["required"] == ["order_id"]
    assert d.parameters["properties"]["order_id"]["description"] == "The order to refund"
    assert "title" not in d.parameters["properties"]["order_id"]


def test_call_keeps_adapter_correlation_typed() -> None:
    class MyCorrelation(Correlation):
        thread_id: str
        run_id: str

    call = ToolCall(id="c1", name="t", dialect="x",
                    correlation=MyCorrelation(thread_id="th", run_id="r"))
    assert isinstance(call.correlation, MyCorrelation)
    assert call.model_dump()["correlation"] == {"thread_id": "th", "run_id": "r"}


def test_results_and_content() -> None:
    call = ToolCall(id="c1", name="t", dialect="x")
    ok = ToolResult.ok(call, {"a": 1})
    failed = ToolResult.failed(call, "nope")
    assert ok.success and ok.output == {"a": 1} and ok.error is None
    assert not failed.success and failed.error == "nope"
    content = Content(parts=(TextPart(text="hi"), ImagePart(url="data:image/png;base64,AA")))
    assert content.as_text().startswith("hi\n[image: data:image/png")


def test_document_parts_check_their_source_and_describe_themselves() -> None:
    pdf = DocumentPart(data="JVBERi0xLjQ=", title="report.pdf")
    notes = DocumentPart(media_type="text/plain", data="aMOpbGxv")
    linked = DocumentPart(url="https://example.com/a.pdf")
    assert pdf.media_type == "application/pdf" and notes.plain_text() == "h\u00e9llo"
    assert pdf.plain_text() is None and linked.plain_text() is None
    assert Content(parts=(TextPart(text="hi"), pdf, linked)).as_text() == (
        "hi\n[document: report.pdf (application/pdf)]\n"
        "[document: (application/pdf) https://example.com/a.pdf]")
    for bad, field in (({}, "data, url"), ({"data": "JVBE", "url": "https://x"}, "data, url"),
                       ({"data": "not base64!"}, "data:"),
                       ({"media_type": "text/plain", "data": "/w=="}, "UTF-8"),
                       ({"media_type": "image/png", "data": "AA=="}, "media_type")):
        with pytest.raises(ValidationError, match=field):
            DocumentPart(**bad)
    assert Content.model_validate(Content(parts=(pdf,)).model_dump()).parts == (pdf,)


def test_tool_choice() -> None:
    assert ToolChoice().mode == "auto"
    assert ToolChoice.named("get_weather").tool == "get_weather"
    with pytest.raises(ValidationError):
        ToolChoice(mode="tool")
    with pytest.raises(ValidationError):
        ToolChoice(mode="auto", tool="x")
