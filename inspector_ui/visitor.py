"""Who is visiting: a browser's id, the operator's shared token, and what a browser keeps.

* :func:`browser_id` names the browser session (not the Streamlit session, which
  a reload replaces): it is derived from the token bytes of Streamlit's own
  ``_streamlit_xsrf`` cookie, a random per-browser session cookie that the
  server keeps stable across requests, hashed with a per-process secret so the
  id reveals nothing about the cookie. Without the cookie (AppTest, XSRF
  protection off) there is no browser id and only the Streamlit session keeps
  things.
* :func:`require_token` asks for ``$FLOWDROP_TOKEN`` once per browser session
  when the operator set one (compared in constant time).
* :class:`BrowserKeep` holds what a visitor would lose on a page switch or a
  reload (the last upload, the Store connection picked), server-side, bounded
  in browsers, bytes and time.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from inspector_ui import upload_guard
from inspector_ui.kept_uploads import UploadKeeper, keeper_from_env

#: The environment variable holding the shared token (unset or empty: no token asked).
TOKEN_ENV = "FLOWDROP_TOKEN"
XSRF_COOKIE = "_streamlit_xsrf"

#: Budgets of what is kept per browser for page switches and reloads.
KEEP_BROWSERS = 32  # browsers remembered at once (the least recently seen goes first)
KEEP_BYTES = 64 * 1024 * 1024  # bytes of kept uploads, all browsers together
KEEP_SECONDS = 15 * 60  # a browser not seen for this long is forgotten

_SECRET = secrets.token_bytes(32)


def _xsrf_token_bytes(cookie: str) -> bytes | None:
    """The random bytes inside an XSRF cookie (``2|mask|masked|time``, or v1 hex)."""
    value = cookie.strip("\"'")
    try:
        if value.startswith("2|"):
            _, mask_hex, masked_hex, _stamp = value.split("|")
            mask, masked = bytes.fromhex(mask_hex), bytes.fromhex(masked_hex)
            if not mask or not masked:
                return None
            # The mask (4 bytes in Streamlit and Tornado) repeats over the token.
            return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))
        return bytes.fromhex(value) or None
    except ValueError:
        return None


def browser_id() -> str | None:
    """This browser session's id, or ``None`` when the request carried no XSRF cookie."""
    try:
        cookie = st.context.cookies.get(XSRF_COOKIE)
    except Exception:  # no request context (bare mode)
        return None
    if not cookie:
        return None
    token = _xsrf_token_bytes(cookie)
    if token is None or len(token) < 16:
        return None
    return hmac.new(_SECRET, token, hashlib.sha256).hexdigest()


# --------------------------------------------------------------------------- kept per browser


@dataclass
class _Kept:
    values: dict[str, Any] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    seen: float = 0.0


class BrowserKeep:
    """What each browser session keeps across reloads; bounded in browsers, bytes and time.

    A value is stored with the number of bytes it holds; past ``max_bytes`` the
    least recently seen browsers' values go first (a single value larger than
    the budget is not kept at all).
    """

    def __init__(
        self,
        max_browsers: int = KEEP_BROWSERS,
        max_bytes: int = KEEP_BYTES,
        ttl: float = KEEP_SECONDS,
    ) -> None:
        self.max_browsers = max_browsers
        self.max_bytes = max_bytes
        self.ttl = ttl
        self._items: OrderedDict[str, _Kept] = OrderedDict()
        self._lock = threading.Lock()

    def _expire(self, now: float) -> None:
        for bid in [b for b, k in self._items.items() if now - k.seen > self.ttl]:
            del self._items[bid]
        while len(self._items) > self.max_browsers:
            self._items.popitem(last=False)
        while self.total_bytes() > self.max_bytes and self._items:
            self._items.popitem(last=False)

    def total_bytes(self) -> int:
        """Bytes held by every kept value."""
        return sum(sum(k.sizes.values()) for k in self._items.values())

    def get(self, bid: str, name: str) -> Any:
        """The value ``name`` kept for browser ``bid``, or ``None``."""
        now = time.monotonic()
        with self._lock:
            self._expire(now)
            kept = self._items.get(bid)
            if kept is None:
                return None
            kept.seen = now
            self._items.move_to_end(bid)
            return kept.values.get(name)

    def put(self, bid: str, name: str, value: Any, size: int = 0) -> bool:
        """Keep ``value`` (holding ``size`` bytes) for the browser; ``False`` if over budget."""
        if size > self.max_bytes:
            self.drop(bid, name)
            return False
        now = time.monotonic()
        with self._lock:
            kept = self._items.setdefault(bid, _Kept())
            kept.values[name], kept.sizes[name], kept.seen = value, size, now
            self._items.move_to_end(bid)
            # Others' values make room first; this browser's newest value stays.
            while self.total_bytes() > self.max_bytes and len(self._items) > 1:
                self._items.popitem(last=False)
            self._expire(now)
            return bid in self._items

    def drop(self, bid: str, name: str) -> None:
        """Forget one kept value."""
        with self._lock:
            kept = self._items.get(bid)
            if kept is not None:
                kept.values.pop(name, None)
                kept.sizes.pop(name, None)


@st.cache_resource(show_spinner=False)
def _keep() -> BrowserKeep:
    return BrowserKeep()


def keep() -> BrowserKeep:
    """The process's store of per-browser values."""
    return _keep()


def kept(name: str) -> Any:
    """``name`` as this visitor kept it: the session's copy, else the browser's (a reload)."""
    value = st.session_state.get(f"_kept_{name}")
    if value is not None:
        return value
    bid = browser_id()
    if bid is None:
        return None
    value = keep().get(bid, name)
    if value is not None:
        st.session_state[f"_kept_{name}"] = value
    return value


def keep_value(name: str, value: Any, size: int = 0) -> None:
    """Keep ``name`` for this session and, within the budgets, this browser session."""
    st.session_state[f"_kept_{name}"] = value
    bid = browser_id()
    if bid is not None:
        keep().put(bid, name, value, size)


@st.cache_resource(show_spinner=False)
def _upload_keeper() -> UploadKeeper | None:
    return keeper_from_env()


def upload_keeper() -> UploadKeeper | None:
    """The server's keeper of uploads by digest (``None``: the operator switched it off).

    Raises :class:`inspector_ui.kept_uploads.KeepSettingsError` for a setting it cannot use."""
    return _upload_keeper()


def forget(name: str) -> None:
    """Drop ``name`` from the session and the browser's keep."""
    st.session_state.pop(f"_kept_{name}", None)
    bid = browser_id()
    if bid is not None:
        keep().drop(bid, name)


# --------------------------------------------------------------------------- the shared token


def configured_token() -> str:
    """The operator's shared token (empty: none asked)."""
    return os.environ.get(TOKEN_ENV, "").strip()


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison of the typed token with the configured one."""
    return hmac.compare_digest(given.strip().encode("utf-8"), expected.encode("utf-8"))


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def _token_given() -> None:
    """This session gave the token: its page runs, and the upload endpoint accepts its files."""
    st.session_state._token_ok = True
    sid = _session_id()
    if sid is not None:
        upload_guard.authorize(sid)


def served_over_http() -> bool:
    """Whether this run answers a browser's request (AppTest and bare runs have no headers)."""
    try:
        return len(st.context.headers) > 0
    except Exception:  # no request context (bare mode)
        return False


def require_token() -> None:
    """Stop the page until this browser session has given ``$FLOWDROP_TOKEN`` (if set)."""
    sid = _session_id()
    if sid is not None and served_over_http():
        upload_guard.note_session(sid)  # closed by the guard's sweeper once it has ended
    expected = configured_token()
    if not expected:
        return
    if served_over_http() and not upload_guard.installed():
        # Without the guard, Streamlit's upload endpoint stores files for any session:
        # the token would keep visitors out of the pages, not out of the server's memory.
        st.error(
            "FLOWDROP_TOKEN is set, but this server was started without the upload guard. "
            "Start it with `streamlit run serve.py` (what `make run` runs), not "
            "`streamlit run app.py`.",
            icon=":material/lock:",
        )
        st.stop()
    if st.session_state.get("_token_ok"):
        _token_given()  # a session reconnected after its mark was dropped is marked again
        return
    bid = browser_id()
    if bid is not None and keep().get(bid, "token_ok"):
        _token_given()
        return
    st.markdown("**This inspector is shared: enter the team's access token.**")
    given = st.text_input("Access token", type="password", key="_token_typed")
    if given:
        if token_matches(given, expected):
            _token_given()
            if bid is not None:
                keep().put(bid, "token_ok", True)
            st.session_state.pop("_token_typed", None)
            st.rerun()
        time.sleep(0.5)  # a guess costs time
        st.error("That is not the access token.", icon=":material/lock:")
    st.stop()


# --------------------------------------------------------------------------- where a request came from

#: Headers a reverse proxy or a CDN adds: any of them means the request was forwarded.
FORWARDING_HEADERS = (
    "forwarded",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-forwarded-port",
    "x-forwarded-server",
    "x-real-ip",
    "x-client-ip",
    "x-cluster-client-ip",
    "true-client-ip",
    "cf-connecting-ip",
    "fastly-client-ip",
    "via",
)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


def _loopback_host(value: str) -> bool:
    """Whether a Host header or an Origin names this machine (``localhost``, 127.x, ``[::1]``)."""
    host = value.strip().lower()
    if "://" in host:
        host = host.split("://", 1)[1]
    host = host.split("/", 1)[0]
    if host.startswith("["):  # [::1]:8501
        host = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host in LOOPBACK_HOSTS or host.startswith("127.") or host.endswith(".localhost")


def local_request(headers: dict[str, str], peer: str | None) -> bool:
    """Whether a request came straight from this machine: no forwarding header, a loopback
    peer (``peer`` ``None``: Streamlit's word for loopback), and a Host and an Origin (when
    sent) naming this machine. A proxy on this machine that adds no header still shows in
    the Origin: the visitor's browser names the address it typed."""
    names = {k.lower(): v for k, v in headers.items()}
    if any(h in names for h in FORWARDING_HEADERS):
        return False
    if peer is not None and not _loopback_host(peer):
        return False
    return all(_loopback_host(names[h]) for h in ("host", "origin") if names.get(h))


def _request_headers_and_peer() -> tuple[dict[str, str], str | None]:
    """This run's request headers and peer address (``None``: loopback, or no request)."""
    try:
        headers = dict(st.context.headers.items())
        peer = st.context.ip_address
    except Exception:  # no request context (bare mode)
        return {}, None
    return headers, peer if isinstance(peer, str) else None


def request_is_local() -> bool:
    """:func:`local_request` for this run's request (no request, as in AppTest: local)."""
    return local_request(*_request_headers_and_peer())
