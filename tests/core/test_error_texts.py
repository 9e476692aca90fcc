"""Error texts read as English: "an int", "None", "an emulator" (never "a int", "a NoneType")."""

from __future__ import annotations

import pytest

import toolbridge
from toolbridge import Toolbox, WireFormatError
from toolbridge._articles import a


@pytest.mark.parametrize(("noun", "expected"), [
    ("int", "an int"), ("str", "a str"), ("emulator", "an emulator"), ("demo", "a demo"),
    ("openai-responses object", "an openai-responses object"), ("unique id", "a unique id"),
    ("application/json", "an application/json"), ("'x'", "a 'x'"), ("'item'", "an 'item'"),
])
def test_the_article_follows_the_sound(noun: str, expected: str) -> None:
    assert a(noun) == expected


@pytest.mark.parametrize(("payload", "said"), [(5, "cannot read an int"),
                                               (None, "cannot read None"),
                                               (3.5, "cannot read a float")])
@pytest.mark.parametrize("dialect", sorted(toolbridge.dialects()))
def test_an_unreadable_payload_is_named_in_english(dialect: str, payload: object, said: str
                                                   ) -> None:
    with pytest.raises(WireFormatError, match=said + ";"):
        Toolbox(store=None).handle(dialect, payload)


def test_a_value_that_is_not_json_is_named_in_english() -> None:
    box = Toolbox(store=None)
    box.tool(lambda: object(), name="f", inline=True)
    [result] = box.execute([toolbridge.ToolCall(id="1", name="f", dialect="d")])
    assert result.error == "f returned an object, which cannot be sent as a result"
