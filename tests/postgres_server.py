"""A real Postgres for the tests: a throwaway cluster (initdb) on a free port, stopped afterwards.

Tests never use a Postgres that happens to run on the machine: each server
is a fresh cluster made by ``initdb`` in a temporary folder, listening on a
free loopback port (its unix socket in the same folder), with trust
authentication for the one user ``flowdrop``. Postgres refuses to run as
root, so when the tests run as root the cluster is made and run by an
unprivileged user (``postgres`` when Debian's package created it, else
``nobody``). Only when no server binaries can be found does a test skip,
saying so.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest
from server_process import free_port, wait_until_ready

__all__ = ["PostgresServer", "find_postgres_bin", "free_port", "require_postgres_bin"]

#: Debian's ``postgresql`` package puts the binaries here (version in the path).
_GLOBS = ("/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin")


def find_postgres_bin() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``, or ``None`` when the machine has none."""
    found = shutil.which("initdb")
    candidates = [Path(found).resolve().parent] if found else []
    for pattern in _GLOBS:
        candidates += [Path(p) for p in sorted(glob.glob(pattern), reverse=True)]
    for folder in candidates:
        if os.access(folder / "initdb", os.X_OK) and os.access(folder / "postgres", os.X_OK):
            return folder
    return None


def require_postgres_bin() -> Path:
    """The binaries' folder, or skip the calling test with the reason."""
    folder = find_postgres_bin()
    if folder is None:
        pytest.skip(
            "Postgres server binaries (initdb, postgres) not found on PATH or in "
            "/usr/lib/postgresql/*/bin (Debian package 'postgresql'; .ci/run installs it)"
        )
    return folder


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged user to run the server as when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and neither user 'postgres' nor 'nobody' exists")


class PostgresServer:
    """One throwaway cluster; ``stop()`` and ``start()`` again keep its port and data."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.user = _run_as()
        # Not under pytest's tmp_path: that folder is private to root, and the server may
        # run as another user.
        self.folder = Path(tempfile.mkdtemp(prefix="flowdrop-pg-"))
        self.data = self.folder / "data"
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        if self.user is not None:
            os.chown(self.folder, self.user.pw_uid, self.user.pw_gid)
        self._initdb()

    @property
    def url(self) -> str:
        return f"postgresql://flowdrop@127.0.0.1:{self.port}/postgres"

    def _popen(self, args: list[str], **kw: object) -> subprocess.Popen[bytes]:
        extra: dict[str, object] = {}
        if self.user is not None:
            extra = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {**os.environ, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"}
        return subprocess.Popen(args, cwd=self.folder, env=env, **extra, **kw)  # type: ignore[call-overload]

    def _initdb(self) -> None:
        proc = self._popen(
            [
                str(self.bin_dir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "flowdrop",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(
                f"initdb failed ({proc.returncode}):\n{out.decode(errors='replace')}"
            )

    def start(self, timeout: float = 30.0) -> None:
        """Start the server and wait until it accepts connections."""
        log = open(self.folder / "postgres.log", "ab")  # noqa: SIM115 - owned by the process
        if self.user is not None:
            os.chown(self.folder / "postgres.log", self.user.pw_uid, self.user.pw_gid)
        self.proc = self._popen(
            [
                str(self.bin_dir / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-k",
                str(self.folder),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "max_connections=200",
                "-c",
                "shared_buffers=32MB",
                "-c",
                "fsync=off",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        wait_until_ready(
            self.proc,
            self.ready,
            name="postgres",
            port=self.port,
            log=self.folder / "postgres.log",
            stop=self.stop,
            timeout=timeout,
            poll=0.05,
        )

    def ready(self) -> bool:
        """Whether the server accepts a connection right now."""
        import psycopg

        try:
            with psycopg.connect(self.url, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def stop(self) -> None:
        """Stop the server (fast shutdown, then SIGKILL after 20 s) and wait for it."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGINT)  # fast shutdown: disconnects clients, rolls back
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hung server
            proc.kill()
            proc.wait(timeout=10)

    def remove(self) -> None:
        """Stop the server and delete its folder."""
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
