"""Two processes for the ``--follow`` tests: a follower whose output is read with a deadline,
and a writer that appends (or writes outside the journal) on command and says when it committed.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]

WRITER = r"""
import json, sys, time
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.store_browser import open_store
store = open_store(sys.argv[1], writable=True) if sys.argv[1] != "-" else None
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["op"] == "append":
        buf = ConversationBuffer(scope=cmd.get("scope", "session"), key=cmd.get("key", "chat_history"),
                                 max_messages=cmd.get("max", 0), store=store, journal=100)
        res = buf.append(cmd["messages"], cmd.get("context"))
        out = {"refused": res.refused, "appended": res.appended}
    elif cmd["op"] == "set":
        store.set(*cmd["slot"], cmd["value"])
        out = {}
    else:
        import importlib
        out = {"ran": importlib.import_module(cmd["module"]).run(**cmd["kw"])}
    out["at"] = time.time()
    print(json.dumps(out), flush=True)
"""


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


class Process:
    """A child process whose stdout and stderr are read as :class:`Lines`."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
        )
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self.out = Lines(self.proc.stdout)
        self.err = Lines(self.proc.stderr)

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(5)


class Writer(Process):
    """Appends to a store on command, each in its own transaction, from another process."""

    def __init__(self, target: str = "-", *, wait: bool = True) -> None:
        tests = str(REPO / "tests")
        path = os.pathsep.join(p for p in (tests, os.environ.get("PYTHONPATH", "")) if p)
        super().__init__([sys.executable, "-c", WRITER, target], {**os.environ, "PYTHONPATH": path})
        self._ready = False
        if wait:
            self.ready()

    def ready(self) -> None:
        """Wait until the writer has started (once)."""
        if not self._ready:
            self.out.next(30)
            self._ready = True

    def send(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        _, line = self.out.next(15)
        return dict(json.loads(line))


def follower(*argv: str) -> Process:
    """``flowdrop-buffer store ... --follow``, started and past its first line (on stderr)."""
    proc = Process([sys.executable, "-m", "flowdrop_core", "store", *argv, "--follow"])
    _, head = proc.err.next(30)
    assert head.startswith("following "), head
    return proc
