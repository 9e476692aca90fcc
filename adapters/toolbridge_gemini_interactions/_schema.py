"""The ``parameters`` of a function entry: JSON Schema as written, with the Gemini schema
target's report of what the model ignores (`toolbridge_gemini.json_schema_losses`).

Interactions' ``Function.parameters`` is "the JSON Schema for the function's parameters"
(a subset: google-genai 3.6.1 ``function.py``), the same JSON Schema form as
generateContent's ``parametersJsonSchema``: the ``gemini`` dialect's report of that form is
reused, not written again.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from toolbridge import SchemaConversionError

from .wire import DIALECT

__all__ = ["gemini_parameters"]


def gemini_parameters(schema: Mapping[str, Any], *, policy: Any = "describe"
                      ) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """``schema`` as the function's ``parameters``, and its losses; `SchemaConversionError`
    when they break ``policy`` (``lossless``: any; ``error``: one a `Toolbox` does not check
    on arrival)."""
    from toolbridge_gemini import json_schema_losses

    losses = json_schema_losses(schema)
    failing = [loss for loss in losses if policy == "lossless"
               or (policy == "error" and not loss.enforced)]
    if failing:
        raise SchemaConversionError(f"{DIALECT}: parameters would lose: "
                                    + "; ".join(map(str, failing)), list(failing))
    return copy.deepcopy(dict(schema)), losses
