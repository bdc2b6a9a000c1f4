"""Peak memory and time of a 10,000-step replay, as the inspector's replay page runs it.

A timeline keeps each step's events plus a checkpoint of the buffer every
256 steps of a slot, and rebuilds any step's buffer on demand. This script
measures what that costs (``tracemalloc`` peak while replaying, and the size
the finished timeline keeps alive) next to what keeping a full copy of the
buffer after every step would hold, for an unbounded buffer and a window.

Run: ``python benchmarks/replay_memory.py`` (or ``make bench``).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

from flowdrop_core.importers import parse_conversation
from flowdrop_core.replay import replay_conversation
from flowdrop_core.scenario import ScenarioConfig

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gen_long_conversation import generate, render  # noqa: E402


def conversation_text(messages: int) -> str:
    """The checked-in generator's conversation, at the requested length."""
    return str(render(generate(messages)))


def measure(text: str, window: int) -> tuple[float, float, float, int]:
    """(seconds, peak MiB while replaying, MiB kept by the timeline, naive MiB estimate)."""
    conv = parse_conversation(text, source_name="generated.jsonl")
    config = ScenarioConfig(max_messages=window)
    start = time.perf_counter()
    replay_conversation(conv, config=config)  # timed untraced: tracemalloc slows Python ~3x
    seconds = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    timeline = replay_conversation(conv, config=config)
    kept, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # A full copy per step is one list of references per step: 8 bytes an entry
    # plus the list header, at the very least (sharing the entry dicts).
    naive_refs = sum(step.count for step in timeline.steps)
    naive_mib = (naive_refs * 8 + len(timeline.steps) * 56) / 2**20
    return seconds, (peak - base) / 2**20, (kept - base) / 2**20, round(naive_mib)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args()
    text = conversation_text(args.messages)
    print(f"replay of {args.messages:,} one-message steps (memory store)")
    print(f"{'window':>8}  {'time':>7}  {'peak':>9}  {'kept':>9}  {'a buffer per step':>18}")
    for window in (0, 200, 50):
        seconds, peak, kept, naive = measure(text, window)
        label = "none" if window == 0 else str(window)
        print(
            f"{label:>8}  {seconds:6.2f}s  {peak:6.1f} MiB  {kept:6.1f} MiB  "
            f"{naive:>10} MiB (refs only)"
        )


if __name__ == "__main__":
    main()
