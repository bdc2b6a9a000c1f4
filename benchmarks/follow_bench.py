"""What a ``store --follow`` costs the writers: append throughput with and without a follower.

A writer makes journaled appends (window 50, journal 100) to one slot; a
follower process (``flowdrop-buffer store TARGET --follow``, its default
interval, output discarded) follows every slot of the same store. Rounds
alternate (in ABBA order) between the follower running and paused (SIGSTOP,
so it does nothing at all), and medians are reported, so a load change on a
shared machine touches both alike. Per backend it reports the writer's
appends per second (wall) and its CPU time per append (medians), each
ratio with / without the follower as the median of the ratios of adjacent
rounds, and the CPU the follower itself spent (share of one core while the
writer ran). SQLite always; Redis and Postgres when the
tests' servers can be started here.

Run: ``.venv/bin/python benchmarks/follow_bench.py [--appends N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FOLLOW = [sys.executable, "-m", "flowdrop_core", "store"]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from flowdrop_core.conversation import ConversationBuffer  # noqa: E402
from flowdrop_core.store_browser import open_store  # noqa: E402


def _cpu_of(pid: int) -> float:
    """A process's CPU seconds so far (user + system, from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _round(target: str, n: int, salt: str) -> tuple[float, float]:
    """``n`` journaled appends; (appends per second, CPU µs per append) of this process."""
    store = open_store(target, writable=True)
    buf = ConversationBuffer(scope="session", max_messages=50, store=store, journal=100)
    ctx = {"session_id": "bench"}
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(n):
        buf.append({"role": "user", "content": f"{salt} message {i}: ordinary chat text"}, ctx)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    getattr(store, "close", lambda: None)()
    return n / wall, cpu / n * 1e6


@contextmanager
def _servers() -> Iterator[dict[str, str]]:
    """The targets: a SQLite file, and a Redis and a Postgres server when they can start."""
    folder = Path(tempfile.mkdtemp(prefix="follow-bench-"))
    sqlite = folder / "buffers.sqlite3"
    open_store_file = __import__("flowdrop_core.storage", fromlist=["SQLiteStore"]).SQLiteStore
    open_store_file(sqlite).close()
    targets = {"sqlite": str(sqlite)}
    stops: list[Callable[[], Any]] = []
    with suppress(Exception):
        from redis_server import RedisServer, find_redis_server

        exe = find_redis_server()
        if exe:
            redis = RedisServer(exe, folder / "redis")
            (folder / "redis").mkdir()
            redis.start()
            stops.append(redis.stop)
            targets["redis"] = redis.url
    with suppress(Exception):
        from postgres_server import PostgresServer, find_postgres_bin

        bin_dir = find_postgres_bin()
        if bin_dir is not None:
            pg = PostgresServer(bin_dir)
            pg.start()
            stops.append(pg.remove)
            targets["postgres"] = pg.url
    try:
        yield targets
    finally:
        for stop in stops:
            with suppress(Exception):
                stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=500, help="appends per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each kind")
    parser.add_argument("--only", default="", help="one backend: sqlite, redis or postgres")
    parser.add_argument("--interval", default="0.2", help="the follower's --interval")
    parser.add_argument(
        "--control",
        action="store_true",
        help="a process that only wakes every interval instead of the follower (the noise floor)",
    )
    parser.add_argument(
        "--one-slot", action="store_true", help="follow the written slot (--slot), not every slot"
    )
    args = parser.parse_args(argv)
    print(f"{args.appends} journaled appends per round, {args.rounds} rounds each, medians")
    print(
        f"{'backend':<9} {'appends/s alone':>16} {'with follower':>14} {'ratio':>6}   "
        f"{'CPU µs alone':>12} {'with':>8} {'ratio':>6}   follower CPU"
    )
    with _servers() as targets:
        for name, target in targets.items():
            if args.only and name != args.only:
                continue
            _round(target, 20, "warm")  # creates the slot, the schema, the journal
            argv = [*FOLLOW, target, "--follow", "--interval", args.interval]
            if args.one_slot:
                argv += ["--slot", "session", "bench", "chat_history"]
            if args.control:
                argv = [sys.executable, "-c", f"import time\nwhile 1: time.sleep({args.interval})"]
            follower = subprocess.Popen(
                argv,
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                time.sleep(3.0)  # started and following
                alone: list[tuple[float, float]] = []
                along: list[tuple[float, float]] = []
                share: list[float] = []
                for r in range(args.rounds):
                    # ABBA order: a drift in the machine's load favours neither kind
                    for kind in ("alone", "along") if r % 2 == 0 else ("along", "alone"):
                        if kind == "alone":
                            os.kill(follower.pid, signal.SIGSTOP)
                            alone.append(_round(target, args.appends, f"a{r}"))
                            os.kill(follower.pid, signal.SIGCONT)
                            continue
                        time.sleep(0.5)  # caught up with what it missed while paused
                        cpu, wall = _cpu_of(follower.pid), time.perf_counter()
                        along.append(_round(target, args.appends, f"b{r}"))
                        spent = _cpu_of(follower.pid) - cpu
                        share.append(spent / (time.perf_counter() - wall))
            finally:
                with suppress(OSError):
                    os.kill(follower.pid, signal.SIGCONT)
                follower.terminate()
                follower.wait(10)
            rate_a = statistics.median(x[0] for x in alone)
            rate_b = statistics.median(x[0] for x in along)
            cpu_a = statistics.median(x[1] for x in alone)
            cpu_b = statistics.median(x[1] for x in along)
            # each pair of adjacent rounds shares the machine's load: the median of their ratios
            rate_r = statistics.median(b[0] / a[0] for a, b in zip(alone, along, strict=True))
            cpu_r = statistics.median(b[1] / a[1] for a, b in zip(alone, along, strict=True))
            print(
                f"{name:<9} {rate_a:>16.0f} {rate_b:>14.0f} {rate_r:>6.3f}   "
                f"{cpu_a:>12.0f} {cpu_b:>8.0f} {cpu_r:>6.3f}   "
                f"{100 * statistics.median(share):>5.1f}%"
            )


if __name__ == "__main__":
    main()
