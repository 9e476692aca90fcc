"""The Anthropic Messages API as the toolbridge dialect ``anthropic-messages``.

Tools are ``{name, description, input_schema, strict?}`` entries of each request (see
`toolbridge_anthropic_messages.tools`: strictness follows Anthropic's own policy); an
assistant message asks with ``tool_use`` blocks ``{id, name, input}`` (``stop_reason:
"tool_use"``); the next user message answers with one ``tool_result`` block ``{tool_use_id,
content, is_error?}`` per ``tool_use``, before any other content.

Importing this package is light: the schema engine, the client and the emulator load on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbridge.plugin import lazy_attributes

if TYPE_CHECKING:
    from .tools import InputSchema, input_schema, render_tool, render_tools, strict_load

__all__ = ["InputSchema", "input_schema", "render_tool", "render_tools", "strict_load"]

_LAZY = {"InputSchema": ".tools", "input_schema": ".tools", "render_tool": ".tools",
         "render_tools": ".tools", "strict_load": ".tools"}

__getattr__ = lazy_attributes(__name__, _LAZY)
