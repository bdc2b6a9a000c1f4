"""Store benchmark: appends per second to ONE slot through ConversationBuffer.

Measures the full runtime path of an append (scope resolution, MEM-12 slot
lock, engine, conditional write of the changed rows) with the memory, SQLite
and Redis backends at a window of 50 messages, with one writer and with 4
concurrent writers (threads; and processes for SQLite, which serializes
across processes with a per-slot file lock, and for Redis, with a lease and
conditional writes, and for Postgres, with an advisory lock and conditional
transactions). Every writer appends to the same slot, so the figures are the
serialized throughput of one conversation, the worst case. Redis runs on a
``redis-server`` the benchmark starts on a free port (or ``--redis-url``),
Postgres on a throwaway ``initdb`` cluster (or ``--postgres-url``); without
one their rows are skipped, saying so.

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
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from postgres_server import PostgresServer, find_postgres_bin  # the tests' own servers
from redis_server import RedisServer, find_redis_server

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import MemoryStore, SQLiteStore, Store
from flowdrop_core.storage.redis_store import RedisStore

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


#: Every Redis key of the benchmark lives under this namespace (removed at the end).
BENCH_NS = "flowdropbench"


def _open(target: str) -> Store:
    if target.startswith("redis://"):
        return RedisStore(target, namespace=BENCH_NS)
    if target.startswith("postgresql://"):
        from flowdrop_core.storage.postgres import PostgresStore

        return PostgresStore(target, schema=BENCH_NS)
    return SQLiteStore(target)


def _postgres_url(given: str | None) -> tuple[str | None, PostgresServer | None]:
    """The Postgres to use: ``given``, else a throwaway cluster (None when impossible)."""
    if given:
        return given, None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        print("psycopg not installed: the Postgres rows are skipped", file=sys.stderr)
        return None, None
    folder = find_postgres_bin()
    if folder is None:
        print("Postgres binaries not found: the Postgres rows are skipped", file=sys.stderr)
        return None, None
    server = PostgresServer(folder)
    server.start()
    return server.url, server


def _process_worker(path: str, window: int, w: int, n: int, ready: Any, go: Any, out: Any) -> None:
    buf = ConversationBuffer(store=_open(path), max_messages=window, lock_timeout=30)
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
    parser.add_argument("--redis-url", help="a Redis to use (default: start redis-server)")
    parser.add_argument("--postgres-url", help="a Postgres to use (default: a throwaway cluster)")
    args = parser.parse_args(argv)
    n, window, writers = args.appends, args.window, args.writers
    per_writer = n // writers

    rows: list[tuple[str, str, int, float, int]] = []
    with tempfile.TemporaryDirectory(prefix="flowdrop-bench-") as tmp:
        server = None
        redis_url = args.redis_url
        if redis_url is None and find_redis_server():
            server = RedisServer(find_redis_server() or "", Path(tmp) / "redis")
            server.start()
            redis_url = server.url
        if redis_url is None:
            print("redis-server not found: the Redis rows are skipped", file=sys.stderr)
        pg_url, pg_server = _postgres_url(args.postgres_url)

        def stores() -> list[tuple[str, Store]]:
            out: list[tuple[str, Store]] = [
                ("memory", MemoryStore()),
                ("sqlite", SQLiteStore(Path(tmp) / f"bench-{len(rows)}.sqlite3")),
            ]
            if redis_url:
                store = RedisStore(redis_url, namespace=BENCH_NS)
                store.delete("session", "bench", "chat_history")
                out.append(("redis", store))
            if pg_url:
                pg = _open(pg_url)
                pg.delete("session", "bench", "chat_history")
                out.append(("postgres", pg))
            return out

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
        if redis_url:
            store = _open(redis_url)
            store.delete("session", "bench", "chat_history")
            _prefill(ConversationBuffer(store=store, max_messages=window), window)
            secs, unser = _run_processes(redis_url, window, writers, per_writer)
            rows.append(("redis", f"{writers} processes", per_writer * writers, secs, unser))
            store.delete("session", "bench", "chat_history")
        if pg_url:
            store = _open(pg_url)
            store.delete("session", "bench", "chat_history")
            _prefill(ConversationBuffer(store=store, max_messages=window), window)
            secs, unser = _run_processes(pg_url, window, writers, per_writer)
            rows.append(("postgres", f"{writers} processes", per_writer * writers, secs, unser))
            store.delete("session", "bench", "chat_history")
        if server is not None:
            server.stop()
        if pg_server is not None:
            pg_server.remove()

    print(f"one slot, window {window}, Python {sys.version.split()[0]}")
    print(
        f"{'backend':<9} {'writers':<12} {'appends':>8} {'seconds':>8} {'appends/s':>10} {'unserialized':>13}"
    )
    for name, who, count, secs, unser in rows:
        print(f"{name:<9} {who:<12} {count:>8} {secs:>8.3f} {count / secs:>10.0f} {unser:>13}")


if __name__ == "__main__":
    main()
