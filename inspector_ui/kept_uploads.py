"""Uploads kept on disk by content digest, so a link can reopen a recording.

A Replay link names an upload by the SHA-256 of its bytes (``?upload=<64 hex
digits>``); :class:`UploadKeeper` holds those bytes in a folder the operator
chooses, with a total size budget and a retention time. Each upload is two
files, ``<digest>`` (the bytes) and ``<digest>.name`` (the file name it was
uploaded under), written to a temporary file in the same folder and moved into
place (``os.replace``), so a reader never sees half a file. Opening an upload
renews its time; past the retention time, or past the budget (the least
recently used first), uploads are deleted. A digest is checked to be 64
lowercase hex digits before it names a file: a link cannot reach outside the
folder.

The bytes live on disk, not in the server's memory: a kept upload costs RAM
only while a session shows it.

Settings (read when the server starts a keeper; see docs/serving.md):

* ``FLOWDROP_UPLOAD_KEEP_DIR``: the folder (default
  ``$XDG_CACHE_HOME/flowdrop/uploads``, else ``~/.cache/flowdrop/uploads``);
  ``off`` keeps nothing (links then cannot reopen uploads);
* ``FLOWDROP_UPLOAD_KEEP_MB``: the total size budget in MB (default 500);
* ``FLOWDROP_UPLOAD_KEEP_DAYS``: how long an upload is kept after it was last
  uploaded or opened, in days (default 7).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

DIR_ENV = "FLOWDROP_UPLOAD_KEEP_DIR"
MB_ENV = "FLOWDROP_UPLOAD_KEEP_MB"
DAYS_ENV = "FLOWDROP_UPLOAD_KEEP_DAYS"
#: The value of ``FLOWDROP_UPLOAD_KEEP_DIR`` that switches keeping off.
OFF = "off"
DEFAULT_MB = 500.0
DEFAULT_DAYS = 7.0
MB = 1024 * 1024
DAY = 86_400.0
#: A kept upload's name is clipped to this many characters.
MAX_NAME = 255

_DIGEST = re.compile(r"[0-9a-f]{64}")
_NAME_SUFFIX = ".name"


class KeepSettingsError(ValueError):
    """An upload-keeping setting the server cannot use (named, with its value)."""


def valid_digest(value: str) -> bool:
    """Whether ``value`` is a SHA-256 digest as the keeper writes it (64 lowercase hex)."""
    return bool(_DIGEST.fullmatch(value))


def digest_of(data: bytes) -> str:
    """The digest an upload is kept under."""
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class KeptUpload:
    """An upload read back: the name it was uploaded under, its bytes and its digest."""

    name: str
    data: bytes
    digest: str


class UploadKeeper:
    """A folder of uploads by digest, bounded in bytes and in age (see the module docstring)."""

    def __init__(self, folder: Path, max_bytes: int, max_age: float) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes
        self.max_age = max_age
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ paths

    def _paths(self, digest: str) -> tuple[Path, Path]:
        if not valid_digest(digest):
            raise ValueError(f"not an upload digest (64 lowercase hex digits): {digest[:80]!r}")
        return self.folder / digest, self.folder / f"{digest}{_NAME_SUFFIX}"

    def _write(self, path: Path, data: bytes) -> None:
        """Write ``data`` to ``path`` whole or not at all (temporary file, then rename)."""
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # ------------------------------------------------------------------ the API

    def put(self, name: str, data: bytes, now: float | None = None) -> str | None:
        """Keep ``data`` under its digest; the digest, or ``None`` when it exceeds the budget."""
        if len(data) > self.max_bytes:
            return None
        digest = digest_of(data)
        data_path, name_path = self._paths(digest)
        stamp = time.time() if now is None else now
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._write(name_path, name[:MAX_NAME].encode("utf-8", "replace"))
            if not data_path.exists() or data_path.stat().st_size != len(data):
                self._write(data_path, data)
            os.utime(data_path, (stamp, stamp))
            self._evict(stamp, keep=digest)
        return digest

    def get(self, digest: str, now: float | None = None) -> KeptUpload | None:
        """The upload kept under ``digest``, or ``None`` if it is gone (or never was).

        Opening it renews its time. A value that is not a digest is ``None`` too.
        """
        if not valid_digest(digest):
            return None
        data_path, name_path = self._paths(digest)
        stamp = time.time() if now is None else now
        with self._lock:
            self._evict(stamp)
            try:
                data = data_path.read_bytes()
                name = name_path.read_text("utf-8", "replace") or digest[:12]
                os.utime(data_path, (stamp, stamp))
            except OSError:
                return None
        if digest_of(data) != digest:  # a damaged file is gone, not another recording
            self.drop(digest)
            return None
        return KeptUpload(name=name, data=data, digest=digest)

    def drop(self, digest: str) -> None:
        """Delete one kept upload (nothing if it is not there)."""
        if not valid_digest(digest):
            return
        with self._lock:
            for path in self._paths(digest):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()

    def entries(self) -> list[tuple[str, int, float]]:
        """Every kept upload as ``(digest, bytes, last used)``, oldest first."""
        found = []
        with contextlib.suppress(FileNotFoundError):
            for path in self.folder.iterdir():
                if not valid_digest(path.name):
                    continue
                with contextlib.suppress(FileNotFoundError):
                    st = path.stat()
                    found.append((path.name, st.st_size, st.st_mtime))
        return sorted(found, key=lambda e: (e[2], e[0]))

    def total_bytes(self) -> int:
        """Bytes of every kept upload."""
        return sum(size for _, size, _ in self.entries())

    def evict(self, now: float | None = None) -> list[str]:
        """Delete what is past the retention time, then the oldest until within budget."""
        with self._lock:
            return self._evict(time.time() if now is None else now)

    def _evict(self, now: float, keep: str | None = None) -> list[str]:
        gone = []
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        for digest, size, used in entries:
            if digest == keep:
                continue
            if now - used > self.max_age or total > self.max_bytes:
                for path in self._paths(digest):
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                total -= size
                gone.append(digest)
        for path in self.folder.glob(f"*{_NAME_SUFFIX}"):  # a name left without its bytes
            digest = path.name[: -len(_NAME_SUFFIX)]
            if valid_digest(digest) and digest != keep and not (self.folder / digest).exists():
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
        return gone


def default_folder() -> Path:
    """``$XDG_CACHE_HOME/flowdrop/uploads``, else ``~/.cache/flowdrop/uploads``."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base else Path.home() / ".cache"
    return root / "flowdrop" / "uploads"


def _number(env: str, default: float) -> float:
    raw = os.environ.get(env, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise KeepSettingsError(f"{env}={raw!r}: not a number") from None
    if not value > 0 or value == float("inf"):
        raise KeepSettingsError(f"{env}={raw!r}: must be a positive number")
    return value


def keeper_from_env() -> UploadKeeper | None:
    """The keeper the operator's settings describe, or ``None`` when keeping is off."""
    raw = os.environ.get(DIR_ENV, "").strip()
    if raw.lower() == OFF:
        return None
    folder = Path(raw).expanduser() if raw else default_folder()
    return UploadKeeper(
        folder,
        max_bytes=int(_number(MB_ENV, DEFAULT_MB) * MB),
        max_age=_number(DAYS_ENV, DEFAULT_DAYS) * DAY,
    )
