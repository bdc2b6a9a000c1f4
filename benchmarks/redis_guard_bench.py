"""What the eviction-policy guard costs a Redis append.

Every write script of :class:`~flowdrop_core.storage.redis_store.RedisStore`
starts by reading ``maxmemory-policy`` (``INFO memory``, inside the script, so a
policy changed after connect refuses the very next write). This benchmark
runs the same appends through two stores on one ``redis-server`` (started on
a free port, or ``--redis-url``): the real one, and one whose append script
is the same script without the guard. It reports, per append:

- server time in scripts: ``INFO commandstats`` ``usec`` of EVALSHA over the
  appends (the read, the change and the lease release; the server runs one
  command at a time, so this is the CPU it spent in them);
- the caller's wall time of a whole ``ConversationBuffer.append``
  (engine, lock lease, read and write round trips).

Rounds alternate between the two, and medians are reported, so a load change
on a shared machine touches both alike. The ratio is guarded / unguarded.

Run: ``.venv/bin/python benchmarks/redis_guard_bench.py [--appends N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from redis_server import RedisServer, find_redis_server  # the tests' own server

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.storage.redis_store import _APPLY, _GUARD, RedisStore


def _msg(i: int) -> dict[str, Any]:
    return {"role": "user", "content": f"message {i}: some ordinary chat text"}


def _round(store: RedisStore, n: int, window: int) -> tuple[float, float]:
    """``n`` appends to a full window; (server µs in scripts, caller µs) per append."""
    buf = ConversationBuffer(store=store, max_messages=window)
    ctx = {"session_id": "bench"}
    store.client.config_resetstat()
    start = time.perf_counter()
    for i in range(n):
        buf.append(_msg(i), ctx)
    wall = (time.perf_counter() - start) / n * 1e6
    stats = store.client.info("commandstats")["cmdstat_evalsha"]
    return float(stats["usec"]) / n, wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=1000, help="appends per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per variant")
    parser.add_argument("--window", type=int, default=50, help="max_messages")
    parser.add_argument("--redis-url", help="a Redis to use (default: start redis-server)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        server = None
        url = args.redis_url
        if url is None:
            exe = find_redis_server()
            if exe is None:
                sys.exit("redis-server not found")
            server = RedisServer(exe, Path(tmp) / "redis")
            server.start()
            url = server.url
        try:
            guarded = RedisStore(url, namespace="benchguarded")
            bare = RedisStore(url, namespace="benchbare")
            assert _GUARD in _APPLY
            bare._apply = bare.client.register_script(_APPLY.replace(_GUARD, ""))
            for store in (guarded, bare):  # fill the window: every append also drops one
                buf = ConversationBuffer(store=store, max_messages=args.window)
                buf.append([_msg(-i) for i in range(args.window)], {"session_id": "bench"})
            server_us: dict[str, list[float]] = {"guarded": [], "bare": []}
            wall_us: dict[str, list[float]] = {"guarded": [], "bare": []}
            for _ in range(args.rounds):
                for name, store in (("guarded", guarded), ("bare", bare)):
                    s, w = _round(store, args.appends, args.window)
                    server_us[name].append(s)
                    wall_us[name].append(w)
            for ns in ("benchguarded", "benchbare"):
                keys = list(guarded.client.scan_iter(match=f"{ns}:*"))
                if keys:
                    guarded.client.delete(*keys)
        finally:
            if server is not None:
                server.stop()
    s_g, s_b = statistics.median(server_us["guarded"]), statistics.median(server_us["bare"])
    w_g, w_b = statistics.median(wall_us["guarded"]), statistics.median(wall_us["bare"])
    print(f"{args.rounds} rounds x {args.appends} appends, window {args.window}, medians")
    print("| per append | with guard | without | ratio |")
    print("|---|---:|---:|---:|")
    print(f"| server time in scripts (EVALSHA usec) | {s_g:.1f} us | {s_b:.1f} us | "
          f"{s_g / s_b:.2f}x |")  # fmt: skip
    print(f"| caller wall time of append | {w_g:.0f} us | {w_b:.0f} us | {w_g / w_b:.3f}x |")


if __name__ == "__main__":
    main()
