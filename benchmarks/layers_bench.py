"""Per-append cost through every layer: the runtime layer against the engine, and growth.

First, the runtime layer's own cost: :meth:`ConversationBuffer.append` on a
:class:`MemoryStore` against :meth:`Buffer.append`, one message per append,
unbounded, over the same realistic agent recording (the travel-agent loop
of ``scripts/gen_long_conversation.py``, ``--ratio-messages`` messages, the
kind ``flowdrop-buffer replay`` is timed on), both from an empty buffer. The
two are timed back to back in each of ``--rounds`` rounds (CPU time, GC
paused), so each round's ratio compares like with like on a shared machine;
it prints both per-append costs, every round's ratio, their median and the
ratio of the best to the best (target: <= 2x).

One run measures, for each layer, the cost of one more one-message append
to a buffer that already holds N entries (N = 2,000 and 20,000, no window),
and prints the growth ratio cost(20,000) / cost(2,000); the target is <= 2x
for every layer, i.e. no layer walks or copies the buffer per append:

- ``engine``: :meth:`Buffer.append` (the pure engine);
- ``memory``: :meth:`ConversationBuffer.append` on a :class:`MemoryStore`;
- ``sqlite``: the same on a :class:`SQLiteStore` (a temporary file), which
  writes only the rows an append changes;
- ``timeline``: :meth:`Timeline.append_step`, the replay timeline;
- ``cli``: ``python -m flowdrop_core replay REC`` in process (table output)
  on a recording of N messages, per message (so this row includes loading,
  validating and printing).

Then it times the real command, ``python -m flowdrop_core replay`` on a
100,000-message recording without a window (table, and ``--json``), as a
child process: wall time and CPU time (target: under 3 s).

The conversation is the mixed agent loop of ``append_bench.py`` (tool calls,
re-fired results, dangling calls healed by placeholders). Costs are process
CPU time (robust to other processes sharing the machine), best of
``--repeat`` runs of ``--probe`` appends after one warm-up append.

Run: ``.venv/bin/python benchmarks/layers_bench.py [--probe 2000] [--repeat 3]``
(``--ratio-only`` stops after the first part; ``--parts`` instead shows
where the runtime layer's cost goes: the layer with its store's write or its
slot lock replaced by a stub that does nothing).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "scripts"))

from append_bench import agent_conversation  # noqa: E402
from gen_long_conversation import generate  # noqa: E402

from flowdrop_core.cli import main as cli_main  # noqa: E402
from flowdrop_core.conversation import ConversationBuffer  # noqa: E402
from flowdrop_core.engine import Buffer  # noqa: E402
from flowdrop_core.replay import new_timeline  # noqa: E402
from flowdrop_core.storage import MemoryStore, SQLiteStore, Store  # noqa: E402

CTX = {"session_id": "bench"}
SLOT = ("session", "bench", "chat_history")
SIZES = (2_000, 20_000)


def _stored(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries as the engine stores them (what a store holds after N appends)."""
    buf = Buffer()
    for msg in entries:
        buf.append(msg)
    return buf.messages()


def _per_append(prepare: Callable[[], Callable[[dict[str, Any]], Any]], probe: list[Any]) -> float:
    """µs of CPU per append: ``prepare()`` builds a filled layer and returns its append."""
    append = prepare()
    append(probe[0])  # warm-up: the first append reads the store, heals stale open calls
    gc.collect()
    start = time.process_time()
    for msg in probe[1:]:
        append(msg)
    return (time.process_time() - start) / (len(probe) - 1) * 1e6


def _conversation_layer(make_store: Callable[[], Store], start: list[dict[str, Any]]) -> Any:
    def prepare() -> Callable[[dict[str, Any]], Any]:
        store = make_store()
        store.set(*SLOT, start)
        buf = ConversationBuffer(store=store)
        return lambda msg: buf.append(msg, CTX)

    return prepare


def _layers(tmp: Path) -> dict[str, Callable[[list[Any], list[Any]], Any]]:
    counter = iter(range(1_000_000))

    def engine(start: list[Any], _: list[Any]) -> Any:
        def prepare() -> Callable[[dict[str, Any]], Any]:
            return Buffer(start).append

        return prepare

    def memory(start: list[Any], _: list[Any]) -> Any:
        return _conversation_layer(MemoryStore, start)

    def sqlite(start: list[Any], _: list[Any]) -> Any:
        return _conversation_layer(lambda: SQLiteStore(tmp / f"l{next(counter)}.sqlite3"), start)

    def timeline(start: list[Any], _: list[Any]) -> Any:
        def prepare() -> Callable[[dict[str, Any]], Any]:
            tl = new_timeline(context=CTX, buffer=start)
            return tl.append_step

        return prepare

    return {"engine": engine, "memory": memory, "sqlite": sqlite, "timeline": timeline}


def _cli_per_message(path: Path, messages: int, repeat: int, *extra: str) -> float:
    """µs of CPU per message for the whole ``replay`` command, in process, output discarded."""
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["replay", str(path), *extra])
        best = min(best, time.process_time() - start)
        assert code == 0
    return best / messages * 1e6


def _write_recording(path: Path, messages: int) -> int:
    rows = generate(messages)
    path.write_text("".join(json.dumps(m) + "\n" for m in rows), encoding="utf-8")
    return len(rows)


def _child_times(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _cpu_per_append(run: Callable[[], Any], n: int) -> float:
    """µs of CPU per append of one ``run()`` of ``n`` appends, with the GC paused."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        run()
        return (time.process_time() - start) / n * 1e6
    finally:
        gc.enable()


def layer_ratio(messages: int, rounds: int) -> tuple[list[float], list[float]]:
    """Per round: µs per ``Buffer.append`` and per ``ConversationBuffer.append`` (memory store)."""
    rows = generate(messages)

    def engine() -> None:
        append = Buffer().append
        for msg in rows:
            append(msg)

    def conversation() -> None:
        append = ConversationBuffer(store=MemoryStore()).append
        for msg in rows:
            append(msg, CTX)

    engine_us: list[float] = []
    layer_us: list[float] = []
    for _ in range(rounds):
        engine_us.append(_cpu_per_append(engine, len(rows)))
        layer_us.append(_cpu_per_append(conversation, len(rows)))
    return engine_us, layer_us


def print_ratio(messages: int, rounds: int) -> None:
    """The runtime layer against the engine (see the module docstring)."""
    engine_us, layer_us = layer_ratio(messages, rounds)
    ratios = [c / e for c, e in zip(layer_us, engine_us, strict=True)]
    print(
        f"runtime layer vs engine: {messages:,}-message agent recording "
        f"(gen_long_conversation), one message per append, unbounded, {rounds} rounds"
    )
    print(f"  Buffer.append                      : {min(engine_us):6.2f} µs/append (best)")
    print(f"  ConversationBuffer.append (memory) : {min(layer_us):6.2f} µs/append (best)")
    print("  per-round ratio: " + " ".join(f"{r:.2f}" for r in ratios))
    median = statistics.median(ratios)
    print(
        f"  ratio: median {median:.2f}x, best/best {min(layer_us) / min(engine_us):.2f}x "
        f"(target <= 2x: {'met' if median <= 2 else 'NOT met'} by the median)"
    )
    print(f"  load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


class _ConstantWrite(MemoryStore):
    """A memory store whose conditional write does nothing (the write's share, by difference)."""

    def apply(self, scope: str, scope_id: str, key: str, delta: Any, **_: Any) -> str:
        return "constant"


class _FreeLock:
    """A with-block that always acquires and holds nothing."""

    __slots__ = ()

    def __enter__(self) -> bool:
        return True

    def __exit__(self, *exc: object) -> None:
        return None


class _NoLock(MemoryStore):
    """A memory store whose slot lock costs nothing (the lock's share, by difference)."""

    def lock(self, *args: Any, **kwargs: Any) -> Any:
        return _FreeLock()


class _NeitherStore(_ConstantWrite, _NoLock):
    """Neither the write nor the lock: what is left is the layer's own bookkeeping."""


def print_parts(messages: int, rounds: int) -> None:
    """Where the runtime layer's cost goes: the layer with one part at a time made free.

    Each variant replaces one part of the memory store by a stub that does
    nothing (a write that stores nothing and returns a constant revision, a
    lock that holds nothing), so the difference from the real layer is that
    part's cost. The stubs keep the layer's own cache valid, so the engine
    still appends to the whole buffer. Medians of ``rounds`` rounds, in turn.
    """
    rows = generate(messages)

    def engine() -> None:
        append = Buffer().append
        for msg in rows:
            append(msg)

    def layer(make: Callable[[], Store]) -> Callable[[], None]:
        def run() -> None:
            append = ConversationBuffer(store=make()).append
            for msg in rows:
                append(msg, CTX)

        return run

    variants: dict[str, Callable[[], None]] = {
        "Buffer.append (engine)": engine,
        "ConversationBuffer.append (memory)": layer(MemoryStore),
        "  with a write that does nothing": layer(_ConstantWrite),
        "  with a lock that holds nothing": layer(_NoLock),
        "  with neither": layer(_NeitherStore),
    }
    costs: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, run in variants.items():
            costs[name].append(_cpu_per_append(run, len(rows)))
    engine_us = statistics.median(costs["Buffer.append (engine)"])
    print(f"runtime layer by part: {messages:,} messages, median of {rounds} rounds")
    for name, values in costs.items():
        median = statistics.median(values)
        print(f"  {name:<36}: {median:5.2f} µs/append  {median / engine_us:4.2f}x the engine")
    print(f"  load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probe", type=int, default=2_000, help="appends measured per size")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (best is kept)")
    parser.add_argument("--big", type=int, default=100_000, help="messages of the CLI run")
    parser.add_argument("--ratio-messages", type=int, default=20_000, help="messages, part one")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of part one")
    parser.add_argument("--ratio-only", action="store_true", help="only part one")
    parser.add_argument("--parts", action="store_true", help="only the layer's cost by part")
    args = parser.parse_args(argv)

    if args.parts:
        print_parts(args.ratio_messages, args.rounds)
        return

    print_ratio(args.ratio_messages, args.rounds)
    if args.ratio_only:
        return

    conv = agent_conversation(max(SIZES) + args.probe + 1)
    results: dict[str, dict[int, float]] = {}
    with tempfile.TemporaryDirectory(prefix="flowdrop-layers-") as folder:
        tmp = Path(folder)
        for size in SIZES:
            start = _stored(conv[:size])
            probe = conv[size : size + args.probe + 1]
            for name, layer in _layers(tmp).items():
                results.setdefault(name, {})[size] = min(
                    _per_append(layer(start, probe), probe) for _ in range(args.repeat)
                )
            rec = tmp / f"rec{size}.jsonl"
            n = _write_recording(rec, size)
            results.setdefault("cli", {})[size] = _cli_per_message(rec, n, args.repeat)
            results.setdefault("cli --json", {})[size] = _cli_per_message(
                rec, n, args.repeat, "--json"
            )

        print(f"per-append CPU cost, unbounded (best of {args.repeat}, {args.probe} appends)")
        print(f"{'layer':<12} {'2,000':>10} {'20,000':>10} {'growth':>8}")
        worst = 0.0
        for name, by_size in results.items():
            small, large = by_size[SIZES[0]], by_size[SIZES[1]]
            worst = max(worst, large / small)
            print(f"{name:<12} {small:>8.1f}µs {large:>8.1f}µs {large / small:>7.2f}x")
        print(f"worst growth: {worst:.2f}x (target <= 2x)")

        big = tmp / "big.jsonl"
        n = _write_recording(big, args.big)
        cmd = [sys.executable, "-m", "flowdrop_core", "replay", str(big)]
        for label, extra in (("table", []), ("--json", ["--json"])):
            wall, cpu = _child_times(cmd + extra)
            print(
                f"python -m flowdrop_core replay ({n:,} messages, no window, {label}): "
                f"{wall:.1f} s wall, {cpu:.1f} s CPU (target < 3 s)"
            )
        print(f"load average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
