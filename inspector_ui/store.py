"""The Store page's views: connect, the slot table, a slot's buffer, its journal, writes.

Everything here renders what :mod:`flowdrop_core.store_browser` returns; no
buffer logic. Every value read from the store (scope ids, keys, content,
notes quoting them) is shown as text, table cells or escaped Markdown.

Tiers (MEM-9, MEM-15): a visitor gets the view tier. The operator grants
more per store (``writable``: drive, ``admin``: the administrative tier; a
typed path in local mode is the operator's own and grants admin), and the
visitor switches a granted tier on: *Allow writes* (append) and *Admin*
(clear, a framework file's repair). The store is opened at the switched-on
tier, so the library refuses anything above it even if a control were reached.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pandas as pd
import streamlit as st

from flowdrop_core.framework_stores import sniff
from flowdrop_core.journal import JournalRecord, journal_for
from flowdrop_core.journal.follow import JournalFollower
from flowdrop_core.journal.replay import JournalReplay, replay_journal
from flowdrop_core.journal.truth import journal_gap
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.storage import Slot, StorageError, Store
from flowdrop_core.storage.urls import mask_url
from flowdrop_core.store_browser import ReadOnlyError, SlotInfo, StoreBrowser, open_browser
from flowdrop_core.store_targets import (
    StoreTarget,
    StoreTargetsError,
    configured_targets,
    path_entry_enabled,
)
from flowdrop_core.tiers import Tier, TierDenied
from inspector_ui.display import clip_text
from inspector_ui.entries import show_entries
from inspector_ui.follow import EVERY, drop_follower, follow_switch, renew_seat, session_follower
from inspector_ui.framework_store import show_framework_store
from inspector_ui.health import show_health_panel
from inspector_ui.inspector import show_inspector
from inspector_ui.navigator import step_selector
from inspector_ui.plain import md
from inspector_ui.visitor import keep_value, kept, request_is_local

#: The picker's entry for typing a path or URL (only in local path-entry mode).
TYPE_OWN = "\u2026 type a SQLite path, a Redis or a Postgres URL"
#: Addresses that mean "this machine only".
LOOPBACK = ("127.0.0.1", "localhost", "::1")


#: Records kept per slot by the Write tab's appends unless the person changes it.
WRITE_JOURNAL = 1_000


def backend_of(target: str) -> str:
    """The kind of store a target names, for visitors: Redis, Postgres or a file."""
    scheme = target.split("://", 1)[0].lower() if "://" in target else ""
    if scheme.startswith("redis") or scheme == "unix":
        return "Redis"
    if scheme.startswith("postgres"):
        return "Postgres"
    return "file"


def public_label(target: StoreTarget) -> str:
    """``name · kind · read-only``: what a visitor sees of a store (never its path or URL)."""
    return f"{target.name} · {backend_of(target.target)} · {'writable' if target.writable else 'read-only'}"


def served_locally() -> bool:
    """Whether the server listens on loopback only (path entry is refused otherwise)."""
    address = str(st.get_option("server.address") or "").strip()
    return address in LOOPBACK or address.startswith("127.")


def path_entry_offered() -> bool:
    """Typing a path or URL (and writing to it): the operator's ``FLOWDROP_STORE_PATHS=1``, a
    server on loopback, and a request from this machine that no proxy forwarded."""
    return path_entry_enabled() and served_locally() and request_is_local()


@st.cache_resource(max_entries=8, show_spinner=False)
def cached_browser(target: str, tier: str) -> StoreBrowser:
    """One browser (one connection pool) per store and tier, shared by reruns."""
    return open_browser(target, tier=tier)


def switched_tier(granted: Tier, write: bool, admin: bool) -> Tier:
    """The tier the page opens the store at: what the visitor switched on, within the grant."""
    if admin and granted >= Tier.ADMIN:
        return Tier.ADMIN
    if (write or admin) and granted >= Tier.DRIVE:
        return Tier.DRIVE
    return Tier.VIEW


def _keep_choice() -> None:
    """Remember the picked store (and a typed target) for page switches and reloads."""
    keep_value(
        "store",
        {
            "name": st.session_state.get("s_store"),
            "typed": st.session_state.get("s_target", ""),
            "write": bool(st.session_state.get("s_write")),
            "admin": bool(st.session_state.get("s_admin")),
        },
    )


def _restore_choice(names: list[str]) -> None:
    """The store from ``?store=`` (first run of a session), else what this visitor kept
    (a page switch drops the widgets' state, a reload the whole session)."""
    if not st.session_state.get("s_restored"):
        st.session_state.s_restored = True
        asked = st.query_params.get("store")
        if asked:
            if asked in names:
                st.session_state.s_store = asked
            else:
                st.session_state.s_refused = asked
            return
    if st.session_state.get("s_store") is not None:
        return
    was = kept("store")
    if isinstance(was, dict) and was.get("name") in names:
        st.session_state.s_store = was["name"]
        st.session_state.s_target = was.get("typed") or ""
        st.session_state.s_write = bool(was.get("write"))
        st.session_state.s_admin = bool(was.get("admin"))


def connect() -> StoreBrowser | None:
    """The connection row: the operator's stores (and, locally, a typed one); ``None`` until
    connected. Nothing a visitor types reaches a connection unless path entry is on."""
    try:
        targets = {t.name: t for t in configured_targets()}
    except StoreTargetsError as exc:
        st.error(f"The store configuration cannot be read:\n\n{md(exc)}", icon=":material/error:")
        return None
    local = path_entry_offered()
    names = list(targets) + ([TYPE_OWN] if local else [])
    _restore_choice(names)
    refused = st.session_state.pop("s_refused", None)
    if refused is not None:
        st.error(
            f"No configured store is named {md(mask_url(refused))}. "
            + (
                "Pick one below."
                if local
                else "Typing a path or URL is off: this inspector offers only the stores "
                "its operator configured."
            ),
            icon=":material/block:",
        )
    if not names:
        st.info(
            "No store is configured. The operator offers stores by name: "
            "`FLOWDROP_STORES='team=/srv/flowdrop/buffers.sqlite3; "
            "cache=redis://localhost:6379/0'` or a `FLOWDROP_STORES_FILE` (see the README, "
            "Serving it to a team). `FLOWDROP_STORE_PATHS=1` lets a loopback-only inspector "
            "type a path or URL.",
            icon=":material/storage:",
        )
        return None
    left, right = st.columns([4, 1], vertical_alignment="bottom")
    with left:
        name = st.selectbox(
            "Store",
            names,
            index=None,
            key="s_store",
            format_func=lambda n: (
                (targets[n].label() if local else public_label(targets[n])) if n in targets else n
            ),
            placeholder="Pick a store the operator configured",
            on_change=_keep_choice,
        )
    chosen = targets.get(name) if name else None
    typed = ""
    if name == TYPE_OWN:
        typed = st.text_input(
            "Store: a SQLite file, a Redis URL or a Postgres URL",
            key="s_target",
            placeholder="/path/to/buffers.sqlite3, redis://localhost:6379/0 or postgresql://…",
            help="Local path entry is on (FLOWDROP_STORE_PATHS): this inspector is "
            "served on loopback only. Connection options in a URL are ignored.",
            on_change=_keep_choice,
        ).strip()
    # MEM-9: the view tier unless the operator granted more; a typed path (local mode
    # only) is the operator's own machine.
    granted = chosen.tier if chosen is not None else Tier.ADMIN if name == TYPE_OWN else Tier.VIEW
    may_write = granted >= Tier.DRIVE
    with right:
        writable = st.toggle(
            "Allow writes",
            key="s_write",
            disabled=not may_write,
            on_change=_keep_choice,
            help="Off: the store is opened read-only and nothing changes it. "
            "On: the Write tab can append to a slot (the drive tier)."
            + ("" if may_write else " The operator configured this store read-only."),
        )
        admin = st.toggle(
            "Admin",
            key="s_admin",
            disabled=granted < Tier.ADMIN,
            on_change=_keep_choice,
            help="The administrative tier (MEM-15): clear a slot, repair a framework's "
            "file. Each is named before it is made and recorded."
            + (
                ""
                if granted >= Tier.ADMIN
                else " The operator did not grant it for this store (admin in its configuration)."
            ),
        )
    tier = switched_tier(granted, bool(writable), bool(admin))
    if chosen is None and not typed:
        st.info(
            "Pick a store to browse its slots."
            if name != TYPE_OWN
            else "Type a SQLite file path (a FlowDrop store or a framework's own file), "
            "a Redis URL or a Postgres URL.",
            icon=":material/storage:",
        )
        return None
    if chosen is not None:  # a link names the operator's store (never a typed path)
        if st.query_params.get("store") != name:
            st.query_params["store"] = str(name)
    elif "store" in st.query_params:
        del st.query_params["store"]
    target = chosen.target if chosen is not None else typed
    if sniff(target) is not None:  # a framework's own file (Agents SQLiteSession, LangGraph)
        show_framework_store(target, tier)
        return None
    try:
        return cached_browser(target, str(tier))
    except (StorageError, ValueError, OSError) as exc:
        st.error(f"Cannot open the store:\n\n{md(mask_url(str(exc)))}", icon=":material/error:")
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
    if not st.session_state.get("_slot_seeded"):  # a link's ?slot= (once; a listed slot only)
        st.session_state._slot_seeded = True
        try:
            asked = tuple(json.loads(st.query_params.get("slot") or "null") or ())
        except (ValueError, TypeError):
            asked = ()
        if asked in slots:
            st.session_state.s_slot = asked
    slot = st.selectbox("Open a slot", slots, format_func=slot_label, key="s_slot")
    if slot is not None:
        shown = json.dumps(list(slot), ensure_ascii=False)
        if st.query_params.get("slot") != shown:
            st.query_params["slot"] = shown
    return slot


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
def _replay(
    _records: list[JournalRecord], target: str, slot: Slot, newest_seq: int
) -> JournalReplay:
    """The slot's journal replayed (cached until a newer record arrives; never mutated)."""
    return replay_journal(_records, name=f"journal-{slot[0]}-{slot[1]}-{slot[2]}")


def show_journal_truth(browser: StoreBrowser, slot: Slot) -> None:
    """As soon as a slot is read: does it hold what its journal's last record left?

    One O(1) revision read and the journal's records; a write made outside
    the journal is named here, not only after the next journaled append.
    """
    try:
        records = browser.records(slot)
        if not records:
            return
        value = browser.buffer(slot)
        gap = journal_gap(
            browser.store.revision(*slot),
            records,
            len(value) if isinstance(value, list) else None,
        )
    except StorageError as exc:
        st.error(md(exc), icon=":material/error:")
        return
    if gap is not None:
        st.warning(md(gap), icon=":material/sync_problem:")


#: Where a session keeps its one follower of a slot's journal.
_FOLLOWER = "s_follower"


def show_journal(browser: StoreBrowser, slot: Slot) -> None:
    """The slot's journal replayed in the timeline; with Follow on, new steps as they land."""
    if follow_switch("s_follow", "slot's journal"):
        _followed_journal(browser, slot)
    else:
        drop_follower(_FOLLOWER)
        st.session_state.pop("s_follow_seen", None)
        _journal_view(browser.store, browser.target, slot)


@st.fragment(run_every=EVERY)
def _followed_journal(browser: StoreBrowser, slot: Slot) -> None:
    """Rerun by Streamlit every :data:`EVERY` seconds while drawn: new records, then the view."""
    if not st.session_state.get("s_follow"):
        return
    if not renew_seat():
        st.warning("This session's follow seat lapsed; switch Follow off and on.")
        return
    follower: JournalFollower = session_follower(
        _FOLLOWER, (browser.target, slot), lambda: JournalFollower(browser.store, slot)
    )
    try:
        seen = follower.check()
    except StorageError as exc:
        st.error(md(exc), icon=":material/error:")
        return
    count = st.session_state.get("s_follow_seen", 0) + sum(e.kind == "append" for e in seen)
    st.session_state.s_follow_seen = count
    st.caption(
        f"Following: {count} new append(s) since switched on; checked "
        f"{datetime.now(UTC).strftime('%H:%M:%S')} UTC ({follower.waiter.how})."
    )
    _journal_view(follower.store, browser.target, slot)


def _journal_view(store: Store, target: str, slot: Slot) -> None:
    """The journal of ``slot`` read through ``store``, replayed and checked."""
    records = journal_for(store).read(slot)
    if not records:
        st.info(
            "This slot has no journal. A runtime records one with "
            "ConversationBuffer(..., journal=N).",
            icon=":material/history:",
        )
        return
    if records[-1].action == "clear":  # MEM-15: recorded, and nothing appended since
        last = records[-1]
        st.info(
            f"Record {last.seq}: the slot was cleared at the admin tier"
            + (f" by {md(last.by)}" if last.by else "")
            + "; nothing was appended since, so there is nothing to replay.",
            icon=":material/history:",
        )
        return
    try:
        replayed = _replay(records, target, slot, records[-1].seq)
    except ValueError as exc:
        st.error(md(exc), icon=":material/error:")
        return
    for note in replayed.notes:
        st.warning(md(note), icon=":material/info:")
    if replayed.check.passed and journal_gap(store.revision(*slot), records) is not None:
        st.info(
            f"Records {replayed.first_seq}..{records[-1].seq} replayed: every step reports what "
            "was recorded, but the slot changed after the last record (see above).",
            icon=":material/info:",
        )
    elif replayed.check.passed:
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
    show_health_panel(timeline, "s_step", "sj")
    step = step_selector(timeline, "s_step", label="Journal step")
    show_inspector(timeline, step, prefix="sj", name=replayed.scenario.name, key="s_step")


def show_writes(browser: StoreBrowser, slot: Slot) -> None:
    """Append (the drive tier) or clear (admin) the slot; only what the tier allows is offered."""
    if browser.tier < Tier.DRIVE:
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
    # Journaled by default: an append made here without a record is the write outside the
    # journal the Journal tab has to warn about.
    st.session_state.setdefault("s_journal", WRITE_JOURNAL)
    journal = st.number_input(
        "Journal (records kept per slot, 0 = off)", min_value=0, step=1, key="s_journal"
    )
    if st.button("Append", key="s_append", icon=":material/add:"):
        try:
            res = browser.append(
                slot, json.loads(text), max_messages=int(window), journal=int(journal)
            )
        except (ValueError, InvalidMessagesError, StorageError, ReadOnlyError, TierDenied) as exc:
            st.error(md(exc), icon=":material/error:")
        else:
            st.success(
                f"count {res.count}, appended {res.appended}, appended_any {res.appended_any}",
                icon=":material/check_circle:",
            )
    show_clear(browser, slot)


def show_clear(browser: StoreBrowser, slot: Slot) -> None:
    """The admin tier's clear: named before it is made, recorded in the journal (MEM-15)."""
    if browser.tier < Tier.ADMIN:
        st.caption(
            "Clearing a slot changes stored messages other than by an append: it needs the "
            "administrative tier (MEM-15), which the operator grants per store and *Admin* "
            "switches on."
        )
        return
    value = browser.buffer(slot)
    what = f"its {len(value)} entries" if isinstance(value, list) else "its plain value"
    st.caption(
        f"Admin: *Clear the slot* removes {what}; the clear is recorded in the slot's journal."
    )
    if st.button("Clear the slot", key="s_clear", icon=":material/delete:"):
        try:
            done = browser.clear(slot, by="the Store page (admin)")
        except (StorageError, ReadOnlyError, TierDenied) as exc:
            st.error(md(exc), icon=":material/error:")
        else:
            st.success(md(str(done).capitalize() + "."), icon=":material/check_circle:")


def show_store_page() -> None:
    """The whole page below the title."""
    st.caption(
        "Browse the store a runtime writes (a SQLite file, a Redis or a Postgres server, or a "
        "framework's own file: an OpenAI Agents SQLiteSession or a LangGraph SQLite "
        "checkpointer): every slot with its scope, scope id, key, entry count and last write, "
        "a slot's buffer, and its append journal replayed step by step. Read-only unless "
        "writes are switched on. A link opens the same store, slot, tab and step."
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
    mode = {Tier.VIEW: "read-only", Tier.DRIVE: "writable", Tier.ADMIN: "writable, admin"}
    st.caption(f"{len(infos)} slot(s), {browser.kind} store, {mode[browser.tier]}.")
    slot_table(infos)
    slot = pick_slot(infos)
    if slot is None:
        st.info("No slot matches.", icon=":material/search_off:")
        return
    show_journal_truth(browser, slot)
    # Only the open tab runs: replaying a journal costs O(records), reading a buffer O(entries).
    tab_buffer, tab_journal, tab_write = st.tabs(
        ["Buffer", "Journal", "Write"], key="s_tab", on_change="rerun", bind="query-params"
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
