"""Append cost: Buffer.append against a deque of copies, and at two buffer sizes.

Run with ``make bench`` (or ``python benchmarks/append_bench.py``). It prints:

(a) ns/message for ``collections.deque(maxlen=N).append(dict(m))``: the
    baseline, because a stored row is a copy of the message;
(b) ns/message for ``Buffer.append``, one message per append, over the same
    200,000-message mixed agent conversation (re-fired results, dangling
    calls healed at the next user turn) at window N = 1,000, and the ratio
    (b)/(a) (target <= 15). (a) and (b) are timed back to back in
    each of ``--rounds`` rounds, so a ratio compares like with like on a
    shared machine; it prints every round's ratio, their median and range,
    and the ratio of the best (b) to the best (a);
(c) the per-append cost of an unbounded buffer holding 1,000 versus 100,000
    entries (target: within 1.5x), which shows an append never walks the buffer;
(d) pieces of (b), each alone per message: reading, validating and writing the
    stored row (``read_row``), making the result (built on demand), what a
    caller pays to build the result and its events by reading ``events``, and
    a floor: a stand-in append that only checks the role, writes the row,
    records its events (appended, evicted) and returns a slotted result, with
    no rule at all.

Timings are process CPU time (``time.process_time_ns``) with the GC paused,
which is robust to other processes sharing the machine, though not immune:
contention for caches still slows (b) more than (a).

``--instructions`` adds a figure that does not move with the machine: the
instructions per message of (a) and (b), counted by ``valgrind
--tool=cachegrind`` (Debian package ``valgrind``) over a 20,000-message
slice of the same conversation (the difference between three passes and
one, so start-up is not counted), and their ratio.
"""

from __future__ import annotations

import argparse
import gc
import random
import shutil
import statistics
import time
from collections import deque
from typing import Any

from _cachegrind import instructions

from flowdrop_core import Buffer
from flowdrop_core.engine import AppendResult
from flowdrop_core.messages import read_row

TARGET = 15.0


def agent_conversation(n: int, seed: int = 14) -> list[dict[str, Any]]:
    """A mixed agent loop: user turns, assistant turns with tool calls, results,
    re-fired (duplicate) results and calls that never get an answer."""
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    call = 0
    answered: list[str] = []
    while len(out) < n:
        out.append({"role": "user", "content": f"question {len(out)}"})
        for _ in range(rng.randint(0, 3)):
            ids = [f"call_{call + k}" for k in range(rng.randint(1, 2))]
            call += len(ids)
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {"name": "search", "arguments": "{}"},
                        }
                        for cid in ids
                    ],
                }
            )
            for cid in ids:
                if rng.random() < 0.1:
                    continue  # dangling call: healed at the next user turn
                out.append({"role": "tool", "content": f"result of {cid}", "tool_call_id": cid})
                answered.append(cid)
            if answered and rng.random() < 0.3:  # orchestrator re-fires a recent result
                cid = answered[-rng.randint(1, min(5, len(answered)))]
                out.append({"role": "tool", "content": f"result of {cid}", "tool_call_id": cid})
        out.append({"role": "assistant", "content": "answer"})
    return out[:n]


def cpu_ns(fn: Any) -> int:
    """CPU time of one ``fn()`` with the GC paused."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time_ns()
        fn()
        return time.process_time_ns() - start
    finally:
        gc.enable()


def best_ns(fn: Any, repeat: int) -> int:
    """Best CPU time of ``fn()`` over ``repeat`` runs."""
    return min(cpu_ns(fn) for _ in range(repeat))


def bench_window(
    conv: list[dict[str, Any]], window: int, rounds: int, engines: dict[str, Any]
) -> tuple[list[float], dict[str, list[float]]]:
    """(a), (b): ns/message per round for the deque of copies and each engine."""

    def plain_deque() -> None:
        d: deque[dict[str, Any]] = deque(maxlen=window)
        append = d.append
        for msg in conv:
            append(dict(msg))

    def run(cls: Any) -> Any:
        def buffer() -> None:
            buf = cls(max_messages=window)
            append = buf.append
            for msg in conv:
                append(msg)

        return buffer

    n = len(conv)
    base: list[float] = []
    per: dict[str, list[float]] = {name: [] for name in engines}
    for _ in range(rounds):
        base.append(cpu_ns(plain_deque) / n)
        for name, cls in engines.items():
            per[name].append(cpu_ns(run(cls)) / n)
    return base, per


def bench_size(conv: list[dict[str, Any]], size: int, probe: int) -> float:
    """(c): ns per append into an unbounded buffer already holding ``size`` entries."""
    buf = Buffer(conv[:size])
    # A stored buffer the engine wrote has no stale open calls: heal the
    # loaded one once, untimed, so the probe measures steady-state appends.
    buf.append({"role": "user", "content": "warm-up"})
    append = buf.append
    tail = conv[size : size + probe]
    return cpu_ns(lambda: [append(m) for m in tail]) / len(tail)


def bench_sizes(
    conv: list[dict[str, Any]], small: int, large: int, probe: int, rounds: int
) -> tuple[list[float], list[float]]:
    """(c) in rounds, small and large back to back, as (a) and (b) are."""
    out: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        out[0].append(bench_size(conv, small, probe))
        out[1].append(bench_size(conv, large, probe))
    return out


def bench_pieces(conv: list[dict[str, Any]], window: int, repeat: int) -> dict[str, float]:
    """(d): ns/message of pieces of one append, each on its own."""
    new_object = object.__new__

    def read() -> None:
        for msg in conv:
            read_row(msg)

    def result() -> None:
        decisions: list[tuple[Any, ...]] = []
        for _ in conv:  # what Buffer.append does to make its result
            result = new_object(AppendResult)
            result.count = 1
            result.appended = 1
            result.appended_any = True
            result.max_messages = window
            result._events = decisions

    def read_events() -> None:
        buf = Buffer(max_messages=window)
        append = buf.append
        for msg in conv:
            append(msg).events  # noqa: B018  # builds the result and its Event objects

    n = len(conv)
    return {
        "read + validate + write row": best_ns(read, repeat) / n,
        "make the (lazy) result": best_ns(result, repeat) / n,
        "(b) and then read .events": best_ns(read_events, repeat) / n,
    }


class _FloorResult:
    __slots__ = ("appended", "count", "events")

    def __init__(self, count: int, appended: int, events: tuple[Any, ...]) -> None:
        self.count = count
        self.appended = appended
        self.events = events


def bench_floor(conv: list[dict[str, Any]], window: int, repeat: int) -> float:
    """(d) floor: ns/message of a rule-free stand-in append (not the engine)."""
    roles = frozenset({"system", "user", "assistant", "tool"})

    def run() -> None:
        nodes: deque[dict[str, Any]] = deque()

        def append(msg: dict[str, Any]) -> _FloorResult:
            role = msg.get("role")
            if role not in roles:
                raise ValueError(role)
            row = {"role": role, "content": msg.get("content"), "metadata": {}}
            nodes.append(row)
            events = [("appended", len(nodes) - 1, row)]
            if len(nodes) > window:
                events.append(("evicted", 0, nodes.popleft()))
            return _FloorResult(len(nodes), 1, tuple(events))

        for msg in conv:
            append(msg)

    return best_ns(run, repeat) / len(conv)


def _passes(mode: str, passes: int) -> None:
    """``--count MODE PASSES``: run (a) or (b) over the 20,000-message slice, untimed."""
    conv = agent_conversation(20_000)

    def plain() -> None:
        d: deque[dict[str, Any]] = deque(maxlen=1_000)
        append = d.append
        for msg in conv:
            append(dict(msg))

    def engine() -> None:
        append = Buffer(max_messages=1_000).append
        for msg in conv:
            append(msg)

    gc.disable()
    for _ in range(passes):
        (plain if mode == "a" else engine)()


def _instructions(mode: str, passes: int) -> int:
    """Instructions counted by cachegrind for ``passes`` passes of ``mode`` (plus start-up)."""
    return instructions(__file__, "--count", mode, str(passes))


def print_instructions() -> None:
    """(a) and (b) in instructions per message (see the module docstring)."""
    if shutil.which("valgrind") is None:
        print("--instructions: valgrind is not installed (Debian package valgrind)")
        return
    per = {m: (_instructions(m, 3) - _instructions(m, 1)) / 40_000 for m in ("a", "b")}
    print(
        f"(i)  instructions per message (cachegrind, 20,000 messages): (a) {per['a']:,.0f}, "
        f"(b) {per['b']:,.0f}, (b)/(a) {per['b'] / per['a']:.1f}x  (target <= {TARGET:g})"
    )


def _ratios(engine: list[float], base: list[float]) -> str:
    ratios = [e / b for e, b in zip(engine, base, strict=True)]
    return (
        f"median {statistics.median(ratios):5.1f}x, range {min(ratios):.1f}x-{max(ratios):.1f}x, "
        f"best/best {min(engine) / min(base):5.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--window", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=7, help="rounds of (a) and (b)")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of (c), repeats of (d)")
    parser.add_argument(
        "--instructions", action="store_true", help="also count instructions (valgrind)"
    )
    parser.add_argument("--count", nargs=2, metavar=("MODE", "PASSES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.count:  # the child that --instructions runs under valgrind
        _passes(args.count[0], int(args.count[1]))
        return

    conv = agent_conversation(max(args.messages, 110_000))
    stream = conv[: args.messages]
    engines: dict[str, Any] = {"Buffer.append": Buffer}
    base, per = bench_window(stream, args.window, args.rounds, engines)
    print(f"conversation: {len(stream):,} messages, window {args.window:,}, {args.rounds} rounds")
    print(f"(a)  deque(maxlen).append(dict(m)) : {min(base):8.1f} ns/message (best)")
    ours = per["Buffer.append"]
    print(f"(b)  Buffer.append                 : {min(ours):8.1f} ns/message (best)")
    print(
        "     per-round (b)/(a): "
        + " ".join(f"{o / b:.1f}" for o, b in zip(ours, base, strict=True))
    )
    verdict = (
        "met"
        if statistics.median([o / b for o, b in zip(ours, base, strict=True)]) <= TARGET
        else "NOT met"
    )
    print(f"     (b)/(a): {_ratios(ours, base)}   (target <= {TARGET:g}: {verdict} by the median)")

    small, large = bench_sizes(conv, 1_000, 100_000, 5_000, args.repeat)
    growth = sorted(big / little for big, little in zip(large, small, strict=True))
    print(f"(c)  unbounded, 1,000 entries   : {min(small):8.1f} ns/append (best)")
    print(f"     unbounded, 100,000 entries : {min(large):8.1f} ns/append (best)")
    print(
        f"     ratio: median {statistics.median(growth):.2f}x, "
        f"range {growth[0]:.2f}x-{growth[-1]:.2f}x  (target <= 1.5)"
    )

    plain = min(base)
    print("(d)  pieces of (b), per message, alone:")
    for label, ns in bench_pieces(stream, args.window, args.repeat).items():
        print(f"     {label:<28}: {ns:8.1f} ns  ({ns / plain:5.1f}x (a))")
    floor = bench_floor(stream, args.window, args.repeat)
    print(f"     {'floor: rule-free stand-in':<28}: {floor:8.1f} ns  ({floor / plain:5.1f}x (a))")
    if args.instructions:
        print_instructions()


if __name__ == "__main__":
    main()
