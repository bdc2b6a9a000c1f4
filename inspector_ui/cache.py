"""Cached library calls shared by the pages: imports, replays, checks, timeline rows.

Timelines hold a live store, so they are shared with ``st.cache_resource``
(read-only here); parsed input with ``st.cache_data``.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from typing import Any

import streamlit as st

from flowdrop_core.importers import ImportedConversation, load_conversation
from flowdrop_core.replay import CheckResult, Timeline, check, replay, replay_conversation
from flowdrop_core.scenario import ScenarioConfig, load_scenario, parse_scenario
from flowdrop_core.view import SAMPLE_DIR, SampleScenario, sample_scenarios


@st.cache_data(max_entries=32, show_spinner=False)
def cached_conversation(data: bytes, name: str) -> ImportedConversation:
    """Parse uploaded or sample bytes once per (content, name)."""
    return load_conversation(data, name=name)


@st.cache_data(max_entries=4, show_spinner=False)
def cached_samples(stamp: tuple[tuple[str, float], ...]) -> list[SampleScenario]:
    """The sample scenarios; ``stamp`` (names and mtimes) invalidates on edits."""
    return sample_scenarios()


def samples() -> list[SampleScenario]:

    stamp = tuple((p.name, p.stat().st_mtime) for p in sorted(SAMPLE_DIR.glob("*.json")))
    return cached_samples(stamp)


# Timelines hold a live store (locks, maybe a SQLite file), so they cannot be
# pickled for st.cache_data; st.cache_resource shares one read-only object.
@st.cache_resource(max_entries=32, show_spinner=False)
def cached_replay(scenario_json: str, refire: str = "none") -> Timeline:
    """Replay a scenario given as its JSON text (the cache key)."""
    return replay(parse_scenario(scenario_json, source="scenario"), refire=refire)  # type: ignore[arg-type]


class _TimelineLRU:
    """A small shared least-recently-used store of replayed timelines.

    A replay reports progress to a progress bar while it runs, which a
    function under ``st.cache_*`` may not do (Streamlit replays cached element
    calls); so the cache is this object, shared through ``st.cache_resource``.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[tuple[Any, ...], Timeline] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Timeline | None:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        return None

    def put(self, key: tuple[Any, ...], timeline: Timeline) -> None:
        with self.lock:
            self.items[key] = timeline
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _replays() -> _TimelineLRU:
    return _TimelineLRU(size=8)


def cached_conversation_replay(
    data: bytes,
    name: str,
    per: str,
    refire: str,
    max_messages: int,
    progress: Any = None,
) -> Timeline:
    """Import and replay a recorded conversation, cached on its bytes' digest and the options."""
    key = (hashlib.sha256(data).hexdigest(), name, per, refire, max_messages)
    store = _replays()
    timeline = store.get(key)
    if timeline is None:
        conv = cached_conversation(data, name)
        timeline = replay_conversation(
            conv,
            per=per,  # type: ignore[arg-type]
            config=ScenarioConfig(scope="session", max_messages=max_messages),
            refire=refire,  # type: ignore[arg-type]
            progress=progress,
        )
        store.put(key, timeline)
    return timeline


@st.cache_resource(max_entries=64, show_spinner=False)
def cached_check(path: str, mtime: float) -> CheckResult:
    """Check one sample scenario against its expectations."""
    return check(load_scenario(path))


_ROWS: weakref.WeakKeyDictionary[Timeline, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def rows_of(timeline: Timeline) -> list[dict[str, Any]]:
    """``timeline.rows()``, computed once per timeline object (a replay is read-only here)."""
    rows = _ROWS.get(timeline)
    if rows is None or len(rows) != len(timeline.steps):
        rows = timeline.rows()
        _ROWS[timeline] = rows
    return rows
