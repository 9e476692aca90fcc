"""Serving Assistants runs: thin calls into the core serve driver (`toolbridge.serve`).

`aserve_run` drives one run to a final state; `arun_conversation` creates an assistant and a
thread and runs each user message. Both return a `toolbridge.Transcript` with its status
(``expired`` for a run that expired); the driver and the `AssistantsBackend` do the work.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolbridge import ToolChoice, Transcript
from toolbridge.migration.targets import DEFAULT_MODEL
from toolbridge.serve import DriverSettings, aanswer_pending, aconverse, answer_pending, converse

from .client import AsyncAssistantsClient
from .options import AssistantsOptions
from .wire import DIALECT

__all__ = ["arun_conversation", "aserve_run", "run_conversation", "serve_run"]


def _split(options: Mapping[str, Any]) -> tuple[AssistantsOptions, dict[str, Any]]:
    """`AssistantsOptions` from the keys it knows; the rest is context for the handlers."""
    fields = AssistantsOptions.model_fields
    known = {k: v for k, v in options.items() if k in fields}
    context = {k: v for k, v in options.items() if k not in fields}
    return AssistantsOptions.parse(known), context


async def aserve_run(
    toolbox: Any, client: AsyncAssistantsClient, *, thread_id: str, run_id: str | None = None,
    assistant_id: str | None = None, stream: bool = True,
    run_options: Mapping[str, Any] | None = None, max_rounds: int = 64, **context: Any,
) -> Transcript:
    """Serve run ``run_id`` of ``thread_id`` (or create one for ``assistant_id``) until it is
    final; each round of parallel calls is answered in one submission. ``context`` goes to
    the handlers."""
    options = AssistantsOptions.parse(client=client, thread_id=thread_id, run_id=run_id,
                                      assistant_id=assistant_id, stream=stream,
                                      run_options=dict(run_options or {}))
    return await aanswer_pending(toolbox, DIALECT, options, context=context,
                                 settings=DriverSettings(max_rounds=max_rounds))


def serve_run(toolbox: Any, **options: Any) -> Transcript:
    """Blocking form: serve the run named by ``options`` (`AssistantsOptions`: ``thread_id``
    and ``run_id`` or ``assistant_id``, and the client's); other keys go to the handlers."""
    parsed, context = _split(options)
    return answer_pending(toolbox, DIALECT, parsed, context=context)


async def arun_conversation(
    toolbox: Any, messages: Sequence[str], *, model: str = DEFAULT_MODEL,
    instructions: str | None = None, tool_choice: ToolChoice | None = None,
    stream: bool = True, **options: Any,
) -> Transcript:
    """Create an assistant with the toolbox's tools and a thread; run each user message.

    ``options`` are `AssistantsOptions` (``base_url`` + ``api_key``, or the Azure ones;
    ``model`` is the deployment name on Azure); other keys are context for the handlers.
    """
    parsed, context = _split({**options, "model": model, "instructions": instructions,
                              "tool_choice": tool_choice, "stream": stream})
    return await aconverse(toolbox, DIALECT, messages, parsed, context=context)


def run_conversation(toolbox: Any, messages: Sequence[str], **options: Any) -> Transcript:
    """Blocking `arun_conversation`."""
    parsed, context = _split(options)
    return converse(toolbox, DIALECT, messages, parsed, context=context)
