"""Import an existing assistant's function tools (`tools_from_assistant`), or a whole live
workload (`read_workload`) for `toolbridge.migration`."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from toolbridge import ToolDefinition, WireFormatError

from .wire import DIALECT

if TYPE_CHECKING:
    from toolbridge.migration import Workload

    from .client import AssistantsClient

__all__ = ["read_workload", "tools_from_assistant"]


def read_workload(client: AssistantsClient, *, assistant_ids: Sequence[str] | None = None,
                  thread_ids: Sequence[str] | None = None, wait_runs: float | None = None
                  ) -> Workload:
    """A `toolbridge.migration.Workload` read from a live endpoint: the assistants
    (``assistant_ids``, else every one listed), the threads (``thread_ids``; else, on Foundry
    classic agents, every one listed: OpenAI has no list-threads call), all their
    messages, oldest first (read with ``order=asc``), and their runs with each run's steps
    (the tool exchanges). A thread with a run still queued, in progress or waiting for tool
    outputs is held back (`Workload.unfinished`) unless ``wait_runs`` seconds (shared by all
    the threads) see every such run end first. On Foundry classic agents the project's
    deployments are listed too, so that each assistant's deployment name resolves to its
    model."""
    from toolbridge import UsageError
    from toolbridge.migration import Workload
    from toolbridge.migration.targets import UNFINISHED_RUNS

    workload = Workload()
    assistants = ([client.retrieve_assistant(a) for a in assistant_ids] if assistant_ids
                  else list(client.iterate("/assistants", "list assistants")))
    for assistant in assistants:
        workload.add(assistant, f"assistant {assistant.get('id')}")
    if thread_ids is None:
        if not client.foundry:
            raise UsageError("openai-assistants: OpenAI and Azure OpenAI cannot list threads; "
                             "name them (--thread ID, thread_ids=[...])")
        threads = list(client.iterate("/threads", "list threads"))
    else:
        threads = [client.retrieve_thread(t) for t in thread_ids]
    deadline = None if wait_runs is None else time.monotonic() + wait_runs
    for thread in threads:
        tid = str(thread["id"])
        workload.add(thread, f"thread {tid}")
        runs = [_ended(client, run, deadline)
                for run in client.iterate(f"/threads/{tid}/runs", "list runs")]
        messages = list(client.iterate(f"/threads/{tid}/messages", "list messages"))
        workload.add_sequence(messages, f"thread {tid} messages", "asc")
        live = [r for r in runs if r.get("status") in UNFINISHED_RUNS]
        if live:
            workload.unfinished[tid] = ", ".join(f"run {r['id']} is {r['status']}"
                                                 for r in live)
        for run in runs:
            workload.add(run, f"thread {tid} run {run.get('id')}")
            for step in client.iterate(f"/threads/{tid}/runs/{run['id']}/steps",
                                       "list run steps"):
                workload.add(step, f"thread {tid} run {run['id']} step {step.get('id')}")
    if client.foundry:  # assistants name deployments: what model each serves
        workload.deployments = client.list_deployments()
    return workload.finish()


def _ended(client: AssistantsClient, run: dict[str, Any], deadline: float | None
           ) -> dict[str, Any]:
    """``run`` read again until it ends or ``deadline`` passes (``None``: not waited for);
    the last state read."""
    from toolbridge.migration.targets import UNFINISHED_RUNS

    while deadline is not None and run.get("status") in UNFINISHED_RUNS and (
            time.monotonic() < deadline):
        time.sleep(min(client.poll_delay(), max(deadline - time.monotonic(), 0)))
        run = client.retrieve_run(str(run["thread_id"]), str(run["id"]))
    return run


def tools_from_assistant(assistant: Any) -> list[ToolDefinition]:
    """The function tools of ``assistant`` (a dict, JSON text or an SDK ``Assistant``).

    Each keeps its name, description, parameters and ``strict`` flag, plus the original
    definition in ``vendor_extras["openai-assistants"]``: while the tool is unchanged it
    renders back to exactly that definition. Other tools (``code_interpreter``, ``file_search``) are
    skipped: they have no handler to migrate.
    """
    data = _data(assistant)
    tools = data.get("tools")
    if not isinstance(tools, list):
        raise WireFormatError(DIALECT, "tools", "missing or not a list", data)
    found: list[ToolDefinition] = []
    for i, tool in enumerate(tools):
        if not isinstance(tool, Mapping) or tool.get("type") != "function":
            continue
        function = tool.get("function")
        if not isinstance(function, Mapping) or not isinstance(function.get("name"), str):
            raise WireFormatError(DIALECT, f"tools[{i}].function.name", "missing", data)
        fields: dict[str, Any] = {"name": function["name"],
                                  "description": function.get("description") or "",
                                  "strict": function.get("strict"),
                                  "vendor_extras": {DIALECT: {"function": dict(function)}}}
        if function.get("parameters") is not None:
            fields["parameters"] = dict(function["parameters"])
        try:
            found.append(ToolDefinition(**fields))
        except ValidationError as exc:  # its message without pydantic's help links
            error = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in error["loc"])
            raise WireFormatError(DIALECT, f"tools[{i}].function" + (f".{field}" if field else ""),
                                  str(error["msg"]).removeprefix("Value error, "),
                                  data) from None
    return found


def _data(assistant: Any) -> Mapping[str, Any]:
    if isinstance(assistant, Mapping):
        return assistant
    if isinstance(assistant, (str, bytes)):
        import json

        value = json.loads(assistant)
        if isinstance(value, Mapping):
            return value
    elif hasattr(assistant, "model_dump"):
        value = assistant.model_dump(mode="json", exclude_unset=True)
        if isinstance(value, Mapping):
            return value
    raise WireFormatError(DIALECT, "<assistant>", "cannot read a value of type "
                          f"{type(assistant).__name__}; pass a dict, JSON text or an openai "
                          "SDK Assistant")
