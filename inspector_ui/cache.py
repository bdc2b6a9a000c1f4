"""Cached library calls shared by the pages: imports, replays, checks, timeline rows.

What a visitor brings (an upload, a recipe, the replays of both) is cached
**per session**, in the session's own state: one visitor's 20,000-message
upload never evicts another's, each session is bounded (:data:`SESSION_STEP_BUDGET`
steps of timelines, :data:`SESSION_IMPORTS` parsed recordings), and all of it
goes when Streamlit drops the session (``server.disconnectedSessionTTL``
after the tab closes). Only the operator's sample files and checks are shared
(``st.cache_*``): they are few and fixed.
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
from flowdrop_core.replay import (
    CheckResult,
    ReplayError,
    Timeline,
    check,
    replay,
    replay_conversation,
)
from flowdrop_core.scenario import Scenario, ScenarioConfig, load_scenario, parse_scenario
from inspector_ui.recording_size import too_many_items
from inspector_ui.samples import SAMPLE_DIR, SampleScenario, sample_scenarios

T = TypeVar("T")


#: Steps of timelines a session keeps (its replays and what-if replays together): a
#: 20,002-step recording and its what-if replay fit side by side (~4 KB a step: ~200 MB).
SESSION_STEP_BUDGET = 50_000
#: Parsed recordings (and scenario files) a session keeps.
SESSION_IMPORTS = 2
#: Messages one recording may replay: past it the page says so instead of replaying
#: (at ~4 KB of server memory per replayed step, 100,000 steps is ~400 MB; compare
#: is offered while both replays fit :data:`SESSION_STEP_BUDGET`).
MAX_REPLAY_MESSAGES = 100_000


class RecordingTooLarge(ValueError):
    """A recording holds more messages than :data:`MAX_REPLAY_MESSAGES`; nothing of it is kept."""


def _too_large(name: str, why: str) -> RecordingTooLarge:
    return RecordingTooLarge(
        f"{name} {why}: this inspector replays at most {MAX_REPLAY_MESSAGES:,} messages per "
        "recording (each replayed step keeps ~4 KB of server memory). Replay a part of it, "
        "or use the CLI: flowdrop-buffer replay."
    )


def check_recording_size(data: bytes, name: str, digest: str | None = None) -> None:
    """Raise :class:`RecordingTooLarge` when the bytes hold a list of more items than
    :data:`MAX_REPLAY_MESSAGES`, before anything decodes them (once per content in this
    session; only the verdict is remembered, never the bytes)."""
    key = ("size", digest or digest_of(data))
    why = _imports().get_or(key, lambda: too_many_items(data, MAX_REPLAY_MESSAGES) or "")
    if why:
        raise _too_large(name, why)


class _Memo:
    """A small least-recently-used map (one per session, in its session state)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[Any, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get_or(self, key: Any, compute: Callable[[], T]) -> T:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]  # type: ignore[no-any-return]
        value = compute()
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)
        return value


_BARE: dict[str, Any] = {}  # outside a Streamlit session (bare scripts, benchmarks' setup)


def session_slot(name: str, make: Callable[[], T]) -> T:
    """This session's object ``name`` (made on first use); it goes with the session."""
    try:
        state = st.session_state
        if name not in state:
            state[name] = make()
        return state[name]  # type: ignore[no-any-return]
    except Exception:  # no session (bare mode): one process-wide object instead
        if name not in _BARE:
            _BARE[name] = make()
        return _BARE[name]  # type: ignore[no-any-return]


def _imports() -> _Memo:
    return session_slot("_fd_imports", lambda: _Memo(SESSION_IMPORTS * 3))


def cached_conversations(
    data: bytes, name: str, digest: str | None = None
) -> list[ImportedConversation]:
    """Every conversation of uploaded or sample bytes (one, or one per line of a JSONL file of
    conversations), parsed once per (content, name) in this session; read-only.

    Not ``st.cache_data``: that pickles the result in and out on every call, 0.6 s
    per rerun for a 20,000-message recording; not ``st.cache_resource``: that
    would keep every visitor's upload for everyone, long after they left.
    """
    key = ("conversations", digest or digest_of(data), name)

    def load() -> list[ImportedConversation]:
        check_recording_size(data, name, digest)
        conversations = load_conversations(data, name=name)
        total = sum(len(c.messages) for c in conversations)
        if total > MAX_REPLAY_MESSAGES:  # raised, so the memo never keeps them
            raise _too_large(name, f"holds {total:,} messages")
        return conversations

    return _imports().get_or(key, load)


def cached_conversation(
    data: bytes, name: str, conversation: int | None = None, digest: str | None = None
) -> ImportedConversation:
    """The conversation ``conversation`` (from 0) of the bytes; ``None``: their only one
    (a file holding several is then the import's error, for the page to show)."""
    conversations = cached_conversations(data, name, digest)
    if conversation is None and len(conversations) > 1:
        return load_conversation(data, name=name)  # raises, saying how many it holds
    return conversations[conversation or 0]


def cached_import_notes(
    digest: str, name: str, _data: bytes, conversation: int | None = None
) -> list[dict[str, Any]]:
    """The import notes of a recording, once per (content digest, name) in this session.

    Keyed on the digest, so a rerun neither re-imports nor re-hashes the bytes;
    a format error propagates (the page reports it).
    """
    return _imports().get_or(
        ("notes", digest, name, conversation),
        lambda: cached_conversation(_data, name, conversation, digest).notes_as_dicts(),
    )


def cached_samples(stamp: tuple[tuple[str, float], ...], folder: str) -> list[SampleScenario]:
    """The sample scenarios of ``folder``; ``stamp`` (names and mtimes) invalidates on edits."""
    return sample_scenarios(Path(folder))


def samples() -> list[SampleScenario]:
    """The sample scenarios in ``SAMPLE_DIR``, re-read when a file changes."""
    stamp = tuple((p.name, p.stat().st_mtime) for p in sorted(SAMPLE_DIR.glob("*.json")))
    return cached_samples(stamp, str(SAMPLE_DIR))


def cached_replay(scenario_json: str, refire: str = "none") -> Timeline:
    """Replay a scenario given as its JSON text, once per (text, re-fire) in this session.

    Timelines hold a live store (locks, maybe a SQLite file), so they are never
    pickled; the session's own store of timelines keeps them, bounded in steps.
    """
    key = ("scenario", hashlib.sha256(scenario_json.encode("utf-8")).hexdigest(), refire)
    store = replays()
    timeline = store.get(key)
    if timeline is None:
        timeline = replay(parse_scenario(scenario_json, source="scenario"), refire=refire)  # type: ignore[arg-type]
        store.put(key, timeline)
    return timeline


class _TimelineLRU:
    """A small least-recently-used store of replayed timelines, bounded in count and steps.

    A replay reports progress to a progress bar while it runs, which a
    function under ``st.cache_*`` may not do (Streamlit replays cached element
    calls); so the cache is this object, one per session (:func:`replays`).
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


def replays() -> _TimelineLRU:
    """This session's store of replayed timelines (key: :func:`replay_key`), bounded in
    steps (:data:`SESSION_STEP_BUDGET`); other sessions have their own."""
    return session_slot("_fd_replays", lambda: _TimelineLRU(size=4, max_steps=SESSION_STEP_BUDGET))


def fits_in_session(*steps: int) -> bool:
    """Whether timelines of these step counts can all stay in one session's budget."""
    return sum(steps) <= SESSION_STEP_BUDGET


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


def cached_scenario(digest: str, name: str, _data: bytes) -> Scenario | None:
    """The bytes read as a scenario file, or ``None`` when they are not one (once per
    content in this session)."""

    def parse() -> Scenario | None:
        check_recording_size(_data, name, digest)
        try:
            return parse_scenario(_data.decode("utf-8-sig"), source=name)
        except (ValueError, RecursionError):
            # Not a scenario (ScenarioError), not UTF-8 (UnicodeDecodeError) or JSON the json
            # module refuses (an integer too long, nesting too deep): the importers name it.
            return None

    return _imports().get_or(("scenario", digest, name), parse)


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
    digest = digest_of(data)
    key = replay_key(digest, name, per, refire, max_messages, conversation)
    store = replays()
    timeline = store.get(key)
    if timeline is None:
        conv = cached_conversation(data, name, conversation, digest)
        if len(conv.messages) > MAX_REPLAY_MESSAGES:
            raise ReplayError(
                f"{name} holds {len(conv.messages):,} messages; this inspector replays at most "
                f"{MAX_REPLAY_MESSAGES:,} per recording (each replayed step keeps ~4 KB of "
                "server memory). Replay a part of it, or use the CLI: flowdrop-buffer replay."
            )
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
