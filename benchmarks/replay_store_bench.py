"""Replay benchmark: a recorded conversation appended one message per step through a store.

Loads ``sample_data/long_conversation.jsonl`` (about 5,000 messages) and
appends it one message at a time through :class:`ConversationBuffer`, the
way replay (CLI and app) drives it, with:

- MemoryStore, unbounded (the buffer grows to every message);
- MemoryStore, window 50;
- SQLiteStore, window 50 (a temporary file).

Each row is the wall time of the whole replay, best of ``--repeat`` runs.
Before the live cache, every step decoded, rebuilt and re-encoded the whole
buffer, so the unbounded replay was quadratic (27 s measured); now a step
costs the engine append and a conditional write of the rows it changed
(``Store.apply``), whatever the buffer's size.

Run: ``.venv/bin/python benchmarks/replay_store_bench.py [--steps N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.importers import load_conversation
from flowdrop_core.storage import MemoryStore, SQLiteStore, Store

ROOT = Path(__file__).resolve().parents[1]

CTX = {"session_id": "replay", "node_id": "bench"}


def replay_seconds(store: Store, window: int, messages: list[dict[str, Any]]) -> tuple[float, int]:
    """Append every message as its own step; return (seconds, final count)."""
    buf = ConversationBuffer(store=store, max_messages=window)
    start = time.perf_counter()
    for msg in messages:
        res = buf.append(msg, CTX)
    elapsed = time.perf_counter() - start
    return elapsed, res.count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=5000, help="messages to replay")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (best is shown)")
    parser.add_argument(
        "--source", type=Path, default=ROOT / "sample_data" / "long_conversation.jsonl"
    )
    args = parser.parse_args(argv)
    messages = list(load_conversation(args.source).messages)[: args.steps]

    with tempfile.TemporaryDirectory(prefix="flowdrop-replay-bench-") as tmp:
        runs = 0

        def sqlite() -> Store:
            nonlocal runs
            runs += 1
            return SQLiteStore(Path(tmp) / f"replay-{runs}.sqlite3")

        rows: list[tuple[str, int, Callable[[], Store]]] = [
            ("memory", 0, MemoryStore),
            ("memory", 50, MemoryStore),
            ("sqlite", 50, sqlite),
        ]
        print(f"{len(messages)} one-message steps, Python {sys.version.split()[0]}")
        print(f"{'backend':<8} {'window':>9} {'seconds':>8} {'steps/s':>9} {'final count':>12}")
        for name, window, make in rows:
            best, count = float("inf"), 0
            for _ in range(max(1, args.repeat)):
                store = make()
                secs, count = replay_seconds(store, window, messages)
                best = min(best, secs)
                if isinstance(store, SQLiteStore):
                    store.close()
            label = str(window) if window else "unbounded"
            print(f"{name:<8} {label:>9} {best:>8.3f} {len(messages) / best:>9.0f} {count:>12}")


if __name__ == "__main__":
    main()
