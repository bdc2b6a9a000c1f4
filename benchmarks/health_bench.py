"""Cost of the recording health report, the call lifecycle and a pasted error, at size.

Generates a recording with the checked-in generator (the long sample's mix:
re-sent results, duplicate turns, calls healed at the next user turn) at
5,000, 10,000, 20,000 and 40,000 messages, replays it once (one append per
message, window 50, so evictions and orphaned results are in it too) and
times, median of 5 (``time.perf_counter``, GC paused, as the CLI runs):

- the replay itself, for scale;
- :func:`~flowdrop_core.inspect.lifecycle.lifecycle` (one pass over the events);
- :func:`~flowdrop_core.inspect.health.health` (MEM-5's repair of the
  recording, the late-result pass, the lifecycle, the findings);
- :func:`~flowdrop_core.inspect.provider_errors.diagnose` of one pasted error.

It prints ms per size and ms per 1,000 messages: a flat second column is
O(n). Run: ``python benchmarks/health_bench.py [--sizes 5000,10000,20000,40000]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from gen_long_conversation import generate, render  # noqa: E402

from flowdrop_core.importers import load_conversation  # noqa: E402
from flowdrop_core.inspect.health import health  # noqa: E402
from flowdrop_core.inspect.lifecycle import lifecycle  # noqa: E402
from flowdrop_core.inspect.provider_errors import diagnose  # noqa: E402
from flowdrop_core.replay import replay_conversation  # noqa: E402
from flowdrop_core.scenario import ScenarioConfig  # noqa: E402

ERROR = (
    "messages.20: `tool_use` ids were found without `tool_result` blocks immediately after: "
    "call_00007. Each `tool_use` block must have a corresponding `tool_result` block in the "
    "next message."
)


def conversation_text(messages: int) -> str:
    """The checked-in generator's conversation, at the requested length."""
    return str(render(generate(messages)))


def median_ms(fn: Callable[[], Any], rounds: int = 5) -> float:
    times = []
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
        gc.enable()
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="5000,10000,20000,40000")
    parser.add_argument("--window", type=int, default=50)
    args = parser.parse_args()
    print(f"{'messages':>9} {'replay ms':>10} {'lifecycle ms':>13} {'health ms':>10} "
          f"{'health ms/1k':>13} {'findings':>9} {'paste ms':>9}")  # fmt: skip
    for size in (int(s) for s in args.sizes.split(",")):
        conv = load_conversation(conversation_text(size).encode(), name="gen.jsonl")
        config = ScenarioConfig(max_messages=args.window)
        replay_ms = median_ms(partial(replay_conversation, conv, config=config), rounds=3)
        timeline = replay_conversation(conv, config=config)
        life_ms = median_ms(partial(lifecycle, timeline))
        health_ms = median_ms(partial(health, timeline))
        report = health(timeline)
        paste_ms = median_ms(partial(diagnose, ERROR, report))
        n = len(conv.messages)
        print(
            f"{n:>9,} {replay_ms:>10.0f} {life_ms:>13.1f} {health_ms:>10.1f} "
            f"{health_ms / n * 1000:>13.2f} {len(report.findings):>9,} {paste_ms:>9.2f}"
        )


if __name__ == "__main__":
    main()
