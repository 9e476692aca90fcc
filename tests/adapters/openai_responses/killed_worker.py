"""A worker for the restart test: charges (writing a ledger line), then hangs until killed.

``python killed_worker.py BASE_URL STORE_URL LEDGER``
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import toolbridge
from toolbridge.serve import aconverse
from toolbridge_openai_responses import ResponsesServeOptions


def main(base_url: str, store: str, ledger: str) -> None:
    box = toolbridge.Toolbox(store=store)

    @box.tool(side_effects=True)
    def charge(amount: int) -> dict[str, int]:
        """Charge a card (never twice for one call)."""
        with Path(ledger).open("a") as out:
            out.write(f"{amount}\n")
        return {"charged": amount}

    @box.tool
    async def wait_forever() -> None:
        """Hangs: the worker is killed while it waits."""
        await asyncio.Event().wait()

    asyncio.run(aconverse(box, "openai-responses", ["pay"],
                          ResponsesServeOptions.emulated(base_url)))


if __name__ == "__main__":
    main(*sys.argv[1:4])
