"""Cached library calls shared by the pages: imports, replays, checks, timeline rows.

Timelines hold a live store, so they are shared with ``st.cache_resource``
(read-only here); parsed input with ``st.cache_data``.
"""

from __future__ import annotations

import hashlib
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from flowdrop_core.importers import ImportedConversation, load_conversation, load_conversations
from flowdrop_core.replay import CheckResult, Timeline, check, replay, replay_conversation
from flowdrop_core.scenario import Scenario, ScenarioConfig, load_scenario, parse_scenario
from inspector_ui.samples import SAMPLE_DIR, SampleScenario, sample_scenarios

T = TypeVar("T")

#: Steps of recorded replays kept at once (all timelines of the shared store together).
REPLAY_STEP_BUDGET = 40_000


@st.cache_resource(max_entries=8, show_spinner=False)
def cached_conversations(data: bytes, name: str) -> list[ImportedConversation]:
    """Every conversation of uploaded or sample bytes (one, or one per line of a JSONL
    file of conversations), parsed once per (content, name); shared, read-only.

    ``cache_resource``, not ``cache_data``: the latter pickles the result in
    and out on every call, 0.6 s per rerun for a 20,000-message recording.
    """
    return load_conversations(data, name=name)


def cached_conversation(
    data: bytes, name: str, conversation: int | None = None
) -> ImportedConversation:
    """The conversation ``conversation`` (from 0) of the bytes; ``None``: their only one
    (a file holding several is then the import's error, for the page to show)."""
    conversations = cached_conversations(data, name)
    if conversation is None and len(conversations) > 1:
        return load_conversation(data, name=name)  # raises, saying how many it holds
    return conversations[conversation or 0]


@st.cache_resource(max_entries=16, show_spinner=False)
def cached_import_notes(
    digest: str, name: str, _data: bytes, conversation: int | None = None
) -> list[dict[str, Any]]:
    """The import notes of a recording (issue 13), once per (content digest, name).

    Keyed on the digest, so a rerun neither re-imports nor re-hashes the bytes;
    a format error propagates (the page reports it).
    """
    return cached_conversation(_data, name, conversation).notes_as_dicts()


@st.cache_data(max_entries=4, show_spinner=False)
def cached_samples(stamp: tuple[tuple[str, float], ...], folder: str) -> list[SampleScenario]:
    """The sample scenarios of ``folder``; ``stamp`` (names and mtimes) invalidates on edits."""
    return sample_scenarios(Path(folder))


def samples() -> list[SampleScenario]:
    """The sample scenarios in ``SAMPLE_DIR``, re-read when a file changes."""
    stamp = tuple((p.name, p.stat().st_mtime) for p in sorted(SAMPLE_DIR.glob("*.json")))
    return cached_samples(stamp, str(SAMPLE_DIR))


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

    def __init__(self, size: int, max_steps: int | None = None) -> None:
        self.size = size
        self.max_steps = max_steps
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
            # A step budget as well as a count: a 20,000-step timeline holds ~70 MB, so
            # eight of them would be half a gigabyte. The newest always stays.
            while (
                self.max_steps is not None
                and len(self.items) > 1
                and sum(len(t.steps) for t in self.items.values()) > self.max_steps
            ):
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _replays() -> _TimelineLRU:
    # Two 20,000-step recordings: what the compare view shows side by side (issue 10:
    # server RSS <= 400 MB after three windows, no growth on a fourth).
    return _TimelineLRU(size=8, max_steps=REPLAY_STEP_BUDGET)


def replays() -> _TimelineLRU:
    """The shared store of replayed recordings (key: :func:`replay_key`)."""
    return _replays()


def digest_of(data: bytes) -> str:
    """The content key of uploaded or sample bytes."""
    return hashlib.sha256(data).hexdigest()


def replay_key(
    digest: str,
    name: str,
    per: str,
    refire: str,
    max_messages: int,
    conversation: int | None = None,
) -> tuple[Any, ...]:
    """What a recorded conversation's replay depends on: its content, which conversation
    of it, and the options."""
    return (digest, name, per, refire, max_messages, conversation)


@st.cache_resource(max_entries=8, show_spinner=False)
def cached_scenario(digest: str, name: str, _data: bytes) -> Scenario | None:
    """The bytes read as a scenario file, or ``None`` when they are not one (once per content)."""
    try:
        return parse_scenario(_data.decode("utf-8-sig"), source=name)
    except (ValueError, RecursionError):
        # Not a scenario (ScenarioError), not UTF-8 (UnicodeDecodeError) or JSON the json
        # module refuses (an integer too long, nesting too deep): the importers name it.
        return None


def cached_conversation_replay(
    data: bytes,
    name: str,
    per: str,
    refire: str,
    max_messages: int,
    progress: Any = None,
    conversation: int | None = None,
) -> Timeline:
    """Import and replay a recorded conversation, cached on its bytes' digest and the options."""
    key = replay_key(digest_of(data), name, per, refire, max_messages, conversation)
    store = _replays()
    timeline = store.get(key)
    if timeline is None:
        conv = cached_conversation(data, name, conversation)
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


#: Per timeline, the last few per-step views computed (tags, provider view, lint).
_PER_STEP: weakref.WeakKeyDictionary[Timeline, OrderedDict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)
_PER_STEP_LOCK = threading.Lock()
PER_STEP_SIZE = 8


def per_step(timeline: Timeline, what: str, step: int, compute: Callable[[], T]) -> T:
    """``compute()`` for one step of one timeline, remembered (a few steps per timeline).

    The step views cost O(buffer) (the buffer rebuilt from a checkpoint, its
    tags, the MEM-5 provider view and lint); a rerun that does not move the
    step, or moves back to a recent one, reuses them instead of re-deriving
    them from the whole buffer. Timelines shown here are read-only, and the
    memo goes with the timeline (weak keys).
    """
    key = (what, step, len(timeline.steps))
    with _PER_STEP_LOCK:
        memo = _PER_STEP.setdefault(timeline, OrderedDict())
        if key in memo:
            memo.move_to_end(key)
            return memo[key]  # type: ignore[no-any-return]
    value = compute()
    with _PER_STEP_LOCK:
        memo[key] = value
        while len(memo) > PER_STEP_SIZE:
            memo.popitem(last=False)
    return value
