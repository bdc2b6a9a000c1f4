"""Wall and CPU time of ``flowdrop-buffer replay`` on a long realistic recording, and its phases.

The recording is the travel-agent loop of ``scripts/gen_long_conversation.py``
(OpenAI Chat JSONL, one message per line, re-fired results, dangling calls and
retried steps) at ``--messages`` messages (100,000 by default: about 14.5 MB).

1. The real command as a child process, ``python -m flowdrop_core replay REC``
   (the table, and ``--json``), ``--rounds`` times each: wall and CPU seconds
   per run, best and median (target: under 3 s wall for the table).
2. The same command's phases in this process (CPU seconds, GC paused as the
   command pauses it): reading and importing the file, checking the messages,
   building the scenario, the replay itself, and the output (table or JSON
   lines), so a regression can be located.

The machine's load average is printed with the figures: on a shared machine
wall time moves with the load; CPU time less so.

Run: ``.venv/bin/python benchmarks/replay_cli_bench.py [--messages 100000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import gc
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
sys.path.insert(0, str(ROOT / "scripts"))

from gen_long_conversation import generate, render  # noqa: E402

from flowdrop_core.cli import _replay as replay_cli  # noqa: E402
from flowdrop_core.cli import build_parser  # noqa: E402
from flowdrop_core.cli._loading import check_messages, load_source  # noqa: E402
from flowdrop_core.cli._output import visible  # noqa: E402

TARGET_S = 3.0


def _load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def child_times(args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process, its output discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


class _Sink:
    """A text stream that drops what is written (the command's output, without a file)."""

    def write(self, text: str) -> int:
        return len(text)


def phases(path: Path, as_json: bool) -> dict[str, float]:
    """CPU seconds of each phase of the command, in this process."""
    out: dict[str, float] = {}

    def lap(name: str, fn: Callable[[], Any]) -> Any:
        start = time.process_time()
        value = fn()
        out[name] = time.process_time() - start
        return value

    args = build_parser().parse_args(["replay", str(path), *(["--json"] if as_json else [])])
    gc.collect()
    gc.disable()
    try:
        source = lap("read + import", lambda: load_source(str(path), None))
        lap("check messages", lambda: check_messages(source.path, source.entries, source.origins))
        scenario, origins = lap("build scenario", lambda: replay_cli.build_replay(source, args))
        timeline = lap(
            "replay", lambda: replay_cli._run(scenario, "none", origins, False, validated=True)
        )
        if as_json:
            lap("JSON lines", lambda: replay_cli._write_lines(_Sink(), timeline.to_json_lines()))
        else:
            lap("table", lambda: len(visible(replay_cli.format_table(timeline))))
    finally:
        gc.enable()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3, help="child runs per output mode")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="flowdrop-replay-") as folder:
        path = Path(folder) / "recording.jsonl"
        path.write_text(render(generate(args.messages)), encoding="utf-8")
        size = path.stat().st_size / 1e6
        print(f"recording: {args.messages:,} messages, {size:.1f} MB (gen_long_conversation)")
        print(f"load average before: {_load()}")
        cmd = [sys.executable, "-m", "flowdrop_core", "replay", str(path)]
        for label, extra in (("table", []), ("--json", ["--json"])):
            runs = [child_times(cmd + extra) for _ in range(args.rounds)]
            walls = sorted(w for w, _ in runs)
            cpus = sorted(c for _, c in runs)
            verdict = "met" if walls[0] < TARGET_S else "NOT met"
            print(
                f"replay ({label}): wall best {walls[0]:.2f} s, median "
                f"{statistics.median(walls):.2f} s; CPU best {cpus[0]:.2f} s, median "
                f"{statistics.median(cpus):.2f} s over {args.rounds} runs "
                f"(target < {TARGET_S:g} s wall: {verdict} by the best run)"
            )
        for as_json in (False, True):
            times = phases(path, as_json)
            total = sum(times.values())
            parts = ", ".join(f"{name} {seconds:.2f}" for name, seconds in times.items())
            print(f"phases, CPU s ({'--json' if as_json else 'table'}): {parts}; total {total:.2f}")
        print(f"load average after: {_load()}")


if __name__ == "__main__":
    main()
