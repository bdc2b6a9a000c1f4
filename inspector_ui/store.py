"""The Store page's views: connect, the slot table, a slot's buffer, its journal, writes.

Everything here renders what :mod:`flowdrop_core.store_browser` returns; no
buffer logic. Every value read from the store (scope ids, keys, content,
notes quoting them) is shown as text, table cells or escaped Markdown.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from flowdrop_core.journal.replay import JournalReplay
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.storage import Slot, StorageError
from flowdrop_core.store_browser import ReadOnlyError, SlotInfo, StoreBrowser, open_browser
from inspector_ui.display import clip_text
from inspector_ui.entries import show_entries
from inspector_ui.inspector import show_inspector
from inspector_ui.navigator import step_selector
from inspector_ui.plain import md

#: Where the page's connection comes from when nobody typed one.
ENV_TARGETS = ("FLOWDROP_REDIS_URL", "FLOWDROP_DB")


def default_target() -> str:
    """``$FLOWDROP_REDIS_URL``, else ``$FLOWDROP_DB``, else nothing."""
    return next((os.environ[v].strip() for v in ENV_TARGETS if os.environ.get(v, "").strip()), "")


@st.cache_resource(max_entries=8, show_spinner=False)
def cached_browser(target: str, writable: bool) -> StoreBrowser:
    """One browser (one connection pool) per store and mode, shared by reruns."""
    return open_browser(target, writable=writable)


def connect() -> StoreBrowser | None:
    """The connection row: target and the write switch; ``None`` until connected."""
    if "s_target" not in st.session_state:
        st.session_state.s_target = default_target()
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    with left:
        target = st.text_input(
            "Store: a SQLite file or a Redis URL",
            key="s_target",
            placeholder="/path/to/buffers.sqlite3 or redis://localhost:6379/0",
            help="The store a runtime writes. Redis URLs may carry a password: it is not "
            "put in the page's URL.",
        )
    with right:
        writable = st.toggle(
            "Allow writes",
            key="s_write",
            help="Off: the store is opened read-only and nothing can change it. "
            "On: the Write tab can append to or clear a slot.",
        )
    if not target.strip():
        st.info(
            "Enter a SQLite file path or a Redis URL to browse its slots.",
            icon=":material/storage:",
        )
        return None
    try:
        return cached_browser(target.strip(), bool(writable))
    except (StorageError, ValueError, OSError) as exc:
        st.error(f"Cannot open the store:\n\n{md(exc)}", icon=":material/error:")
        return None


def _when(at: float | None) -> datetime | None:
    return None if at is None else datetime.fromtimestamp(at, UTC)


def slot_table(infos: list[SlotInfo]) -> None:
    """The listed slots as a table (cells are text)."""
    frame = pd.DataFrame(
        [
            {
                "scope": i.scope,
                "scope id": i.scope_id,
                "key": i.key,
                "count": i.count,
                "last write": _when(i.last_write),
                "journal": i.journal,
            }
            for i in infos
        ],
        columns=["scope", "scope id", "key", "count", "last write", "journal"],
    )
    st.dataframe(
        frame,
        hide_index=True,
        key="s_slots",
        alt="Slots of the store: scope, scope id, key, entry count, last write, journal records",
        column_config={
            "last write": st.column_config.DatetimeColumn(
                "last write", format="YYYY-MM-DD HH:mm:ss"
            ),
            "count": st.column_config.NumberColumn("count", help="entries in the buffer"),
            "journal": st.column_config.NumberColumn("journal", help="journal records kept"),
        },
    )


def slot_label(slot: Slot) -> str:
    """A slot as one line of plain text (JSON strings, so blanks and separators show)."""
    scope, scope_id, key = slot
    text = f"{scope} · {json.dumps(scope_id, ensure_ascii=False)} · {json.dumps(key, ensure_ascii=False)}"
    short, rest = clip_text(text, 120)
    return short + (f" … ({rest:,} more characters)" if rest else "")


def pick_slot(infos: list[SlotInfo]) -> Slot | None:
    """A select box over the listed slots."""
    slots = [i.slot for i in infos]
    if not slots:
        return None
    return st.selectbox("Open a slot", slots, format_func=slot_label, key="s_slot")


def show_buffer(browser: StoreBrowser, slot: Slot) -> None:
    """The slot's buffer, with the same entry view as a step."""
    value = browser.buffer(slot)
    mode = st.segmented_control(
        "Show entries as", ["Chat", "JSON"], default="Chat", required=True, key="s_buffer_mode"
    )
    if not isinstance(value, list):
        st.caption("A plain memory value, not a conversation buffer:")
        st.json(value)
        return
    st.markdown(f"**Buffer** ({len(value)} entries)")
    show_entries([(e, "kept") for e in value], mode or "Chat", "Empty buffer.", "s_buffer")


@st.cache_resource(max_entries=16, show_spinner=False)
def _replay(_browser: StoreBrowser, target: str, slot: Slot, newest_seq: int) -> JournalReplay:
    """The slot's journal replayed (cached until a newer record arrives; never mutated)."""
    return _browser.replay(slot, name=f"journal-{slot[0]}-{slot[1]}-{slot[2]}")


def show_journal(browser: StoreBrowser, slot: Slot) -> None:
    """The slot's journal replayed in the timeline, each step checked against its record."""
    records = browser.records(slot)
    if not records:
        st.info(
            "This slot has no journal. A runtime records one with "
            "ConversationBuffer(..., journal=N).",
            icon=":material/history:",
        )
        return
    try:
        replayed = _replay(browser, browser.target, slot, records[-1].seq)
    except ValueError as exc:
        st.error(md(exc), icon=":material/error:")
        return
    for note in replayed.notes:
        st.warning(md(note), icon=":material/info:")
    if replayed.check.passed:
        st.success(
            f"Records {replayed.first_seq}..{records[-1].seq} replayed: every step reports "
            "what was recorded.",
            icon=":material/check_circle:",
        )
    else:
        st.error(
            "The replay differs from the record:\n\n"
            + "\n\n".join(md(m) for m in replayed.check.mismatches),
            icon=":material/error:",
        )
    timeline = replayed.timeline
    step = step_selector(timeline, "s_step", label="Journal step")
    show_inspector(timeline, step, prefix="sj", name=replayed.scenario.name, key="s_step")


def show_writes(browser: StoreBrowser, slot: Slot) -> None:
    """Append to or clear the slot; only offered when writes are switched on."""
    if not browser.writable:
        st.info("Read-only. Switch on *Allow writes* to change this slot.", icon=":material/lock:")
        return
    text = st.text_area(
        "Message or list of messages (JSON)",
        value='{"role": "user", "content": "hello"}',
        key="s_append_text",
    )
    window = st.number_input(
        "Window (max_messages, 0 = no cap)", min_value=0, step=1, key="s_window"
    )
    journal = st.number_input(
        "Journal (records kept per slot, 0 = off)", min_value=0, step=1, key="s_journal"
    )
    left, right = st.columns(2)
    if left.button("Append", key="s_append", icon=":material/add:"):
        try:
            res = browser.append(
                slot, json.loads(text), max_messages=int(window), journal=int(journal)
            )
        except (ValueError, InvalidMessagesError, StorageError, ReadOnlyError) as exc:
            st.error(md(exc), icon=":material/error:")
        else:
            st.success(
                f"count {res.count}, appended {res.appended}, appended_any {res.appended_any}",
                icon=":material/check_circle:",
            )
    if right.button("Clear the slot", key="s_clear", icon=":material/delete:"):
        try:
            st.success("Cleared." if browser.clear(slot) else "The slot was already empty.")
        except (StorageError, ReadOnlyError) as exc:
            st.error(md(exc), icon=":material/error:")


def show_store_page() -> None:
    """The whole page below the title."""
    st.caption(
        "Browse the store a runtime writes (a SQLite file or a Redis server): every slot "
        "with its scope, scope id, key, entry count and last write, a slot's buffer, and its "
        "append journal replayed step by step. Read-only unless writes are switched on."
    )
    browser = connect()
    if browser is None:
        return
    text = st.text_input("Filter slots (scope, scope id or key contains)", key="s_filter")
    try:
        infos = browser.slots(text)
    except StorageError as exc:
        st.error(f"Cannot list the slots:\n\n{md(exc)}", icon=":material/error:")
        return
    st.caption(
        f"{len(infos)} slot(s), {browser.kind} store, {'writable' if browser.writable else 'read-only'}."
    )
    slot_table(infos)
    slot = pick_slot(infos)
    if slot is None:
        st.info("No slot matches.", icon=":material/search_off:")
        return
    # Only the open tab runs: replaying a journal costs O(records), reading a buffer O(entries).
    tab_buffer, tab_journal, tab_write = st.tabs(
        ["Buffer", "Journal", "Write"], key="s_tab", on_change="rerun"
    )
    try:
        if tab_buffer.open:
            with tab_buffer:
                show_buffer(browser, slot)
        if tab_journal.open:
            with tab_journal:
                show_journal(browser, slot)
        if tab_write.open:
            with tab_write:
                show_writes(browser, slot)
    except StorageError as exc:
        st.error(md(exc), icon=":material/error:")
