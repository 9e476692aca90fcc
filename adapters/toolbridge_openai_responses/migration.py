"""Migration targets on the Responses wire: `ConversationsTarget` (OpenAI Responses +
Conversations) and `FoundryTarget` (Azure Foundry prompt agents + conversations).

Threads become conversations, their messages items appended oldest first, at most 20 per
request; the conversation API has no list call, so a conversation created by a run that
crashed before recording its id cannot be found again (the engine reports it). On OpenAI
there is no server object for an assistant (reusable prompts were shut down): its model,
instructions and tools are written as the per-request configuration, a JSON file per
assistant that the application loads and sends with every ``POST /responses``
(`load_config`). On Foundry the assistant becomes a prompt agent version.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolbridge import ToolDefinition, get_dialect
from toolbridge.http import RetryPolicy
from toolbridge.migration import AgentPlan, Fate, ThreadPlan
from toolbridge.migration.targets import config_hash, message_fates, setting_fates, thread_metadata

from ._migration_items import held_item, message_item, step_items
from .client import ResponsesClient
from .wire import DIALECT

__all__ = ["ConversationsTarget", "FoundryTarget", "agent_name", "load_config"]

MIGRATION_RETRY = RetryPolicy(retry_statuses=frozenset({429}),
                              refused_statuses=frozenset({429}))
"""Appends are not idempotent: retry only what the service refused (429, honouring
Retry-After: counted as not acted on, `RetryPolicy.refused_statuses`); after any other
failure the engine lists the items before sending again."""


def load_config(path: str | Path) -> dict[str, Any]:
    """A configuration file written by `ConversationsTarget`: the fields to send with every
    ``POST /responses`` (``model``, ``instructions``, ``tools``, ...), without the
    ``toolbridge`` provenance block."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return {k: v for k, v in data.items() if k != "toolbridge"}


def agent_name(assistant_id: str, name: str | None = None) -> str:
    """A Foundry agent name for an assistant: a slug of its name (or id), plus a hash of the
    id so that names differing only in case do not collide; alphanumeric at both ends, at
    most 63 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", (name or assistant_id).lower()).strip("-")[:50]
    digest = hashlib.sha256(assistant_id.encode()).hexdigest()[:8]
    return f"{slug}-{digest}" if slug else f"agent-{digest}"


class ConversationsTarget:
    """Conversations through a `ResponsesClient`; assistants as files in ``config_dir``."""

    name = DIALECT
    lists_threads = False
    chunk = 20

    def __init__(self, client: ResponsesClient | None = None, *,
                 config_dir: str | Path = "migrated-config", **options: Any) -> None:
        options.setdefault("retry", MIGRATION_RETRY)
        self.client = client or ResponsesClient(**options)
        self._owns = client is None
        self.config_dir = Path(config_dir)

    # ------------------------------------------------------------------ assistants
    def plan_agent(self, assistant: Mapping[str, Any], model: str) -> AgentPlan:
        aid = str(assistant["id"])
        body, fates = self._definition(assistant, model)
        for key in ("name", "description", "metadata"):
            if assistant.get(key):
                fates.append(Fate("setting", f"{aid}.{key}", "approximated",
                                  "kept in the configuration file's toolbridge block (no "
                                  "server object holds it)"))
        key = config_hash(body)
        body["toolbridge"] = {"source_assistant_id": aid, "name": assistant.get("name"),
                              "description": assistant.get("description"),
                              "metadata": assistant.get("metadata") or {},
                              "migration_key": key}
        return AgentPlan(aid, agent_name(aid, assistant.get("name")), body, fates, key)

    def _definition(self, assistant: Mapping[str, Any], model: str
                    ) -> tuple[dict[str, Any], list[Fate]]:
        """The Responses fields of an assistant, and the fates of its settings and tools."""
        tools, fates = _tools(assistant, strict_required=False)
        body: dict[str, Any] = {"model": model, "tools": tools}
        carried: dict[str, str] = {}
        for key in ("instructions", "temperature", "top_p"):
            if assistant.get(key) is not None:
                body[key] = assistant[key]
                carried[key] = ""
        if assistant.get("reasoning_effort"):
            body["reasoning"] = {"effort": assistant["reasoning_effort"]}
            carried["reasoning_effort"] = "as reasoning.effort"
        text_format = _text_format(assistant.get("response_format"))
        if text_format is not None:
            body["text"] = {"format": text_format}
            carried["response_format"] = "as text.format (json_schema flattened)"
        if any((assistant.get("tool_resources") or {}).values()):
            carried["tool_resources"] = ("merged into the file_search / code_interpreter "
                                         "tools")
        keep = {"name", "description", "metadata"}
        fates = [f for f in setting_fates(assistant, carried, {})
                 if f.subject.rpartition(".")[2] not in keep] + fates
        return body, fates

    def find_agent(self, plan: AgentPlan) -> str | None:
        path = self.config_dir / f"{plan.name}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return str(path) if data.get("toolbridge", {}).get("migration_key") == plan.key else None

    def create_agent(self, plan: AgentPlan) -> str:
        self.config_dir.mkdir(parents=True, exist_ok=True)
        path = self.config_dir / f"{plan.name}.json"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(plan.body, indent=2, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
        return str(path)

    # ------------------------------------------------------------------ threads
    def plan_thread(self, thread: Mapping[str, Any], messages: Sequence[Mapping[str, Any]],
                    agent: AgentPlan | None) -> ThreadPlan:
        tid = str(thread["id"])
        fates: list[Fate] = []
        items: list[dict[str, Any]] = []
        expected: list[tuple[str, str]] = []
        for message in messages:
            if message.get("object") == "thread.run.step":
                for exchanged, seen in step_items(message, tid, fates):
                    items.append(exchanged)
                    expected.append(seen)
                continue
            item, text = message_item(message, f"{tid}.{message.get('id')}", fates)
            if item is not None:
                role = str(item["role"])
                fates += message_fates(tid, message, f"as {'an' if role == 'assistant' else 'a'}"
                                       f" {role} message item")
                items.append(item)
                expected.append((str(item["role"]), text))
        for kind, resource in (thread.get("tool_resources") or {}).items():
            if resource:
                fates.append(Fate("tool_resource", f"{tid}.tool_resources.{kind}", "dropped",
                                  "a conversation has no tool resources: add "
                                  f"{json.dumps(resource, sort_keys=True)} to the {kind} tool "
                                  "sent with its requests"))
        calls = sum(i["type"] == "function_call" for i in items)
        fates.append(Fate("thread", tid, "carried",
                          f"a conversation with {len(items) - 2 * calls} message item(s)"
                          + (f" and {calls} function call(s) with their outputs" if calls
                             else "")))
        metadata = thread_metadata(thread, agent.source_id if agent else None, fates)
        return ThreadPlan(tid, agent.source_id if agent else None, metadata, [], items,
                          expected, fates)

    def held_agent(self, plan: AgentPlan, target_id: str) -> Mapping[str, Any]:
        """The configuration file as written (what `load_config` gives the application)."""
        try:
            data = json.loads(Path(target_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, Mapping) else {}

    def find_thread(self, plan: ThreadPlan) -> str | None:
        return None  # conversations cannot be listed

    def create_thread(self, plan: ThreadPlan, agent_id: str | None) -> str:
        conversation = self.client.create_conversation(plan.create_items,
                                                       metadata=plan.metadata)
        return str(conversation["id"])

    def append(self, target_id: str, items: Sequence[Mapping[str, Any]]) -> None:
        self.client.add_items(target_id, items)

    def held(self, target_id: str) -> list[tuple[str, str]]:
        """Messages as (role, text); function calls and outputs as (type, text)."""
        return [seen for seen in map(held_item, self.client.all_items(target_id))
                if seen is not None]

    def missing_models(self, models: Sequence[str]) -> list[str]:
        """None on OpenAI: a configuration file is not a server object (a wrong model fails
        the application's first request)."""
        return []

    def discard(self, target_id: str, threads: Collection[str]) -> tuple[str, str]:
        """Delete the conversation if its ``metadata.source_thread_id`` is one of
        ``threads`` and it holds no items."""
        conversation = self.client.retrieve_conversation(target_id)
        marked = str((conversation.get("metadata") or {}).get("source_thread_id") or "")
        if marked not in threads:
            return marked, (f"its metadata.source_thread_id ({marked or 'none'}) names no "
                            "possible orphan of the ledger")
        if self.client.list_items(target_id, limit=1).get("data"):
            return marked, "it holds items"
        self.client.delete_conversation(target_id)
        return marked, ""

    def close(self) -> None:
        if self._owns:
            self.client.close()


class FoundryTarget(ConversationsTarget):
    """Foundry Agent Service: a prompt agent version per assistant (``agent_name``), found
    again by its ``migration_key`` metadata; conversations as `ConversationsTarget`. The
    client needs ``project_endpoint`` and a ``credential`` (or ``token_provider``)."""

    name = "azure-foundry"

    def __init__(self, client: ResponsesClient | None = None, **options: Any) -> None:
        super().__init__(client, **options)

    def plan_agent(self, assistant: Mapping[str, Any], model: str) -> AgentPlan:
        aid = str(assistant["id"])
        body, fates = self._definition(assistant, model)
        body["tools"], tool_fates = _tools(assistant, strict_required=True)
        fates = [f for f in fates if f.kind != "tool"] + tool_fates
        definition = {"kind": "prompt", **body}
        key = config_hash(definition)
        metadata = {str(k): str(v) for k, v in (assistant.get("metadata") or {}).items()}
        marks = {"source_assistant_id": aid, "migration_key": key}
        room = 16 - len(marks)
        if metadata:
            fates.append(Fate("setting", f"{aid}.metadata",
                              "approximated" if len(metadata) > room else "carried",
                              f"{len(metadata) - room} pair(s) dropped (16 at most, 2 used by "
                              "the migration)" if len(metadata) > room else ""))
        name = agent_name(aid, assistant.get("name"))
        if assistant.get("name"):
            fates.append(Fate("setting", f"{aid}.name", "approximated",
                              f"agent name {name} (a slug: alphanumerics and hyphens)"))
        request: dict[str, Any] = {"definition": definition,
                                   "metadata": dict(list(metadata.items())[:room]) | marks}
        if assistant.get("description"):
            request["description"] = str(assistant["description"])
            fates.append(Fate("setting", f"{aid}.description", "carried"))
        return AgentPlan(aid, name, request, fates, key)

    def missing_models(self, models: Sequence[str]) -> list[str]:
        """The models no deployment of the project is named after (``definition.model`` is
        a deployment name)."""
        deployed = self.client.list_deployments()
        return [m for m in models if m not in deployed]

    def find_agent(self, plan: AgentPlan) -> str | None:
        for version in self.client.list_agent_versions(plan.name):
            if (version.get("metadata") or {}).get("migration_key") == plan.key:
                return f"{plan.name}:{version['version']}"
        return None

    def held_agent(self, plan: AgentPlan, target_id: str) -> Mapping[str, Any]:
        """The agent version as the project returns it (what ``agent_reference`` runs)."""
        name, _, number = target_id.rpartition(":")
        for version in self.client.list_agent_versions(name):
            if str(version.get("version")) == number:
                return version
        return {}

    def create_agent(self, plan: AgentPlan) -> str:
        body = dict(plan.body)
        version = self.client.create_agent_version(plan.name, definition=body.pop("definition"),
                                                   **body)
        return f"{plan.name}:{version['version']}"


def _tools(assistant: Mapping[str, Any], *, strict_required: bool
           ) -> tuple[list[dict[str, Any]], list[Fate]]:
    aid = str(assistant["id"])
    source = assistant.get("tools") or []
    imported = get_dialect("openai-assistants").import_tools(source)
    rendered = get_dialect(DIALECT).render_tools(imported.definitions)
    tools = [dict(t) for t in rendered.definitions]
    if strict_required:  # Foundry's FunctionTool: strict is a required boolean
        for tool in tools:
            if tool.get("type") == "function":
                tool["strict"] = bool(tool.get("strict"))
    sent = {t.get("name"): t for t in tools if t.get("type") == "function"}
    fates = [_tool_fate(aid, d, sent.get(d.name) or {},
                        [str(loss) for loss in rendered.losses.get(d.name, [])])
             for d in imported.definitions]
    resources = assistant.get("tool_resources") or {}
    for skipped in imported.skipped:
        entry = source[skipped.index]
        where = f"{aid}.tools.{skipped.kind or skipped.index}"
        if skipped.kind == "file_search":
            options = entry.get("file_search") or {}
            ids = list((resources.get("file_search") or {}).get("vector_store_ids") or [])
            search: dict[str, Any] = {"type": "file_search", "vector_store_ids": ids}
            how = f"file_search with vector stores {ids}" if ids else "file_search"
            if options.get("max_num_results") is not None:
                search["max_num_results"] = options["max_num_results"]
            ranking = options.get("ranking_options") or {}
            if ranking:
                search["ranking_options"] = {"ranker": "auto", **(
                    {"score_threshold": ranking["score_threshold"]}
                    if "score_threshold" in ranking else {})}
                how += "; ranker names differ, ranker set to auto"
            tools.append(search)
            fates.append(Fate("tool", where, "approximated" if ranking else "carried", how))
        elif skipped.kind == "code_interpreter":
            files = list((resources.get("code_interpreter") or {}).get("file_ids") or [])
            tools.append({"type": "code_interpreter",
                          "container": {"type": "auto", "file_ids": files}})
            fates.append(Fate("tool", where, "carried",
                              f"code_interpreter, container auto with files {files}"))
        else:
            fates.append(Fate("tool", where, "dropped", skipped.reason))
    return tools, fates


def _tool_fate(aid: str, tool: ToolDefinition, sent: Mapping[str, Any], losses: list[str]) -> Fate:
    """A function tool's fate: a rewrite to ``strict: true`` (optional parameters made
    required and nullable) is an approximation, whatever else was lost."""
    changes = list(losses)
    if sent.get("strict") is True and tool.strict is not True:
        required = set(tool.parameters.get("required") or [])
        optional = [p for p in tool.parameters.get("properties") or {} if p not in required]
        changes.insert(0, "sent as strict: true (the source was not strict; arguments are "
                       "now held to the schema" + (
                           f"; optional {', '.join(optional)} made required and nullable"
                           if optional else "") + ")")
    return Fate("tool", f"{aid}.tools.{tool.name}", "approximated" if changes else "carried",
                "; ".join(changes))


def _text_format(response_format: Any) -> dict[str, Any] | None:
    if not isinstance(response_format, Mapping):
        return None
    if response_format.get("type") == "json_object":
        return {"type": "json_object"}
    if response_format.get("type") == "json_schema":
        spec = response_format.get("json_schema") or {}
        return {"type": "json_schema", **{k: spec[k] for k in (
            "name", "schema", "strict", "description") if k in spec}}
    return None
