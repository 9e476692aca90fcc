"""Starting conversations on the fleet, and running a worker of it."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from pydantic import SecretBytes, SecretStr
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from toolbridge import UsageError
from toolbridge.http import Secret
from toolbridge.plugin import ServeOptions, capabilities, get_dialect

from ._activities import Activities
from ._messages import ConversationInput, FleetSettings, Outcome
from ._workflow import ConversationWorkflow

if TYPE_CHECKING:
    from toolbridge import Toolbox

__all__ = ["PASSED_THROUGH", "run_worker", "sandbox", "serve", "tracing_interceptors", "worker"]

_SECRETS = (Secret, SecretStr, SecretBytes)
PASSED_THROUGH = ("toolbridge", "toolbridge_temporal._activities",
                  "toolbridge_temporal._backends", "toolbridge_temporal._serving", "pydantic",
                  "pydantic_core")
"""Modules the workflow sandbox takes from the worker as they are (the workflow only reads
their data classes; the activities, which do the I/O, never run in the sandbox)."""


def tracing_interceptors() -> list[Any]:
    """Temporal's OpenTelemetry interceptor on toolbridge's tracer, when a tracer provider is
    set (else none): give it to ``Client.connect(..., interceptors=...)`` and the trace goes
    from the code that starts a conversation through its workflow into every call's span."""
    from toolbridge.telemetry import tracer

    found = tracer()
    if found is None:
        return []
    from temporalio.contrib.opentelemetry import TracingInterceptor

    return [TracingInterceptor(found)]


def sandbox() -> SandboxedWorkflowRunner:
    """Temporal's sandbox, with the modules of `PASSED_THROUGH` passed through."""
    restrictions = SandboxRestrictions.default.with_passthrough_modules(*PASSED_THROUGH)
    return SandboxedWorkflowRunner(restrictions=restrictions)


def _options(dialect: str, options: ServeOptions | Mapping[str, Any] | None) -> dict[str, Any]:
    """The options as JSON for the workflow's history: validated, and never a secret."""
    d = get_dialect(dialect)
    parsed = capabilities().serving(d.name).options.parse(options)
    given = (dict(options) if isinstance(options, Mapping) else
             parsed.model_dump(mode="json", exclude_unset=True) if options is not None else {})
    secret = sorted(name for name in given if isinstance(getattr(parsed, name, None), _SECRETS))
    if secret:
        raise UsageError(f"{d.name}: {', '.join(secret)} would be stored in the workflow's "
                         "history; give credentials to the workers (their environment) instead")
    if given.get("client") is not None:
        raise UsageError(f"{d.name}: client=... cannot travel to a worker; give base_url=...")
    return parsed.model_dump(mode="json", include=set(given), exclude={"client"})


async def serve(
    client: Client, dialect: str, conversation: str | None = None, *,
    messages: Sequence[str] = (), options: ServeOptions | Mapping[str, Any] | None = None,
    task_queue: str, workflow_id: str | None = None, settings: FleetSettings | None = None,
    context: Mapping[str, Any] | None = None,
) -> WorkflowHandle[ConversationWorkflow, Outcome]:
    """Start the workflow serving one conversation on ``dialect``; its handle.

    ``messages`` are sent one turn each (none: answer what ``conversation`` waits for);
    ``options`` are the dialect's serve options without credentials (the workers have
    those). ``await handle.result()`` gives the `Outcome`; ``handle.signal("cancel")``
    stops it, ``handle.query("progress")`` tells where it is.
    """
    if isinstance(messages, str):
        raise UsageError("messages must be a list of user messages, not one string")
    name = get_dialect(dialect).name
    settings = settings or FleetSettings()
    given = ConversationInput(name, _options(name, options), conversation, list(messages),
                              settings, dict(context or {}))
    workflow_id = workflow_id or f"toolbridge-{name}-{conversation or uuid.uuid4().hex}"
    return await client.start_workflow(ConversationWorkflow.run, given, id=workflow_id,
                                       task_queue=task_queue,
                                       task_timeout=timedelta(seconds=settings.task_timeout))


def worker(client: Client, task_queue: str, toolbox: Toolbox, *,
           dialect_options: Mapping[str, Mapping[str, Any]] | None = None, **options: Any
           ) -> tuple[Worker, Activities]:
    """A Temporal worker serving conversations and calls with ``toolbox`` on ``task_queue``,
    and its `Activities` (close them after the worker stopped).

    ``dialect_options`` are this worker's own serve options per dialect (credentials: they
    override the workflow's); ``options`` go to `temporalio.worker.Worker` (e.g.
    ``max_concurrent_activities``)."""
    activities = Activities(toolbox, dialect_options=dialect_options)
    options.setdefault("workflow_runner", sandbox())
    return Worker(client, task_queue=task_queue, workflows=[ConversationWorkflow],
                  activities=activities.all(), **options), activities


async def run_worker(address: str, task_queue: str, toolbox: Toolbox, *,
                     namespace: str = "default",
                     dialect_options: Mapping[str, Mapping[str, Any]] | None = None,
                     **options: Any) -> None:
    """Connect to Temporal at ``address`` and serve ``task_queue`` until cancelled."""
    client = await Client.connect(address, namespace=namespace,
                                  interceptors=tracing_interceptors())
    running, activities = worker(client, task_queue, toolbox, dialect_options=dialect_options,
                                 **options)
    try:
        await running.run()
    finally:
        await activities.aclose()
