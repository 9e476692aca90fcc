"""``toolbridge approvals list | approve | deny``: the calls waiting for a person, on a store.

Any process that reaches the store decides (a decision is stored once, bound to the call and
its arguments); the call's next delivery, on any worker, consumes it.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from .._redact import redact_url
from ..errors import UsageError
from ..store import ApprovalRequest, open_store
from ._options import EXIT_OK, add_command

if TYPE_CHECKING:
    from ..runtime import Approvals

__all__ = ["add_parsers"]


def _approvals(url: str) -> Approvals:
    from ..runtime import Approvals

    store = open_store(url)
    if not store.approvals:
        store.close()
        raise UsageError(f"the store {redact_url(url)} keeps no approvals")
    return Approvals(store)


def _close(approvals: Approvals) -> None:
    if approvals.store is not None:
        approvals.store.close()


def _when(stamp: float | None) -> str:
    if stamp is None:
        return "never"
    return datetime.fromtimestamp(stamp, timezone.utc).isoformat(timespec="seconds")


def _row(request: ApprovalRequest) -> dict[str, Any]:
    dialect, conversation, turn, call_id = request.key
    return {"call_id": call_id, "dialect": dialect, "conversation": conversation, "turn": turn,
            "tool": request.tool, "arguments": request.arguments, "digest": request.digest,
            "origin": request.origin, "batch": list(request.batch),
            "requested_at": _when(request.requested_at), "expires_at": _when(request.expires_at)}


def cmd_list(args: argparse.Namespace) -> int:
    approvals = _approvals(args.store)
    try:
        requests = approvals.pending(conversation=args.conversation)
    finally:
        _close(approvals)
    if args.json:
        print(json.dumps([_row(r) for r in requests], ensure_ascii=False, indent=2))
        return EXIT_OK
    if not requests:
        print("no call awaits approval")
    for request in requests:
        row = _row(request)
        print(f"{row['call_id']}  {row['tool']}({json.dumps(request.arguments)})  "
              f"{row['dialect']} conversation={row['conversation']} turn={row['turn']}  "
              f"requested {row['requested_at']}, expires {row['expires_at']}")
    return EXIT_OK


def _find(approvals: Approvals, args: argparse.Namespace) -> ApprovalRequest:
    found = [r for r in approvals.pending() if r.key.call_id == args.call_id
             and (args.conversation is None or r.key.conversation == args.conversation)
             and (args.turn is None or r.key.turn == args.turn)
             and (args.dialect is None or r.key.dialect == args.dialect)]
    if not found:
        raise UsageError(f"no call {args.call_id!r} awaits approval (toolbridge approvals list "
                         "shows those that do)")
    if len(found) > 1:
        where = "; ".join(f"conversation {r.key.conversation!r} turn {r.key.turn!r}"
                          for r in found)
        raise UsageError(f"{len(found)} calls {args.call_id!r} await approval ({where}): give "
                         "--conversation and --turn")
    return found[0]


def cmd_decide(args: argparse.Namespace) -> int:
    approvals = _approvals(args.store)
    try:
        request = _find(approvals, args)
        if args.command_name == "approve":
            arguments = None
            if args.arguments is not None:
                try:
                    arguments = json.loads(args.arguments)
                except ValueError as exc:
                    raise UsageError(f"--arguments: not JSON ({exc})") from None
                if not isinstance(arguments, dict):
                    raise UsageError("--arguments: a JSON object of the tool's arguments")
            approvals.approve(request, arguments=arguments, scope=args.scope, by=args.by)
        else:
            approvals.deny(request, args.message, scope=args.scope, by=args.by)
    finally:
        _close(approvals)
    done = "approved" if args.command_name == "approve" else "denied"
    print(f"{done} call {request.key.call_id} ({request.tool})"
          + (" and the tool's later calls in this conversation" if args.scope == "tool"
             else ""))
    return EXIT_OK


def add_parsers(sub: Any) -> None:
    """Add the ``approvals`` command group to ``sub``."""
    group = add_command(sub, "approvals", "list and decide the calls waiting for approval",
                        "List the calls that wait for a person's approval in a result store, "
                        "and approve or deny them (docs/approvals.md).",
                        "toolbridge approvals list --store sqlite:///results.db",
                        "toolbridge approvals approve --store sqlite:///results.db call_1",
                        "toolbridge approvals deny --store sqlite:///results.db call_1 "
                        "--message 'not above 100 EUR'")
    commands = group.add_subparsers(dest="approvals_command", required=True, metavar="ACTION")
    listing = commands.add_parser("list", help="the calls waiting for a decision")
    listing.add_argument("--store", required=True, metavar="URL")
    listing.add_argument("--conversation", help="only this conversation's")
    listing.add_argument("--json", action="store_true", help="one JSON array")
    listing.set_defaults(func=cmd_list)
    for name, summary in (("approve", "run the call"),
                          ("deny", "answer the call with an error the model sees")):
        p = commands.add_parser(name, help=summary)
        p.add_argument("call_id", metavar="CALL_ID")
        p.add_argument("--store", required=True, metavar="URL")
        p.add_argument("--conversation")
        p.add_argument("--turn")
        p.add_argument("--dialect")
        p.add_argument("--scope", choices=("call", "tool"), default="call",
                       help="tool: also decide the tool's later calls in this conversation")
        p.add_argument("--by", default="", help="who decides (kept with the decision)")
        if name == "approve":
            p.add_argument("--arguments", metavar="JSON",
                           help="the arguments to run it with instead (validated again)")
        else:
            p.add_argument("--message", required=True, help="what the model is told")
        p.set_defaults(func=cmd_decide, command_name=name)
