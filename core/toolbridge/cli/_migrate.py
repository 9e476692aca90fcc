"""``toolbridge migrate``: an Assistants workload (exports, or a live endpoint) to a new target."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..plugin import capabilities
from ._options import EXIT_FAILED, EXIT_OK, add_command, parse_key_values

__all__ = ["add_parsers", "open_ledger", "target_for"]

EXIT_INTERRUPTED = 130
"""Exit code after Ctrl-C (128 + SIGINT), as shells report it."""


def target_for(name: str, options: dict[str, Any]) -> Any:
    """The `MigrationTarget` ``name`` (a declared `toolbridge.plugin.MigratesTo`) with client
    ``options`` (``-o`` pairs; ``token_env=VAR``, where a target takes a bearer token: read
    from that variable on every request)."""
    return capabilities().migration_target(name).open(options)


def open_ledger(args: argparse.Namespace) -> Any:
    from ..migration import FileRecords, Ledger

    if args.store and args.ledger:
        raise UsageError("give --store or --ledger, not both")
    if args.store:
        from ..store import open_store

        records = open_store(args.store).records()
        if records is None:
            raise UsageError(f"the store {args.store} keeps no records; use --ledger FILE")
    else:
        records = FileRecords(args.ledger or f"toolbridge-migration-{args.name}.json")
    return Ledger(records, args.name)


def _source(args: argparse.Namespace) -> Any:
    from ..migration import read_export

    if args.source_option or args.source:
        if args.exports:
            raise UsageError("read exports or a live endpoint (--source-option), not both")
        options = parse_key_values(args.source_option, "source option")
        return _live_source(args.source).open(options, assistant_ids=args.assistant,
                                              thread_ids=args.thread,
                                              wait_runs=args.wait_runs)
    if args.wait_runs is not None:
        raise UsageError("--wait-runs waits on a live source (--source-option); an export's "
                         "unfinished runs cannot end")
    if not args.exports:
        raise UsageError("give export files or folders, or a live endpoint with "
                         "--source-option base_url=... (and --thread ID)")
    return read_export(*args.exports)


def _live_source(name: str | None) -> Any:
    """The declared live source ``name`` (``--from``); without one, the only one declared."""
    declared = capabilities()
    if name is not None:
        return declared.migration_source(name)
    sources = declared.migration_sources()
    if len(sources) != 1:
        known = ", ".join(s.name for s in sources) or "none installed"
        raise UsageError(f"name the live source with --from ({known})")
    return sources[0]


def _bar(done: int, total: int) -> None:
    width = 30
    filled = width * done // max(total, 1)
    end = "\n" if done == total else ""
    print(f"\rthreads [{'#' * filled}{'.' * (width - filled)}] {done}/{total}", end=end,
          file=sys.stderr, flush=True)


def _run(args: argparse.Namespace) -> int:
    try:
        return _migrate(args)
    except KeyboardInterrupt:
        print("\ninterrupted; run the same command again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED


def _migrate(args: argparse.Namespace) -> int:
    from ..migration import delete_orphans, migrate, orphan_lines

    if args.orphans:
        ledger = open_ledger(args)
        try:
            lines = orphan_lines(ledger)
        finally:
            ledger.records.close()
        print("\n".join(lines) if lines else "no possible orphans in the ledger")
        return EXIT_OK
    options = parse_key_values(args.option, raw=True)
    if args.delete_orphans is not None:
        target = target_for(args.to, options)
        ledger = open_ledger(args)
        try:
            lines = delete_orphans(target, ledger, args.delete_orphans)
            left = orphan_lines(ledger)
        finally:
            target.close()
            ledger.records.close()
        print("\n".join([*lines, *(f"possible orphan: {o}" for o in left)])
              or "no possible orphans in the ledger")
        return EXIT_OK
    workload = _source(args)
    remap = {}
    for pair in args.model_map:  # model names keep their hyphens (not option names)
        old, sep, new = pair.partition("=")
        if not sep or not old.strip() or not new.strip():
            raise UsageError(f"--model-map {pair!r} must look like OLD=NEW")
        remap[old.strip()] = new.strip()
    target = target_for(args.to, options)
    ledger = open_ledger(args)
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    try:
        report = migrate(workload, target, ledger, dry_run=args.dry_run, remap=remap,
                         allow_unused_map=args.allow_unused_map,
                         progress=_bar if show and workload.threads else None)
    finally:
        target.close()
        ledger.records.close()
    if args.json == "-":
        print(report.to_json())
    else:
        print(report.table())
        if args.json:
            Path(args.json).write_text(report.to_json() + "\n", encoding="utf-8")
    return EXIT_OK if report.ok else EXIT_FAILED


def add_parsers(sub: Any) -> None:
    p = add_command(
        sub, "migrate", "move assistants and threads to another backend",
        "Migrate an Assistants workload: every assistant becomes the target's agent (or "
        "per-request configuration), every thread a session or conversation. Resumable: run it "
        "again after a crash. See docs/migration.md.",
        "toolbridge migrate export/ --to openai-responses --dry-run",
        "toolbridge migrate export/ --to openai-responses --store sqlite:///migration.db "
        "-o config_dir=agents/",
        "toolbridge migrate --source-option project_endpoint=https://ACCOUNT.services.ai.azure"
        ".com/api/projects/P --source-option token_env=AZURE_TOKEN --to azure-foundry "
        "-o project_endpoint=... -o token_env=AZURE_TOKEN")
    p.add_argument("exports", nargs="*", metavar="EXPORT", default=[],
                   help="export files (.json, .jsonl) or folders (layout in docs/migration.md)")
    p.add_argument("--to", required=True, metavar="TARGET",
                   help="the target: one an installed plugin declares ('toolbridge dialects' "
                   "lists them)")
    p.add_argument("--from", dest="source", metavar="SOURCE",
                   help="the live source to read with --source-option (default: the only one "
                   "installed; 'toolbridge dialects' lists them)")
    p.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="target client option: base_url, api_key, project_endpoint, "
                   "token_env (a variable holding a bearer token), config_dir (Responses)")
    p.add_argument("--source-option", action="append", default=[], metavar="KEY=VALUE",
                   help="read a live Assistants-shaped endpoint instead of exports "
                   "(base_url and api_key; or project_endpoint and token_env: Foundry "
                   "classic agents)")
    p.add_argument("--assistant", action="append", default=None, metavar="ID",
                   help="live source: an assistant to migrate (default: all listed)")
    p.add_argument("--thread", action="append", default=None, metavar="ID",
                   help="live source: a thread to migrate (default: all listed, where the "
                   "endpoint can list threads)")
    p.add_argument("--wait-runs", type=float, default=None, metavar="SECONDS",
                   help="live source: wait up to SECONDS for runs still queued, in progress or "
                   "waiting for tool outputs to end (default: such threads are reported and "
                   "skipped)")
    p.add_argument("--name", default="default",
                   help="the migration's name: its ledger namespace (default: default)")
    p.add_argument("--store", metavar="URL",
                   help="keep the ledger in this result store's records (sqlite:///x.db, "
                   "postgresql://...)")
    p.add_argument("--ledger", metavar="FILE",
                   help="keep the ledger in this JSON file (default: "
                   "toolbridge-migration-NAME.json)")
    p.add_argument("--model-map", action="append", default=[], metavar="OLD=NEW",
                   help="use NEW for model OLD (overrides the retired-model table)")
    p.add_argument("--allow-unused-map", action="store_true",
                   help="warn, instead of failing, when a --model-map entry matches no "
                   "assistant's model")
    p.add_argument("--orphans", action="store_true",
                   help="list the possible orphans the ledger keeps, and exit")
    p.add_argument("--delete-orphans", nargs="+", metavar="TARGET_ID", default=None,
                   help="delete these possible orphans (ids you found on the target, e.g. "
                   "by their metadata.source_thread_id), each only if it is empty and marked "
                   "with a thread of the ledger's orphans; resolved ones leave the ledger")
    p.add_argument("--dry-run", action="store_true",
                   help="print the plan and the report; write nothing")
    p.add_argument("--json", metavar="FILE",
                   help="also write the report as JSON to FILE ('-': print only the JSON)")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    p.set_defaults(func=_run)
