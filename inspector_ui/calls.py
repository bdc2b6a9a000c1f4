"""The Tool calls tab: one row per call id, filterable, and the compare view's what-if line.

The rows are :func:`flowdrop_core.inspect.lifecycle.lifecycle` (one pass over
the timeline, once per timeline and length); a click on a row jumps to the
step the call was declared at. A health finding sets the call-id filter
(``{prefix}_calls_id``) so the call it is about is the one shown.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

import pandas as pd
import streamlit as st

from flowdrop_core.inspect.lifecycle import LIFE_COLUMNS, STATUSES, Lifecycle, lifecycle, what_if
from flowdrop_core.replay import Timeline
from inspector_ui.display import clip_frame
from inspector_ui.navigator import select_step
from inspector_ui.plain import md, shown

__all__ = ["cached_lifecycle", "show_calls", "show_what_if"]

PAGE = 25
ROW_HEIGHT = 35

_LIVES: weakref.WeakKeyDictionary[Timeline, tuple[int, Lifecycle]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def cached_lifecycle(timeline: Timeline) -> Lifecycle:
    """The timeline's call lifecycle, once per (timeline, its length)."""
    with _LOCK:
        hit = _LIVES.get(timeline)
        if hit is not None and hit[0] == len(timeline.steps):
            return hit[1]
    life = lifecycle(timeline)
    with _LOCK:
        _LIVES[timeline] = (len(timeline.steps), life)
    return life


def _clicked(key: str, table_key: str, rows: list[dict[str, Any]]) -> None:
    state = st.session_state.get(table_key)
    picked = list(getattr(getattr(state, "selection", None), "rows", []) or [])
    if picked and 0 <= picked[0] < len(rows):
        row = rows[picked[0]]
        target = row["declared at step"] or row["answered at step"]
        if target:
            select_step(key, int(target))


def show_calls(timeline: Timeline, key: str, prefix: str) -> None:
    """Every tool call of the timeline, its fates as steps (1-based), filtered and paged."""
    life = cached_lifecycle(timeline)
    if not len(life):
        st.info("No tool call in this timeline.", icon=":material/build:")
        return
    counts = life.status_counts()
    status_key, id_key = f"{prefix}_calls_status", f"{prefix}_calls_id"
    if st.session_state.get(status_key) not in (None, *STATUSES):
        st.session_state[status_key] = None
    bar = st.container(horizontal=True, vertical_alignment="bottom")
    status = bar.selectbox(
        "Status",
        [s for s in STATUSES if s in counts],
        index=None,
        format_func=lambda s: f"{s} · {counts.get(s, 0)}",
        key=status_key,
        placeholder="every status",
        width=260,
    )
    text = bar.text_input("Call id contains", key=id_key, width=260)
    rows = life.rows(status=status, text=text or "")
    pages = max(1, -(-len(rows) // PAGE))
    page_key = f"{prefix}_calls_page"
    if st.session_state.get(page_key, 1) > pages:
        st.session_state[page_key] = 1
    page = int(bar.number_input("Page", 1, pages, key=page_key, width=120) or 1)
    st.caption(
        f"{len(rows)} of {len(life)} call(s). {md(life.summary())}. Steps are 1-based, buffer "
        "positions 0-based; click a row to go to the step its call was declared at."
    )
    shown = rows[(page - 1) * PAGE : page * PAGE]
    if not shown:
        st.info("No call matches this filter.", icon=":material/filter_alt_off:")
        return
    table_key = f"{prefix}_calls_table_{status}_{text}_{page}_{len(rows)}"
    st.dataframe(
        clip_frame(pd.DataFrame(shown, columns=LIFE_COLUMNS)),
        hide_index=True,
        height=ROW_HEIGHT * (len(shown) + 1) + 3,
        key=table_key,
        on_select=lambda: _clicked(key, table_key, shown),
        selection_mode="single-row",
        alt="One row per tool call id: declared, answered, duplicates, healed, replaced, evicted",
        column_config={"call id": st.column_config.TextColumn("call id", pinned=True)},
    )


def show_what_if(base: Timeline, other: Timeline, label: str) -> None:
    """The whole timeline under the other settings: calls that lose their result, results
    left orphaned (two fates, two words), against the timeline as made."""
    lines = what_if(cached_lifecycle(base), cached_lifecycle(other), label)
    st.markdown("**Tool calls over the whole timeline**")
    st.text(shown("\n".join(lines)))
