"""The Store page on a framework's own file: sessions or threads, health, timeline, repair.

Everything here renders what :mod:`flowdrop_core.framework_stores` returns.
Values read from the file (ids, content, findings quoting them) are shown as
table cells, text or escaped Markdown; the file is opened read-only unless
the page is at the admin tier (a repair is an administrative act, MEM-15),
and the repair backs it up first and is recorded.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from flowdrop_core.framework_stores import (
    FrameworkStore,
    FrameworkStoreError,
    ThreadInfo,
    health,
    open_framework_store,
)
from flowdrop_core.replay import Timeline, replay
from flowdrop_core.store_browser import ReadOnlyError
from flowdrop_core.tiers import Tier, TierDenied
from inspector_ui.entries import show_entries
from inspector_ui.follow import EVERY, follow_switch, renew_seat
from inspector_ui.inspector import show_inspector
from inspector_ui.navigator import step_selector
from inspector_ui.plain import md

__all__ = ["show_framework_store"]

LABELS = {
    "openai-agents": "OpenAI Agents SQLiteSession file",
    "langgraph": "LangGraph checkpoint file",
    "openai-agents-sqlalchemy": "OpenAI Agents SQLAlchemySession tables",
    "langgraph-postgres": "LangGraph PostgresSaver checkpointer",
}


def _table(infos: list[ThreadInfo], word: str) -> None:
    frame = pd.DataFrame(
        [
            {word: i.id, "entries": i.count, "updated": i.updated or "", "health": i.summary()}
            for i in infos
        ],
        columns=[word, "entries", "updated", "health"],
    )
    st.dataframe(
        frame,
        hide_index=True,
        key="sf_threads",
        alt=f"The file's {word}s: id, entries, last update, health (MEM-5 findings)",
    )


def _timeline(store: FrameworkStore, thread_id: str) -> Timeline:
    return replay(store.scenario(thread_id))


def _show_thread(store: FrameworkStore, thread_id: str, writable: bool) -> None:
    rows = store.rows(thread_id)
    findings = health(rows)
    if findings:
        st.warning(
            f"{len(findings)} finding(s) a provider would reject:\n\n"
            + "\n\n".join(f"- {md(f)}" for f in findings),
            icon=":material/warning:",
        )
    else:
        st.success("Healthy: nothing a provider would reject.", icon=":material/check_circle:")
    tab_timeline, tab_entries, tab_repair = st.tabs(
        ["Timeline", "Entries", "Repair"], key="sf_view", on_change="rerun"
    )
    if tab_timeline.open:
        with tab_timeline:
            timeline = _timeline(store, thread_id)
            step = step_selector(timeline, "sf_step", label="Stored entry")
            show_inspector(
                timeline, step, prefix="sfi", name=f"{store.kind}-{thread_id}", key="sf_step"
            )
    if tab_entries.open:
        with tab_entries:
            show_entries([(r, "kept") for r in rows], "Chat", "No entries.", "sf_entries")
    if tab_repair.open:
        with tab_repair:
            if not writable:
                st.info(
                    "Read-only. A repair changes stored messages other than by an append: it "
                    "needs the administrative tier (MEM-15), which the operator grants per "
                    "store and *Admin* switches on. The file is then backed up first, the "
                    "GR-MEM view written back, and the repair recorded.",
                    icon=":material/lock:",
                )
                return
            try:
                plan = store.plan_repair(thread_id)
            except FrameworkStoreError as exc:
                st.error(md(exc), icon=":material/error:")
                return
            if plan.refused:
                st.error(f"A repair is refused: {md(plan.refused)}", icon=":material/block:")
                return
            if not plan.changes:
                st.info("Nothing to do: a repair would write nothing.", icon=":material/check:")
                return
            st.caption("A repair writes exactly these rows (MEM-15), after a backup:")
            st.code("\n".join(plan.lines()), language=None, wrap_lines=True)
            if st.button("Back up and repair", key="sf_repair", icon=":material/build:"):
                try:
                    report = store.repair(thread_id, plan)
                except (FrameworkStoreError, ReadOnlyError, TierDenied) as exc:
                    st.error(md(exc), icon=":material/error:")
                else:
                    st.success(md(report.summary()), icon=":material/check_circle:")


def show_framework_store(target: str, tier: Tier) -> None:
    """The page below the connection row for a framework's file; writable only at admin."""
    writable = tier >= Tier.ADMIN
    try:
        store = open_framework_store(target, tier=Tier.ADMIN if writable else Tier.VIEW)
    except (FrameworkStoreError, ImportError) as exc:
        st.error(f"Cannot open the file:\n\n{md(exc)}", icon=":material/error:")
        return
    try:
        word = "session" if store.kind.startswith("openai-agents") else "thread"
        infos = store.threads()
        st.caption(
            f"{LABELS[store.kind]}, {len(infos)} {word}(s), "
            f"{'writable' if writable else 'read-only'}."
        )
        _table(infos, word)
        if not infos:
            st.info(f"The file holds no {word}.", icon=":material/search_off:")
            return
        picked = st.selectbox(f"Open a {word}", [i.id for i in infos], key="sf_thread")
        if picked is None:
            return
        if follow_switch("sf_follow", word):
            store.close()
            _followed_thread(target, picked, writable)
        else:
            _show_thread(store, picked, writable)
    finally:
        store.close()


@st.fragment(run_every=EVERY)
def _followed_thread(target: str, thread_id: str, writable: bool) -> None:
    """Rerun by Streamlit every :data:`EVERY` seconds while drawn: the thread read again.

    The file is opened for each run and closed after it (read-only unless
    writes are on), so each run sees what the framework committed since.
    """
    if not st.session_state.get("sf_follow"):
        return
    if not renew_seat():
        st.warning("This session's follow seat lapsed; switch Follow off and on.")
        return
    try:
        store = open_framework_store(target, writable=writable)
    except (FrameworkStoreError, ImportError) as exc:
        st.error(f"Cannot open the file:\n\n{md(exc)}", icon=":material/error:")
        return
    try:
        _show_thread(store, thread_id, writable)
    finally:
        store.close()
