"""The decision navigator: step selection, decision filter, previous / next, the timeline table.

Shared by the Playground and Replay pages. Every number and word comes from
``flowdrop_core.inspect`` (decision kinds, rows, labels); this module keeps
the user's place: which step is selected, whether it follows the newest
append, which kind is filtered, which page of the table is shown.

State per page ``prefix`` and step key ``key`` (both bound to the URL where
a person would want a link to reopen them): ``key`` the selected step,
``{key}_pinned`` whether the person chose it (else it follows the newest
append), ``{prefix}_kind`` the decision kind filtered and jumped between.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from functools import partial
from typing import Any

import pandas as pd
import streamlit as st

from flowdrop_core.inspect.decisions import KIND_LABELS, Decision, DecisionIndex, decision_cells
from flowdrop_core.inspect.glossary import help_for
from flowdrop_core.inspect.labels import step_label
from flowdrop_core.inspect.rows import NAV_COLUMNS, count_flag, nav_rows
from flowdrop_core.inspect.search import SearchHit, search_timeline
from flowdrop_core.replay import Timeline
from inspector_ui.display import clip_frame, clip_text, fit_cells, fit_width, page_count
from inspector_ui.display import shown as visible_text
from inspector_ui.plain import md, show_text

PAGE_SIZE = 25
ROW_HEIGHT = 35
SELECTED = "background-color: #cfe2ff; font-weight: 600"
FLAGGED = "background-color: #fff3cd"

#: The columns that quote ids (calls, rules), and their widths in pixels: a cell they cannot hold ends
#: with "…" (fit_cells), so a cut id never reads as another id. The place column ("from")
#: is as wide as the places shown (up to ORIGIN_MOST); words (decisions, reasons) are cut
#: by the grid, and the selected step's reasons are in full above the table.
TEXT_WIDTHS = {"incoming": 120, "rules": 68}  # "MEM-3, MEM-1" must not read as MEM-1
ORIGIN_MOST = 180

#: Widths chosen so the eleven columns (788 px) fit a 1280 px window next to the sidebar
#: (about 820 px of main area), row-selection column included; a long place widens "from".
COLUMN_CONFIG: dict[str, Any] = {
    "step": st.column_config.NumberColumn("step", width=48, pinned=True, help="Step, 1-based"),
    "incoming": st.column_config.TextColumn("incoming", width=TEXT_WIDTHS["incoming"]),
    "count": st.column_config.NumberColumn("count", width=50),
    "change": st.column_config.NumberColumn(
        "Δ", format="%+d", width=36, help="Change in count: NOT what was appended (MEM-14)"
    ),
    "parts": st.column_config.TextColumn(
        "= a + p - e",
        width=78,
        help="The change in count, in parts: appended + placeholders inserted - evicted. "
        "Highlighted rows are those where the count says something the incoming messages did "
        "not do: a heal's growth, a replaced or dropped result's zero (MEM-14).",
    ),
    "appended": st.column_config.NumberColumn("appended", width=66),
    "appended_any": st.column_config.CheckboxColumn("any", width=36, help="appended_any"),
    "decisions": st.column_config.TextColumn("decisions", width=120),
    "rules": st.column_config.TextColumn("rules", width=TEXT_WIDTHS["rules"]),
    "reason": st.column_config.TextColumn("reason", width=120),
    "origin": st.column_config.TextColumn(
        "from", width=56, help="Where the step came from in the file, or its label"
    ),
}

_INDEXES: weakref.WeakKeyDictionary[Timeline, DecisionIndex] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def decision_index(timeline: Timeline) -> DecisionIndex:
    """The timeline's decision index, kept per timeline and brought up to date (O(new steps))."""
    with _LOCK:  # timelines are shared between sessions through the caches
        index = _INDEXES.get(timeline)
        if index is None:
            index = _INDEXES[timeline] = DecisionIndex()
        return index.update(timeline.steps)


# --------------------------------------------------------------------------- the selected step


def select_step(key: str, step: int) -> None:
    """Select ``step`` on purpose (a jump, a typed number, a row click): it stops following."""
    st.session_state[key] = step
    st.session_state[f"{key}_pinned"] = step != st.session_state.get(f"{key}_n")


def _slider_moved(key: str) -> None:
    select_step(key, int(st.session_state[key]))


def _read_url_step(key: str) -> int | None:
    raw = st.query_params.get(key)
    if raw is None:
        return None
    try:
        return int(raw)
    except ValueError:
        return None


def step_selector(
    timeline: Timeline, key: str, label: str = "Step", recording: object = None
) -> int:
    """A slider over the timeline (0 = the starting buffer), bound to the URL.

    The selected step follows the newest append unless the person picked
    another one (slider, jump, typed number, row click, or a link's
    ``?step=N``); picking the newest step again makes it follow again.
    Another ``recording`` (an upload, a sample) opens at its last step: one
    rule for every file, the first of a session or the fifth.
    """
    n = len(timeline.steps)
    pinned_key, n_key, rec_key = f"{key}_pinned", f"{key}_n", f"{key}_recording"
    if recording is not None:
        if rec_key in st.session_state and st.session_state[rec_key] != recording:
            st.session_state[pinned_key] = False  # a new file: its last step
        st.session_state[rec_key] = recording
    if n == 0:
        for name in (key, pinned_key):
            st.session_state.pop(name, None)
        st.session_state[n_key] = 0
        return 0
    if key not in st.session_state:  # first run of this page: a copied link's ?step=N
        wanted = _read_url_step(key)
        if wanted is not None and 0 <= wanted <= n:
            st.session_state[key] = wanted
            st.session_state[pinned_key] = wanted != n
    current = st.session_state.get(key)
    pinned = bool(st.session_state.get(pinned_key))
    if not isinstance(current, int) or not 0 <= current <= n or not pinned:
        current = n  # follow the newest step
        st.session_state[pinned_key] = False
    # Always assigned: a slider whose max changed is a new widget, which would otherwise
    # start again at its minimum and lose a step the person picked.
    st.session_state[key] = current
    st.session_state[n_key] = n
    value = int(
        st.slider(
            label,
            min_value=0,
            max_value=n,
            key=key,
            on_change=_slider_moved,
            args=(key,),
            help=(
                "0 is the starting buffer. A recording opens at its last step; the selected "
                "step follows the newest append until you pick another one; it is kept in the "
                "URL."
            ),
        )
    )
    # Written by hand, not bound: a bound value is restored from the URL on reruns, which
    # fights the programmatic follow-the-newest-append above (it stuck at step 3).
    if st.query_params.get(key) != str(value):
        st.query_params[key] = str(value)
    return value


# --------------------------------------------------------------------------- navigator bar


def _jump(key: str, kind_key: str, forward: bool, timeline: Timeline) -> None:
    kind = st.session_state.get(kind_key)
    step = int(st.session_state.get(key) or 0)
    if kind:
        index = decision_index(timeline)
        found = index.next_step(kind, step) if forward else index.previous_step(kind, step)
    else:
        n = len(timeline.steps)
        found = min(step + 1, n) if forward else max(step - 1, 0)
    if found is not None:
        select_step(key, found)


def _typed(key: str, goto_key: str, n: int) -> None:
    value = st.session_state.get(goto_key)
    if isinstance(value, int | float):
        select_step(key, max(0, min(int(value), n)))


_LABEL_TO_KIND = {label: kind for kind, label in KIND_LABELS.items()}


def kind_from_url(raw: str) -> Decision | None:
    """A decision kind named in a link: its id (``duplicate_result``), or a label as older
    links stored it, with or without its count (``duplicate result · 1``); ``None`` if neither."""
    text = raw.strip()
    if text in Decision.__members__.values():
        return Decision(text)
    label = text.split(" · ")[0].strip()
    return _LABEL_TO_KIND.get(label)


def _seed_kind(kind_key: str) -> None:
    """On a page's first run, take the filter from the URL by kind id; a notice if unknown.

    The filter is not bound to the URL by Streamlit (a bound pill stores its
    label with its count, which a later count breaks); it is read here and
    written back as the kind id by :func:`_mirror_kind`.
    """
    seeded = f"_{kind_key}_seeded"
    if st.session_state.get(seeded):
        return
    st.session_state[seeded] = True
    raw = st.query_params.get(kind_key)
    if raw is None:
        return
    kind = kind_from_url(raw)
    if kind is None:
        del st.query_params[kind_key]
        known = ", ".join(str(k) for k in Decision)
        st.session_state[f"{kind_key}_notice"] = (
            f"URL: {kind_key}={md(clip_text(raw, 60)[0])} is not a decision kind "
            f"(known: {known}); showing every step."
        )
        return
    st.session_state[kind_key] = str(kind)


def _mirror_kind(kind_key: str, kind: str | None) -> None:
    """Keep the URL's filter the kind id (or nothing)."""
    if kind:
        if st.query_params.get(kind_key) != kind:
            st.query_params[kind_key] = kind
    elif kind_key in st.query_params:
        del st.query_params[kind_key]


def _kind_picked(key: str, kind_key: str, timeline: Timeline) -> None:
    """Picking a filter jumps to the first step holding that kind (if any)."""
    kind = st.session_state.get(kind_key)
    if not kind:
        return
    found = decision_index(timeline).steps_with(kind)
    if found:
        select_step(key, found[0])


def show_navigator(timeline: Timeline, step: int, key: str, prefix: str) -> Decision | None:
    """Counts of every decision kind (also the filter), previous / next, and a step box.

    Returns the kind chosen (``None``: every step). The filter is in the URL
    as the kind id (``?r_kind=duplicate_result``).
    """
    index = decision_index(timeline)
    counts = {c.kind: c for c in index.counts()}
    kind_key = f"{prefix}_kind"
    _seed_kind(kind_key)
    notice = st.session_state.pop(f"{kind_key}_notice", None)
    if notice:
        st.warning(notice, icon=":material/link_off:")
    if st.session_state.get(kind_key) not in (None, *[str(k) for k in Decision]):
        st.session_state[kind_key] = None  # a stale value: show every step

    def label(value: str) -> str:
        c = counts[Decision(value)]
        return f"{KIND_LABELS[c.kind]} · {c.decisions}"

    show_all = st.session_state.get(f"{prefix}_all_kinds", False)
    picked = st.session_state.get(kind_key)
    options = [
        str(k) for k in Decision if show_all or counts[k].decisions or str(k) == picked
    ]  # a kind with no decision is hidden unless asked (or picked, e.g. by a link)
    hidden = len(Decision) - len(options)
    meanings = "\n".join(
        f"- {KIND_LABELS[Decision(k)]}: {help_for(k)}" for k in options if help_for(k)
    )
    kind = st.pills(
        "Decisions in this timeline (pick one to filter the table and jump to its first step)",
        options,
        format_func=label,
        key=kind_key,
        on_change=_kind_picked,
        args=(key, kind_key, timeline),
        help=(
            "Every kind of decision this timeline holds, with how many. Counts are decisions "
            "(events); a step can hold several. A link keeps the kind's id, e.g. "
            "?r_kind=duplicate_result.\n\n" + meanings
        ),
    )
    st.toggle(
        f"Show kinds with no decision ({hidden} hidden)"
        if hidden
        else "Show kinds with no decision",
        key=f"{prefix}_all_kinds",
        help="The engine can make twelve kinds of decision; by default only those this "
        "timeline holds are shown.",
    )
    _search(timeline, key, prefix)
    _mirror_kind(kind_key, kind)
    n = len(timeline.steps)
    chosen = Decision(kind) if kind else None
    bar = st.container(horizontal=True, vertical_alignment="bottom", key=f"{prefix}_navbar")
    noun = KIND_LABELS[chosen] if chosen else "step"
    has_prev = index.previous_step(chosen, step) is not None if chosen else step > 0
    has_next = index.next_step(chosen, step) is not None if chosen else step < n
    bar.button(
        f"Previous {noun}",
        key=f"{prefix}_prev",
        icon=":material/arrow_back:",
        on_click=_jump,
        args=(key, kind_key, False, timeline),
        disabled=not has_prev,
    )
    bar.button(
        f"Next {noun}",
        key=f"{prefix}_next",
        icon=":material/arrow_forward:",
        on_click=_jump,
        args=(key, kind_key, True, timeline),
        disabled=not has_next,
    )
    goto_key = f"{prefix}_goto"
    st.session_state[goto_key] = step
    bar.number_input(
        "Go to step",
        min_value=0,
        max_value=max(n, 0),
        step=1,
        key=goto_key,
        on_change=_typed,
        args=(key, goto_key, n),
        width=160,
    )
    if 0 < step <= n:
        _show_reasons(timeline, step, prefix)
    if chosen:
        where = index.position(chosen, step)
        total = counts[chosen].steps
        if total == 0:
            bar.caption(f"No step holds a {KIND_LABELS[chosen]} decision.")
        elif where:
            bar.caption(f"Step {step} is {KIND_LABELS[chosen]} step {where[0]} of {where[1]}.")
        else:
            bar.caption(
                f"{total} step(s) hold a {KIND_LABELS[chosen]} decision; step {step} does not."
            )
    return chosen


REASON_LINES = 6
SEARCH_ROWS = 50

_SEARCHES: weakref.WeakKeyDictionary[Timeline, tuple[str, int, list[SearchHit]]] = (
    weakref.WeakKeyDictionary()
)


def _hits(timeline: Timeline, query: str) -> list[SearchHit]:
    """The search's hits, kept per timeline for the last query and length (a rerun is free)."""
    kept = _SEARCHES.get(timeline)
    if kept and kept[0] == query and kept[1] == len(timeline.steps):
        return kept[2]
    hits = search_timeline(timeline, query)
    _SEARCHES[timeline] = (query, len(timeline.steps), hits)
    return hits


def _search_jump(key: str, steps: list[int], forward: bool) -> None:
    step = int(st.session_state.get(key) or 0)
    if forward:
        later = [s for s in steps if s > step]
        found = later[0] if later else None
    else:
        earlier = [s for s in steps if s < step]
        found = earlier[-1] if earlier else None
    if found is not None:
        select_step(key, found)


def _search(timeline: Timeline, key: str, prefix: str) -> None:
    """A search over content, call ids and tool names; previous / next match and the hits."""
    query = st.text_input(
        "Search content, call ids and tool names",
        key=f"{prefix}_search",
        placeholder="e.g. call_Rf4m or get_weather",
        help="Case-insensitive, over every step's incoming messages (both id spellings).",
    )
    if not query.strip():
        return
    hits = _hits(timeline, query)
    steps = sorted({h.step for h in hits})
    row = st.container(horizontal=True, vertical_alignment="center", key=f"{prefix}_searchbar")
    row.button(
        "Previous match",
        key=f"{prefix}_search_prev",
        icon=":material/arrow_back:",
        on_click=_search_jump,
        args=(key, steps, False),
        disabled=not steps,
    )
    row.button(
        "Next match",
        key=f"{prefix}_search_next",
        icon=":material/arrow_forward:",
        on_click=_search_jump,
        args=(key, steps, True),
        disabled=not steps,
    )
    more = " (the first 500)" if len(hits) >= 500 else ""
    row.caption(f"{len(hits)} match(es){more} in {len(steps)} step(s).")
    if hits:
        st.dataframe(
            clip_frame(pd.DataFrame([h.row() for h in hits[:SEARCH_ROWS]])),
            hide_index=True,
            width="stretch",
            key=f"{prefix}_search_hits",
            alt="Where the search text occurs: step (1-based), incoming message (0-based), field",
        )


def _show_reasons(timeline: Timeline, step: int, prefix: str) -> None:
    """The selected step: what came in, its decisions, their rules and every reason in full.

    Plain text; a long incoming line is clipped with a note and a download of the whole.
    """
    record = timeline.steps[step - 1]
    cells = decision_cells(record)
    lines = cells["reasons"].split("\n") if cells["reasons"] else []
    more = len(lines) - REASON_LINES
    shown = lines[:REASON_LINES] + ([f"… and {more} more in the step's tab"] if more > 0 else [])
    with st.container(key="nav_reasons"):
        rules = [r for r in cells["rules"].split(", ") if r and f"({r})" not in cells["decisions"]]
        st.caption(f"Step {step}: {cells['decisions']} ({', '.join(rules) or 'no other rule'})")
        show_text(step_label(record.incoming, width=None), f"{prefix}_nav_incoming")
        if shown:
            st.text(visible_text("\n".join(shown)))


# --------------------------------------------------------------------------- the table


def _table_clicked(key: str, table_key: str, steps: list[int]) -> None:
    state = st.session_state.get(table_key)
    rows = list(getattr(getattr(state, "selection", None), "rows", []) or [])
    if rows and 0 <= rows[0] < len(steps):
        select_step(key, steps[rows[0]])


def nav_frame(timeline: Timeline, steps: list[int]) -> pd.DataFrame:
    """The rows of ``steps`` as a table in :data:`NAV_COLUMNS` order, cut cells marked "…".

    A cell its column cannot hold ends with "…"; the selected step's reasons are in
    full above the table.
    """
    frame = clip_frame(pd.DataFrame(nav_rows(timeline, steps), columns=NAV_COLUMNS))
    return fit_cells(frame, {**TEXT_WIDTHS, "origin": ORIGIN_MOST})


def show_nav_table(
    timeline: Timeline, step: int, key: str, prefix: str, kind: Decision | None
) -> None:
    """The timeline filtered by ``kind``, paged, on the page of the selected step, row marked."""
    index = decision_index(timeline)
    steps = index.steps_with(kind)
    pages = page_count(len(steps), PAGE_SIZE)
    page_key = f"{prefix}_page"
    follow_key = f"{prefix}_page_for"
    # Show the selected step's page whenever the step or the filter changes.
    if st.session_state.get(follow_key) != (step, kind):
        at = bisect_left(steps, step)
        if at == len(steps):
            at = max(0, len(steps) - 1)
        st.session_state[page_key] = at // PAGE_SIZE + 1
        st.session_state[follow_key] = (step, kind)
    if st.session_state.get(page_key, 1) > pages:
        st.session_state[page_key] = pages
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    what = f"{len(steps)} step(s) with {KIND_LABELS[kind]}" if kind else f"{len(steps)} step(s)"
    left.caption(
        f"{what}, {PAGE_SIZE} per page. The selected step is highlighted; click a row to "
        "select it. Its reasons are in full above the table and in the step's tab."
    )
    page = right.number_input("Page", min_value=1, max_value=pages, step=1, key=page_key, width=140)
    shown = steps[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    if not shown:
        st.info("No step holds this decision.", icon=":material/filter_alt_off:")
        return
    frame = nav_frame(timeline, shown)
    flagged = {r.step for r in (timeline.steps[s - 1] for s in shown) if count_flag(r)}

    def mark(row: pd.Series) -> list[str]:
        if row["step"] == step:
            return [SELECTED] * len(row)
        return [FLAGGED if row["step"] in flagged else ""] * len(row)

    styler = frame.style.apply(mark, axis=1)
    table_key = f"{prefix}_table_{kind or 'all'}_{page}_{len(steps)}"
    st.dataframe(
        styler,
        hide_index=True,
        height=ROW_HEIGHT * (len(shown) + 1) + 3,
        key=table_key,
        on_select=partial(_table_clicked, key, table_key, shown),
        selection_mode="single-row",
        alt="Timeline: one row per append with its MEM-14 report, decisions, rules and reasons",
        column_config={
            **COLUMN_CONFIG,
            "origin": st.column_config.TextColumn(
                "from",
                width=fit_width(frame["origin"], least=56, most=ORIGIN_MOST),
                help="Where the step came from in the file, or its label",
            ),
        },
    )
