"""Many async workers: appends/s, p50 and p99 with 1, 10 and 100 sessions over 1 and 4 processes.

The shape of a team running agents: S concurrent async sessions, each its
own slot (its own conversation), spread over P processes, every session
appending turn after turn through ``await buffer.aappend(...)`` for
``--seconds``. For each backend (SQLite, Redis, Postgres) and each (S, P)
it reports appends/s, the p50 and p99 latency of one append, and the ratio
to the backend's **bare write** measured in the same run with the same
shape (P processes, the same number of concurrent writers per process as
the store has connections: an autocommitted ``INSERT`` for Postgres and
SQLite, an ``RPUSH`` for Redis), the faster of two ways to run it: async
tasks each awaiting the write on a worker thread holding its own sync
connection, and (Redis, Postgres) async tasks sharing a pool of that many
native async connections (``redis.asyncio``, ``psycopg.AsyncConnection``).
S < P is not run (a process without a session measures nothing).

Redis runs on a ``redis-server`` the benchmark starts on a free port,
Postgres on a throwaway ``initdb`` cluster (``fsync=off``, as in the tests);
SQLite on a file in a temporary folder. The load average before and after is
printed: the machine may be shared.

Each buffer keeps ``--cache-slots`` (default 128) live buffers: at least the sessions a
process serves, as a deployment sizes it; with the library's default of 64 and 100
sessions in one process every append misses the cache and re-reads its whole buffer.

Run: ``.venv/bin/python benchmarks/async_bench.py [--seconds 3] [--pool 8] [--cache-slots 128]``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import sqlite3
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from postgres_server import PostgresServer, find_postgres_bin  # the tests' own servers
from redis_server import RedisServer, find_redis_server

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage import SQLiteStore, Store

SESSIONS = (1, 10, 100)
PROCESSES = (1, 4)


def _msg(s: int, i: int) -> dict[str, Any]:
    return {"role": "user", "content": f"session {s} turn {i}: some ordinary chat text"}


def _make_store(backend: str, target: str, pool: int) -> Store:
    if backend == "sqlite":
        return SQLiteStore(target)
    if backend == "redis":
        from flowdrop_core.storage.redis_store import RedisStore

        return RedisStore(target, max_connections=pool + 1)  # + the lease connection
    from flowdrop_core.storage.postgres import PostgresStore

    return PostgresStore(target, pool_size=pool)


def _bare_writer(backend: str, target: str, tag: str) -> tuple[Callable[[int], None], Any]:
    """One connection and a single-row write on it (``write(n)``); and the connection."""
    if backend == "sqlite":
        conn = sqlite3.connect(target + ".bare", timeout=30, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")

        def write_sqlite(n: int) -> None:
            with conn:
                conn.execute("INSERT INTO bare VALUES (?, ?, ?)", (tag, n, _msg(0, n)["content"]))

        return write_sqlite, conn
    if backend == "redis":
        import redis

        client = redis.Redis.from_url(target)

        def write_redis(n: int) -> None:
            client.rpush(f"bare:{tag}", _msg(0, n)["content"])

        return write_redis, client
    import psycopg

    pg = psycopg.connect(target, autocommit=True)

    def write(n: int) -> None:
        pg.execute("INSERT INTO bare VALUES (%s, %s, %s)", (tag, n, _msg(0, n)["content"]))

    return write, pg


async def _async_bare_connections(backend: str, target: str, n: int) -> list[Any]:
    """``n`` native async connections for the bare write (Redis and Postgres)."""
    if backend == "redis":
        import redis.asyncio as aredis

        return [aredis.Redis.from_url(target, single_connection_client=True) for _ in range(n)]
    import psycopg

    return [await psycopg.AsyncConnection.connect(target, autocommit=True) for _ in range(n)]


async def _async_bare_write(backend: str, conn: Any, tag: str, n: int) -> None:
    if backend == "redis":
        await conn.rpush(f"bare:{tag}", _msg(0, n)["content"])
    else:
        await conn.execute("INSERT INTO bare VALUES (%s, %s, %s)", (tag, n, _msg(0, n)["content"]))


def _create_bare_tables(targets: dict[str, str]) -> None:
    """The bare write's table, made once before any writer starts."""
    if "sqlite" in targets:
        with sqlite3.connect(targets["sqlite"] + ".bare") as conn:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS bare (tag TEXT, n INTEGER, body TEXT)")
    if "postgres" in targets:
        import psycopg

        with psycopg.connect(targets["postgres"], autocommit=True) as pg:
            pg.execute("CREATE TABLE IF NOT EXISTS bare (tag TEXT, n BIGINT, body TEXT)")


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _worker(
    backend: str,
    target: str,
    mode: str,
    sessions: list[int],
    pool: int,
    seconds: float,
    start: Any,
    out: Any,
    cache_slots: int = 128,
) -> None:
    """One process: ``sessions`` async tasks appending (or bare-writing) for ``seconds``."""

    async def run() -> tuple[int, list[float], float, float]:
        latencies: list[float] = []
        if mode == "buffer":
            store = _make_store(backend, target, pool)
            buf = ConversationBuffer(store=store, lock_timeout=30.0, cache_slots=cache_slots)
            await buf.aappend(_msg(-1, 0), {"session_id": f"warm-{os.getpid()}"})

            async def one(s: int, stop_at: float) -> None:
                i = 0
                ctx = {"session_id": f"s{s}"}
                while time.perf_counter() < stop_at:
                    t0 = time.perf_counter()
                    await buf.aappend(_msg(s, i), ctx)
                    latencies.append(time.perf_counter() - t0)
                    i += 1

        elif mode == "bare-async":  # the bare write on a pool of native async connections
            aconns = await _async_bare_connections(backend, target, pool)
            idle: asyncio.Queue[Any] = asyncio.Queue()
            for conn in aconns:
                idle.put_nowait(conn)
            tag = f"{os.getpid()}"

            async def one(s: int, stop_at: float) -> None:
                i = 0
                while time.perf_counter() < stop_at:
                    t0 = time.perf_counter()
                    conn = await idle.get()
                    try:
                        await _async_bare_write(backend, conn, tag, i)
                    finally:
                        idle.put_nowait(conn)
                    latencies.append(time.perf_counter() - t0)
                    i += 1

        else:  # the bare write: one connection per worker thread, as many as the pool
            local = threading.local()
            executor = ThreadPoolExecutor(max_workers=min(pool, len(sessions)))
            conns: list[Any] = []

            def bare(n: int) -> None:
                write = getattr(local, "write", None)
                if write is None:
                    write, conn = _bare_writer(backend, target, f"{os.getpid()}")
                    local.write = write
                    conns.append(conn)
                write(n)

            loop = asyncio.get_running_loop()
            await asyncio.gather(*(loop.run_in_executor(executor, bare, -1) for _ in range(pool)))

            async def one(s: int, stop_at: float) -> None:
                i = 0
                while time.perf_counter() < stop_at:
                    t0 = time.perf_counter()
                    await loop.run_in_executor(executor, bare, i)
                    latencies.append(time.perf_counter() - t0)
                    i += 1

        start.wait()
        began = time.time()
        stop_at = time.perf_counter() + seconds
        await asyncio.gather(*(one(s, stop_at) for s in sessions))
        ended = time.time()
        if mode == "buffer":
            store.close()  # type: ignore[attr-defined]
        elif mode == "bare-async":
            for conn in aconns:
                await conn.aclose() if backend == "redis" else await conn.close()
        else:
            executor.shutdown()
            for conn in conns:
                conn.close()
        return len(latencies), latencies, began, ended

    out.put(asyncio.run(run()))


def measure(
    backend: str,
    target: str,
    mode: str,
    n_sessions: int,
    procs: int,
    pool: int,
    seconds: float,
    cache_slots: int = 128,
) -> tuple[float, float, float]:
    """(appends/s, p50 ms, p99 ms) of one (backend, mode, S, P) run."""
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(procs)
    out = ctx.Queue()
    base = f"{mode}-{n_sessions}-{procs}-{time.monotonic_ns()}"
    workers = [
        ctx.Process(
            target=_worker,
            args=(
                backend,
                target,
                mode,
                [hash((base, s)) & 0xFFFFFFF for s in range(p, n_sessions, procs)],
                pool,
                seconds,
                start,
                out,
                cache_slots,
            ),
        )
        for p in range(procs)
    ]
    for w in workers:
        w.start()
    results = [out.get(timeout=seconds * 20 + 120) for _ in workers]
    for w in workers:
        w.join()
    count = sum(r[0] for r in results)
    latencies = [x for r in results for x in r[1]]
    wall = max(r[3] for r in results) - min(r[2] for r in results)
    return count / wall, _percentile(latencies, 0.5) * 1000, _percentile(latencies, 0.99) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each run")
    parser.add_argument("--pool", type=int, default=8, help="connections per process")
    parser.add_argument("--backends", default="sqlite,redis,postgres")
    parser.add_argument(
        "--cache-slots",
        type=int,
        default=128,
        help="the buffer's live cache (>= the sessions of a process, as a deployment sizes it)",
    )
    args = parser.parse_args()
    print(
        f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, "
        f"{os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory(prefix="flowdrop-async-bench-") as tmp:
        targets: dict[str, str] = {}
        servers: list[Any] = []
        wanted = args.backends.split(",")
        if "sqlite" in wanted:
            targets["sqlite"] = str(Path(tmp) / "bench.sqlite3")
        if "redis" in wanted and find_redis_server():
            redis_server = RedisServer(find_redis_server() or "", Path(tmp) / "redis")
            redis_server.start()
            servers.append(redis_server)
            targets["redis"] = redis_server.url
        if "postgres" in wanted and find_postgres_bin():
            pg_server = PostgresServer(find_postgres_bin())  # type: ignore[arg-type]
            pg_server.start()
            servers.append(pg_server)
            targets["postgres"] = pg_server.url
        _create_bare_tables(targets)
        try:
            header = (
                f"{'backend':9} {'P':>2} {'S':>4} {'appends/s':>10} {'p50 ms':>8} {'p99 ms':>8} "
                f"{'bare/s':>9} {'bare p99':>9} {'ratio':>6}"
            )
            print(header)
            verdicts: list[str] = []
            print("-" * len(header))
            for backend, target in targets.items():
                for procs in PROCESSES:
                    for n in SESSIONS:
                        if n < procs:
                            continue
                        bare = measure(backend, target, "bare", n, procs, args.pool, args.seconds)
                        if backend != "sqlite":  # the faster of the two bare writes
                            native = measure(
                                backend, target, "bare-async", n, procs, args.pool, args.seconds
                            )
                            bare = max(bare, native)
                        got = measure(
                            backend,
                            target,
                            "buffer",
                            n,
                            procs,
                            args.pool,
                            args.seconds,
                            args.cache_slots,
                        )
                        print(
                            f"{backend:9} {procs:>2} {n:>4} {got[0]:>10.0f} {got[1]:>8.1f} "
                            f"{got[2]:>8.1f} {bare[0]:>9.0f} {bare[2]:>9.1f} "
                            f"{got[0] / bare[0]:>6.2f}",
                            flush=True,
                        )
                        if n == max(SESSIONS) and backend != "sqlite":
                            goal = got[0] >= 0.5 * bare[0] and got[2] < 50.0
                            verdicts.append(
                                f"{backend} P={procs} S={n}: goal (ratio >= 0.5, p99 < 50 ms) "
                                + ("met" if goal else "missed")
                            )
            for verdict in verdicts:
                print(verdict)
        finally:
            for server in servers:
                server.stop()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
