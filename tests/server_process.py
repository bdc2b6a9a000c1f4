"""What the tests' own servers share (``redis_server.py``, ``postgres_server.py``).

A free loopback port, and the wait for a server just started: until it
answers, with its log's tail when it exits first, stopped when it does not
answer in time.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_ready(
    proc: subprocess.Popen[bytes],
    ready: Callable[[], bool],
    *,
    name: str,
    port: int,
    log: Path,
    stop: Callable[[], None],
    timeout: float,
    poll: float,
) -> None:
    """Poll ``ready()`` every ``poll`` s until it is true; ``RuntimeError`` when it never is.

    A server that exited is reported with the tail of its ``log``; one that
    did not answer within ``timeout`` is stopped (``stop()``) first.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            text = log.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"{name} exited with {proc.returncode}:\n{text}")
        if ready():
            return
        time.sleep(poll)
    stop()
    raise RuntimeError(f"{name} on port {port} did not answer within {timeout} s")
