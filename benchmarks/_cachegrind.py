"""Instructions a benchmark's child run executes, counted by valgrind's cachegrind.

Instruction counts are what this shared, noisy machine cannot move: the
benchmarks that state a figure in instructions run themselves again under
cachegrind with the same start-up every time (one hash seed, no bytecode
written by the first run) and read its ``I refs`` total.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys


def instructions(script: str, *args: str) -> int:
    """Instructions of ``python script *args`` under cachegrind (start-up included)."""
    run = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            sys.executable,
            script,
            *args,
        ],
        capture_output=True,
        text=True,
        check=True,
        env={
            **os.environ,
            "PYTHONHASHSEED": "0",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONPATH": os.pathsep.join(sys.path),
        },
    )
    found = re.search(r"I\s+refs:\s+([\d,]+)", run.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{run.stderr[-500:]}")
    return int(found.group(1).replace(",", ""))
