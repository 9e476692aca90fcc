"""The Gemini API's ``generateContent``, as the toolbridge dialect ``gemini``.

Tools are ``functionDeclarations`` (``parameters`` as an OpenAPI-style ``Schema``, or
``parametersJsonSchema``); a candidate's ``model`` content lists its calls as
``{"functionCall": {id?, name, args}}`` parts, the first carrying a ``thoughtSignature`` to
echo back with the model turn; results go back as one ``user`` turn of
``{"functionResponse": {id, name, response}}`` parts, one per call. There is no hosted
conversation: the caller (or the serve backend) keeps the ``contents`` list.

Importing this package is light: the schema engine, the client and the emulator load on
first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolbridge.plugin import lazy_attributes

if TYPE_CHECKING:
    from .declarations import (
        json_schema_losses,
        render_declaration,
        render_parameters,
        render_tools,
        tools_field,
    )

__all__ = [
    "json_schema_losses",
    "render_declaration",
    "render_parameters",
    "render_tools",
    "tools_field",
]

_LAZY = {
    "json_schema_losses": ".declarations", "render_declaration": ".declarations",
    "render_parameters": ".declarations", "render_tools": ".declarations",
    "tools_field": ".declarations",
}

__getattr__ = lazy_attributes(__name__, _LAZY)
