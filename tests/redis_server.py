"""A real ``redis-server`` for the tests: own port, own temporary directory, stopped afterwards.

Tests never use a Redis that happens to run on the machine: each server is
started here on a free port with ``--dir`` in a temporary folder, with
persistence off, and stopped (SIGTERM, then SIGKILL) when done. Only when no
``redis-server`` executable can be found does a test skip, saying so.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from server_process import free_port, wait_until_ready

__all__ = ["RedisServer", "find_redis_server", "free_port", "require_redis_server"]

#: Where Debian's ``redis-server`` package puts the server; PATH is searched first.
_CANDIDATES = ("/usr/bin/redis-server", "/usr/local/bin/redis-server")


def find_redis_server() -> str | None:
    """The ``redis-server`` executable, or ``None`` when the machine has none."""
    found = shutil.which("redis-server")
    if found:
        return found
    return next((c for c in _CANDIDATES if os.access(c, os.X_OK)), None)


def require_redis_server() -> str:
    """The executable, or skip the calling test with the reason."""
    exe = find_redis_server()
    if exe is None:
        pytest.skip(
            "redis-server not found on PATH or in /usr/bin (Debian package 'redis-server'; "
            ".ci/run installs it)"
        )
    return exe


class RedisServer:
    """One ``redis-server`` process; ``stop()`` and ``start()`` again keep port and folder."""

    def __init__(self, exe: str, folder: Path, *, persist: bool = False) -> None:
        self.exe = exe
        self.persist = persist
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def args(self) -> list[str]:
        """The server's command line."""
        return [
            self.exe,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.folder),
            "--save",
            "",
            "--appendonly",
            "yes" if self.persist else "no",
            "--appendfsync",
            "always",
            "--daemonize",
            "no",
            "--protected-mode",
            "yes",
            "--maxclients",
            "1000",
        ]

    def start(self, timeout: float = 20.0) -> None:
        """Start the server and wait until it answers PING."""
        self.folder.mkdir(parents=True, exist_ok=True)
        log = open(self.folder / "redis.log", "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(self.args(), stdout=log, stderr=subprocess.STDOUT)
        log.close()
        wait_until_ready(
            self.proc,
            self.ping,
            name="redis-server",
            port=self.port,
            log=self.folder / "redis.log",
            stop=self.stop,
            timeout=timeout,
            poll=0.02,
        )

    def ping(self) -> bool:
        """Whether the server answers a RESP PING right now (no client library needed)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"*1\r\n$4\r\nPING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and wait for it."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            proc.kill()
            proc.wait(timeout=10)
