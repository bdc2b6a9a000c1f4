"""The Store page's "Follow" switch: a fragment Streamlit reruns on its own timer, seats bounded.

Following a slot or a thread reruns only its timeline's fragment
(``st.fragment(run_every=...)``): the browser asks for the rerun, so no
thread runs per visitor, and the timer stops with the session (or when the
switch goes off, as the fragment is then no longer drawn). Each session
holds at most one follower (in its session state). A served inspector
bounds how many sessions follow at once (:data:`SEATS_ENV`, default
:data:`DEFAULT_SEATS`): a session keeps its seat while its fragment keeps
running; a seat not renewed for a few intervals (the session ended, the
switch went off) is free again.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import streamlit as st

from inspector_ui.visitor import _session_id

__all__ = ["DEFAULT_SEATS", "EVERY", "SEATS_ENV", "follow_switch", "take_seat"]

#: How often a followed timeline's fragment reruns, in seconds.
EVERY = 1.0
#: The operator's bound on sessions following at once.
SEATS_ENV = "FLOWDROP_FOLLOW_SESSIONS"
DEFAULT_SEATS = 8
#: A seat not renewed for this many intervals is free again.
_LEASE = 3

_lock = threading.Lock()
_seats: dict[str, float] = {}  # session id -> when its seat lapses (monotonic)


def seats() -> int:
    """``$FLOWDROP_FOLLOW_SESSIONS`` (0: following is off), default :data:`DEFAULT_SEATS`."""
    raw = os.environ.get(SEATS_ENV, "").strip()
    if not raw:
        return DEFAULT_SEATS
    try:
        value = int(raw)
    except ValueError:
        raise ValueError(f"{SEATS_ENV}={raw!r}: not a whole number of sessions") from None
    if value < 0:
        raise ValueError(f"{SEATS_ENV}={raw!r}: cannot be negative")
    return value


def take_seat(session_id: str, now: float | None = None) -> bool:
    """Take or renew ``session_id``'s seat; ``False`` when every seat is held by another."""
    now = time.monotonic() if now is None else now
    limit = seats()
    with _lock:
        for sid, until in list(_seats.items()):
            if until < now:
                del _seats[sid]
        if session_id not in _seats and len(_seats) >= limit:
            return False
        _seats[session_id] = now + _LEASE * EVERY
        return True


def release_seat(session_id: str | None) -> None:
    """Give the seat back at once (the switch went off)."""
    if session_id is not None:
        with _lock:
            _seats.pop(session_id, None)


def follow_switch(key: str, what: str) -> bool:
    """The "Follow" toggle; ``True`` when on and this session holds a seat."""
    on = st.toggle(
        "Follow",
        key=key,
        help=f"Append new steps to the timeline as they land in the {what}, every "
        f"{EVERY:g} s, keeping the selected step and filters. Stops when switched off or "
        "when the page is closed.",
    )
    sid = _session_id() or "bare"
    if not on:
        release_seat(sid)
        return False
    try:
        free = take_seat(sid)
    except ValueError as exc:
        st.error(str(exc), icon=":material/error:")
        return False
    if not free:
        st.warning(
            f"Every follow seat of this inspector is taken ({seats()} sessions follow at "
            f"once; the operator sets {SEATS_ENV}). The timeline below is as read now; "
            "switch Follow off and on again later.",
            icon=":material/hourglass:",
        )
        return False
    return True


def renew_seat() -> bool:
    """Called by each fragment run: keep the seat (``False``: it lapsed and was taken)."""
    return take_seat(_session_id() or "bare")


def session_follower(key: str, ident: Any, make: Any) -> Any:
    """This session's one follower for ``ident`` (made by ``make()``; the old one closed)."""
    held = st.session_state.get(key)
    if held is not None and held[0] == ident:
        return held[1]
    if held is not None:
        held[1].close()
    follower = make()
    st.session_state[key] = (ident, follower)
    return follower


def drop_follower(key: str) -> None:
    """Close and forget this session's follower (the switch went off)."""
    held = st.session_state.pop(key, None)
    if held is not None:
        held[1].close()
