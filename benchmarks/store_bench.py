"""Store benchmark: appends per second to ONE slot through ConversationBuffer.

Measures the full runtime path of an append (scope resolution, MEM-12 slot
lock, engine, conditional write of the changed rows) with the memory and SQLite backends at a window of
50 messages, with one writer and with 4 concurrent writers (threads; and
processes for SQLite, which serializes across processes with a per-slot file
lock). Every writer appends to the same slot, so the figures are the
serialized throughput of one conversation, the worst case.

Run: ``.venv/bin/python benchmarks/store_bench.py [--appends N] [--window W]``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import MemoryStore, SQLiteStore, Store

CTX = {"session_id": "bench", "node_id": "bench"}


def _msg(w: int, i: int) -> dict[str, Any]:
    return {"role": "user", "content": f"writer {w} message {i}: some ordinary chat text"}


def _prefill(buf: ConversationBuffer, window: int) -> None:
    """Fill the window first, so every measured append also evicts (the steady state)."""
    buf.append([_msg(-1, i) for i in range(window)], CTX)


def _run_threads(buf: ConversationBuffer, writers: int, per_writer: int) -> tuple[float, int]:
    barrier = threading.Barrier(writers + 1)
    unserialized = [0] * writers

    def work(w: int) -> None:
        barrier.wait()
        for i in range(per_writer):
            unserialized[w] += not buf.append(_msg(w, i), CTX).serialized

    threads = [threading.Thread(target=work, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    start = time.perf_counter()
    for t in threads:
        t.join()
    return time.perf_counter() - start, sum(unserialized)


def _process_worker(path: str, window: int, w: int, n: int, ready: Any, go: Any, out: Any) -> None:
    buf = ConversationBuffer(store=SQLiteStore(path), max_messages=window, lock_timeout=30)
    ready.put(w)
    go.wait()
    unserialized = 0
    for i in range(n):
        unserialized += not buf.append(_msg(w, i), CTX).serialized
    out.put(unserialized)


def _run_processes(path: str, window: int, writers: int, per_writer: int) -> tuple[float, int]:
    ctx = mp.get_context("spawn")
    ready, out, go = ctx.Queue(), ctx.Queue(), ctx.Event()
    procs = [
        ctx.Process(target=_process_worker, args=(path, window, w, per_writer, ready, go, out))
        for w in range(writers)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        ready.get(timeout=60)
    start = time.perf_counter()
    go.set()
    unserialized = sum(out.get(timeout=600) for _ in procs)
    elapsed = time.perf_counter() - start
    for p in procs:
        p.join()
    return elapsed, unserialized


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=2000, help="total appends per row")
    parser.add_argument("--window", type=int, default=50, help="max_messages")
    parser.add_argument("--writers", type=int, default=4, help="concurrent writers")
    args = parser.parse_args(argv)
    n, window, writers = args.appends, args.window, args.writers
    per_writer = n // writers

    rows: list[tuple[str, str, int, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="flowdrop-bench-") as tmp:

        def stores() -> list[tuple[str, Store]]:
            return [
                ("memory", MemoryStore()),
                ("sqlite", SQLiteStore(Path(tmp) / f"bench-{len(rows)}.sqlite3")),
            ]

        for name, store in stores():
            buf = ConversationBuffer(store=store, max_messages=window, lock_timeout=30)
            _prefill(buf, window)
            secs, unser = _run_threads(buf, 1, n)
            rows.append((name, "1 writer", n, secs, unser))
        for name, store in stores():
            buf = ConversationBuffer(store=store, max_messages=window, lock_timeout=30)
            _prefill(buf, window)
            secs, unser = _run_threads(buf, writers, per_writer)
            rows.append((name, f"{writers} threads", per_writer * writers, secs, unser))
        path = Path(tmp) / "bench-procs.sqlite3"
        with SQLiteStore(path) as store:
            _prefill(ConversationBuffer(store=store, max_messages=window), window)
        secs, unser = _run_processes(str(path), window, writers, per_writer)
        rows.append(("sqlite", f"{writers} processes", per_writer * writers, secs, unser))

    print(f"one slot, window {window}, Python {sys.version.split()[0]}")
    print(
        f"{'backend':<8} {'writers':<12} {'appends':>8} {'seconds':>8} {'appends/s':>10} {'unserialized':>13}"
    )
    for name, who, count, secs, unser in rows:
        print(f"{name:<8} {who:<12} {count:>8} {secs:>8.3f} {count / secs:>10.0f} {unser:>13}")


if __name__ == "__main__":
    main()
