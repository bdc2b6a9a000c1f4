"""Recordings at production size: ``replay``, ``doctor`` and ``lint`` against the floor, in one run.

The recording is the agent loop of ``scripts/gen_long_conversation.py``
(OpenAI Chat JSONL, one message per line: tool calls, results, re-fired
results, dangling calls) at ``--messages`` messages (100,000 by default).

The floor is the same work done plainly: ``json.loads`` of every line and one
``Buffer.append`` per message in a loop, in its own process. Every command
and the floor run as child processes here, one after the other, ``--rounds``
times each; a figure is the best round's CPU seconds (user + system, of the
child alone), given as a ratio to the floor's in the same run, so the
machine's load moves it less. Wall seconds are printed as a note only. Peak
memory is each child's peak RSS; "the decoded messages" is the peak RSS of a
child that only decodes every line and keeps the values.

Goals (each printed with its figure, met or missed):

- ``replay`` (the table) at most 2x the floor's CPU;
- ``doctor`` at most 1.5x ``replay``'s CPU; ``lint`` at most ``replay``'s;
- ``replay``'s peak RSS at most 2x the floor's, and at most 1.5 KB per
  message above the decoded messages;
- with ``--million``: 1,000,000 messages replayed, doctored and linted, each
  under 2 GB peak RSS (CPU and wall seconds stated). Heavy: run it once.

Run: ``.venv/bin/python benchmarks/scale_bench.py [--messages 100000] [--rounds 2] [--million]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gen_long_conversation import generate, render  # noqa: E402

#: The floor: decode every line, one engine append per message, in a plain loop.
FLOOR = """
import json, sys
from flowdrop_core.engine import Buffer
buffer = Buffer()
with open(sys.argv[1], encoding="utf-8") as handle:
    for line in handle:
        if line.strip():
            buffer.append(json.loads(line))
"""
#: The decoded messages alone: every line decoded and kept.
DECODED = """
import json, sys
with open(sys.argv[1], encoding="utf-8") as handle:
    values = [json.loads(line) for line in handle if line.strip()]
"""
KB = 1024
GB = 1024**3


@dataclass
class Run:
    """One child process: CPU seconds (user + system), wall seconds, peak RSS in bytes."""

    cpu: float
    wall: float
    rss: int


def child(argv: list[str], env: dict[str, str] | None = None) -> Run:
    """Run one child process, its output discarded, and measure it alone (``wait4``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT, env=env
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # doctor and lint exit 1 on findings
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
    return Run(usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss * KB)


def best(argv: list[str], rounds: int, env: dict[str, str] | None = None) -> Run:
    """The best CPU and the best peak RSS over ``rounds`` runs (wall: that of the best CPU)."""
    runs = [child(argv, env) for _ in range(rounds)]
    fastest = min(runs, key=lambda run: run.cpu)
    return Run(fastest.cpu, fastest.wall, min(run.rss for run in runs))


def goal(text: str, figure: str, met: bool) -> bool:
    print(f"  {text}: {figure}: {'met' if met else 'MISSED'}")
    return met


def command(name: str, path: Path) -> list[str]:
    return [sys.executable, "-m", "flowdrop_core", *name.split(), str(path)]


def at_100k(path: Path, messages: int, rounds: int) -> bool:
    """The ratio goals at ``messages`` messages; True when every one is met."""
    floor = best([sys.executable, "-c", FLOOR, str(path)], rounds)
    decoded = best([sys.executable, "-c", DECODED, str(path)], rounds)
    runs = {
        name: best(command(name, path), rounds)
        for name in ("replay", "replay --json", "doctor", "lint")
    }
    print(f"{'':15} {'CPU s':>7} {'x floor':>8} {'peak RSS':>10} {'wall s (note)':>14}")
    for name, run in {"floor": floor, "decoded only": decoded, **runs}.items():
        print(
            f"{name:15} {run.cpu:7.2f} {run.cpu / floor.cpu:7.2f}x "
            f"{run.rss / 2**20:7.0f} MiB {run.wall:14.2f}"
        )
    replay, doctor, lint = runs["replay"], runs["doctor"], runs["lint"]
    above = max(run.rss for run in runs.values()) - decoded.rss
    print(
        "note: replay --json writes about ten times the recording's bytes (each step's "
        "message and events); its figure is given, not held to the table's goal"
    )
    print("goals:")
    results = [
        goal(
            "replay <= 2x floor (CPU)",
            f"{replay.cpu / floor.cpu:.2f}x",
            replay.cpu <= 2 * floor.cpu,
        ),
        goal(
            "doctor <= 1.5x replay (CPU)",
            f"{doctor.cpu / replay.cpu:.2f}x",
            doctor.cpu <= 1.5 * replay.cpu,
        ),
        goal("lint <= replay (CPU)", f"{lint.cpu / replay.cpu:.2f}x", lint.cpu <= replay.cpu),
        goal(
            "peak RSS of every command <= 2x floor's",
            f"{max(r.rss for r in runs.values()) / floor.rss:.2f}x",
            max(r.rss for r in runs.values()) <= 2 * floor.rss,
        ),
        goal(
            "peak RSS above the decoded messages <= 1.5 KB per message",
            f"{above / messages / KB:.2f} KB",
            above <= 1.5 * KB * messages,
        ),
    ]
    return all(results)


def at_million(folder: Path) -> bool:
    """1,000,000 messages replayed, doctored and linted, each under 2 GB peak RSS."""
    path = folder / "million.jsonl"
    path.write_text(render(generate(1_000_000)), encoding="utf-8")
    print(f"1,000,000 messages: {path.stat().st_size / 1e6:.0f} MB")
    env = {**os.environ, "FLOWDROP_MAX_MESSAGES": "1000000"}
    results = []
    for name in ("replay", "doctor", "lint"):
        run = child(command(name, path), env)
        results.append(
            goal(
                f"{name} of 1M messages under 2 GB",
                f"{run.rss / GB:.2f} GB peak, {run.cpu:.1f} CPU s ({run.wall:.1f} s wall)",
                run.rss < 2 * GB,
            )
        )
    return all(results)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2, help="runs of each child; the best counts")
    parser.add_argument("--million", action="store_true", help="also 1,000,000 messages (heavy)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="flowdrop-scale-") as folder:
        path = Path(folder) / "recording.jsonl"
        path.write_text(render(generate(args.messages)), encoding="utf-8")
        print(
            f"recording: {args.messages:,} messages, {path.stat().st_size / 1e6:.1f} MB; "
            f"load average {os.getloadavg()[0]:.1f}; best of {args.rounds} runs"
        )
        met = at_100k(path, args.messages, args.rounds)
        if args.million:
            met = at_million(Path(folder)) and met
    print("every goal met" if met else "some goal MISSED")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
