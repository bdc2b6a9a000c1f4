"""The upload endpoint's guard: no bytes stored for a session without the token, and caps.

Streamlit stores every ``PUT /_stcore/upload_file/<session>/<file>`` of an
active session in memory, whatever that session's page said: a visitor who
never gave ``$FLOWDROP_TOKEN`` could take the session id from the websocket
and upload until the server ran out of memory. :class:`UploadGuard` is ASGI
middleware, installed at server start through ``st.App`` (``serve.py``), the
hook Streamlit supports for middleware. It answers before Streamlit's handler
reads a byte of the body:

* **403** when a token is configured and the session has not given it (a
  page's :func:`inspector_ui.visitor.require_token` marks the session with
  :func:`authorize` once it has);
* **413** when the upload would take the session's held upload bytes past
  :func:`session_cap` or all sessions' past :func:`total_cap`. Held bytes are
  what Streamlit's upload manager keeps plus uploads still arriving; an upload
  without a ``Content-Length`` reserves the largest body Streamlit accepts.

Streamlit keeps a closed tab's session for ``server.disconnectedSessionTTL``
(120 s) in case it reconnects, but past that it only forgets the session
lazily, and never removes that session's uploaded files. The guard's sweeper
(a task on the server's event loop, every :data:`SWEEP_SECONDS`) closes a
session that has been disconnected for that long through Streamlit's own
``Runtime.close_session`` (its state and its uploaded files go), then asks the
allocator to hand the freed memory back (``malloc_trim``, where glibc has it).

An upload over ``server.maxUploadSize`` (the Replay page lets the browser send
one, so that it can be named) is refused after reading only its part header:
the file's name and size are kept for the session (:func:`take_oversized`) and
its page is run again to say so.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import os
import re
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

#: The operator's caps, in MB (unset: the defaults below).
SESSION_CAP_ENV = "FLOWDROP_UPLOAD_SESSION_MB"
TOTAL_CAP_ENV = "FLOWDROP_UPLOAD_TOTAL_MB"
#: Defaults: two uploads of the largest size per session, ten sessions' worth in all.
DEFAULT_SESSION_UPLOADS = 2
DEFAULT_TOTAL_UPLOADS = 10
#: Streamlit's margin for multipart framing over ``server.maxUploadSize``.
FRAMING = 1024 * 1024
MB = 1024 * 1024

_PATH = re.compile(r"/_stcore/upload_file/([^/]+)/([^/]+)/?$")
_FILENAME = re.compile(rb'filename="([^"\r\n]{0,1024})"')
_BOUNDARY = re.compile(rb"boundary=\"?([^\";]+)")
#: Bytes of an oversized upload read to learn its file name (the multipart part's header).
NAME_PEEK = 8192

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_lock = threading.Lock()
_authorized: set[str] = set()
_in_flight: dict[str, int] = {}  # session id -> bytes of uploads still arriving
_installed = False
_oversized: dict[str, tuple[str, int, int]] = {}  # session id -> (name, bytes, limit)
_seen: dict[str, float] = {}  # session id -> when the sweeper (or its page) last saw it active
#: How often the sweeper looks for ended sessions (at most; a short TTL sweeps more often).
SWEEP_SECONDS = 5.0


def _max_upload_bytes() -> int:
    from streamlit import config

    return int(config.get_option("server.maxUploadSize")) * MB


def _cap(env: str, uploads: int) -> int:
    raw = os.environ.get(env, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(f"{env}={raw!r}: not a number of megabytes") from None
        if value < 0:
            raise ValueError(f"{env}={raw!r}: a cap cannot be negative")
        return int(value * MB)
    return uploads * (_max_upload_bytes() + FRAMING)


def session_cap() -> int:
    """Upload bytes one session may hold (``$FLOWDROP_UPLOAD_SESSION_MB``; default: two
    uploads of ``server.maxUploadSize``)."""
    return _cap(SESSION_CAP_ENV, DEFAULT_SESSION_UPLOADS)


def total_cap() -> int:
    """Upload bytes all sessions together may hold (``$FLOWDROP_UPLOAD_TOTAL_MB``; default:
    ten uploads of ``server.maxUploadSize``)."""
    return _cap(TOTAL_CAP_ENV, DEFAULT_TOTAL_UPLOADS)


def token_required() -> bool:
    """Whether the operator set a token (read per request: the environment of the server)."""
    from inspector_ui.visitor import configured_token

    return bool(configured_token())


def authorize(session_id: str) -> None:
    """Mark a session as having given the token: its uploads are accepted (within the caps)."""
    with _lock:
        _authorized.add(session_id)


def is_authorized(session_id: str) -> bool:
    """Whether the session gave the token (always true when none is configured)."""
    if not token_required():
        return True
    with _lock:
        return session_id in _authorized


def take_oversized(session_id: str) -> tuple[str, int, int] | None:
    """The upload this session last had refused as too large: ``(file name, bytes, limit)``,
    once (the page says so, then forgets it)."""
    with _lock:
        return _oversized.pop(session_id, None)


def _file_part(first: bytes, content_type: bytes, length: int) -> tuple[str, int]:
    """The file name and size of a one-file multipart body, from its first bytes."""
    found = _FILENAME.search(first[:NAME_PEEK])
    name = found.group(1).decode("utf-8", "replace") if found else "the file"
    header_end = first.find(b"\r\n\r\n")
    boundary = _BOUNDARY.search(content_type)
    closing = len(b"\r\n--" + boundary.group(1) + b"--\r\n") if boundary else 0
    size = length - (header_end + 4 if header_end >= 0 else 0) - closing
    return name, max(0, size)


def _request_rerun(session_id: str) -> None:
    """Run the session's page again, so it can say what was refused (a failed upload does not)."""
    from streamlit import runtime

    if not runtime.exists():
        return
    with contextlib.suppress(Exception):  # Streamlit's session manager is not a public API
        info = runtime.get_instance()._session_mgr.get_active_session_info(session_id)
        # The session's last client state (its page, widgets and URL), as Streamlit's own
        # rerun-on-save passes it; without one, no rerun (None would run the entry page).
        state = getattr(info.session, "_client_state", None) if info is not None else None
        if info is not None and state is not None:
            info.session.request_rerun(state)


def installed() -> bool:
    """Whether this process serves through :class:`UploadGuard` (``streamlit run serve.py``)."""
    return _installed


def note_session(session_id: str) -> None:
    """A page ran for this session: the sweeper closes it once it has ended."""
    with _lock:
        _seen[session_id] = time.monotonic()


def _ttl() -> float:
    from streamlit import config

    return float(config.get_option("server.disconnectedSessionTTL"))


def sweep_interval() -> float:
    """Seconds between sweeps: :data:`SWEEP_SECONDS`, or a quarter of a shorter TTL."""
    return max(0.5, min(SWEEP_SECONDS, _ttl() / 4))


def _trim() -> None:
    """Hand freed heap memory back to the system (glibc's ``malloc_trim``; else nothing)."""
    name = ctypes.util.find_library("c")
    if not name:
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(name).malloc_trim(0)


def sweep(now: float | None = None) -> list[str]:
    """Close the sessions that have been disconnected for about the TTL; their ids.

    Runs on the server's event loop (``Runtime.close_session`` must). A session is
    closed when it was last seen active at least ``TTL - 2 sweeps`` ago: just before
    Streamlit would stop offering it for a reconnect, so nobody who could come back
    loses anything.
    """
    from streamlit import runtime

    if not runtime.exists():
        return []
    instance = runtime.get_instance()
    now = time.monotonic() if now is None else now
    grace = max(0.0, _ttl() - 2 * sweep_interval())
    storage = getattr(instance.uploaded_file_mgr, "file_storage", {})
    with _lock:
        ids = set(_seen) | set(storage)
    closed = []
    for sid in ids:
        if instance.is_active_session(sid):
            with _lock:
                _seen[sid] = now
            continue
        with _lock:
            last = _seen.setdefault(sid, now)
        if now - last < grace:
            continue
        instance.close_session(sid)  # its state and uploaded files, if Streamlit still has it
        instance.uploaded_file_mgr.remove_session_files(sid)  # and if it forgot the session
        with _lock:
            _seen.pop(sid, None)
            _authorized.discard(sid)
            _oversized.pop(sid, None)
        closed.append(sid)
    if closed:
        gc.collect()
        _trim()
    return closed


async def _sweeper() -> None:
    while True:
        await asyncio.sleep(sweep_interval())
        with contextlib.suppress(Exception):  # a sweep never stops the server; the next retries
            sweep()


def held_bytes() -> tuple[dict[str, int], int]:
    """Upload bytes Streamlit holds now, per session and in total (its upload manager)."""
    from streamlit import runtime

    if not runtime.exists():
        return {}, 0
    manager = runtime.get_instance().uploaded_file_mgr
    storage = getattr(manager, "file_storage", None)
    if storage is None:  # another manager than Streamlit's in-memory one
        return {}, 0
    per = {
        sid: sum(len(f.data) for f in list(files.values())) for sid, files in list(storage.items())
    }
    return per, sum(per.values())


def _forget_ended_sessions() -> None:
    """Drop the marks of sessions the runtime no longer knows (called under ``_lock``)."""
    from streamlit import runtime

    if len(_authorized) < 256 or not runtime.exists():
        return
    instance = runtime.get_instance()
    for sid in [s for s in _authorized if not instance.is_active_session(s)]:
        _authorized.discard(sid)


def reserve(session_id: str, file_id: str, size: int) -> str | None:
    """Reserve ``size`` bytes for an arriving upload; the refusal's reason, or ``None``."""
    per, total = held_bytes()
    replaced = 0
    from streamlit import runtime

    if runtime.exists():
        storage = getattr(runtime.get_instance().uploaded_file_mgr, "file_storage", {})
        old = storage.get(session_id, {}).get(file_id)
        replaced = len(old.data) if old is not None else 0
    with _lock:
        _forget_ended_sessions()
        mine = per.get(session_id, 0) - replaced + _in_flight.get(session_id, 0) + size
        everyone = total - replaced + sum(_in_flight.values()) + size
        if mine > session_cap():
            return (
                f"this session's uploads would hold {mine / MB:,.1f} MB, over the "
                f"{session_cap() / MB:,.0f} MB a session may hold ({SESSION_CAP_ENV})"
            )
        if everyone > total_cap():
            return (
                f"the server's uploads would hold {everyone / MB:,.1f} MB, over the "
                f"{total_cap() / MB:,.0f} MB all sessions may hold ({TOTAL_CAP_ENV}); "
                "try again when others' sessions have ended"
            )
        _in_flight[session_id] = _in_flight.get(session_id, 0) + size
        return None


def release(session_id: str, size: int) -> None:
    """The upload has arrived (or failed): what it holds now is counted by Streamlit."""
    with _lock:
        left = _in_flight.get(session_id, 0) - size
        if left > 0:
            _in_flight[session_id] = left
        else:
            _in_flight.pop(session_id, None)


def _replaying(read: list[Message], receive: Receive) -> Receive:
    """``receive`` that gives the messages already ``read`` first, then the rest of the body."""
    pending = list(read)

    async def again() -> Message:
        return pending.pop(0) if pending else await receive()

    return again


async def _refuse(send: Send, status: int, reason: str) -> None:
    body = reason.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class UploadGuard:
    """ASGI middleware in front of Streamlit's upload endpoint (see the module's docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        global _installed
        self.app = app
        self._sweeper: asyncio.Task[None] | None = None
        _installed = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._sweeper is None:  # the first call (the lifespan's) runs on the server's loop
            self._sweeper = asyncio.get_running_loop().create_task(_sweeper())
        match = _PATH.search(scope.get("path", "")) if scope.get("type") == "http" else None
        if match is None or scope.get("method") != "PUT":
            await self.app(scope, receive, send)
            return
        session_id, file_id = match.group(1), match.group(2)
        if not is_authorized(session_id):
            await _refuse(send, 403, "Upload refused: this session has not given the access token.")
            return
        size = _max_upload_bytes() + FRAMING
        content_type = b""
        length: int | None = None
        for name, value in scope.get("headers", []):
            if name.lower() == b"content-type":
                content_type = bytes(value)
            if name.lower() == b"content-length":
                try:
                    length = max(0, int(value))
                except ValueError:
                    await _refuse(send, 400, "Upload refused: invalid Content-Length.")
                    return
        if length is not None and length > _max_upload_bytes():
            # Perhaps over the limit: the part's header (its first bytes) says the file's
            # name and size. Over: refused, named for the page, nothing else read.
            read: list[Message] = []
            head = b""
            while b"\r\n\r\n" not in head and len(head) < NAME_PEEK:
                read.append(await receive())
                head += bytes(read[-1].get("body", b""))
                if not read[-1].get("more_body"):
                    break
            file_name, file_size = _file_part(head[:NAME_PEEK], content_type, length)
            if file_size > _max_upload_bytes():
                with _lock:
                    _oversized[session_id] = (file_name, file_size, _max_upload_bytes())
                await _refuse(send, 413, "Upload refused: the file is over the size limit.")
                _request_rerun(session_id)
                return
            receive = _replaying(read, receive)
        if length is not None:
            size = min(size, length)
        reason = reserve(session_id, file_id, size)
        if reason is not None:
            await _refuse(send, 413, f"Upload refused: {reason}.")
            return
        try:
            await self.app(scope, receive, send)
        finally:
            release(session_id, size)
