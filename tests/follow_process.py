"""The ``--follow`` tests' follower: a child process whose output is read with a deadline.

The test process itself is the other process that appends; each line the
follower prints is stamped with the time it arrived, to check the latency.
"""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

REPO = Path(__file__).resolve().parents[1]


class Lines:
    """A stream read line by line on a thread, each line with the time it arrived."""

    def __init__(self, stream: IO[str]) -> None:
        self.queue: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream: IO[str]) -> None:
        for line in stream:
            self.queue.put((time.time(), line.rstrip("\n")))

    def next(self, within: float = 5.0) -> tuple[float, str]:
        """The next line and when it came; an AssertionError after ``within`` seconds."""
        try:
            return self.queue.get(timeout=within)
        except queue.Empty:
            raise AssertionError(f"no line within {within} s") from None


class Follower:
    """``flowdrop-buffer store ARGV --follow`` in a child process, past its first line."""

    def __init__(self, *argv: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "flowdrop_core", "store", *argv, "--follow"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.out = Lines(self.proc.stdout)
        self.err = Lines(self.proc.stderr)
        _, head = self.err.next(30)
        assert head.startswith("following "), head

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(5)
