"""The compare view: the same steps under other settings, differing steps marked.

Used by the Playground (the settings the steps were made with against the
sidebar's new ones) and the Replay page (what-if window and re-fire). The
comparison itself is :mod:`flowdrop_core.inspect.compare`; this module
caches it per pair of timelines and lays it out.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from flowdrop_core.inspect.compare import (
    CallFate,
    Comparison,
    Settings,
    call_fates,
    compare_timelines,
    plan_keys,
    scenario_appends,
    with_settings,
)
from flowdrop_core.replay import Timeline
from flowdrop_core.scenario import Scenario, dump_scenario
from inspector_ui.cache import (
    SESSION_STEP_BUDGET,
    cached_conversation,
    cached_conversation_replay,
    cached_replay,
    fits_in_session,
)
from inspector_ui.calls import show_what_if
from inspector_ui.display import clip_frame
from inspector_ui.navigator import select_step
from inspector_ui.plain import md
from inspector_ui.urlparams import (
    MAX_WINDOW,
    Param,
    check_url,
    mirror_to_url,
    seed_from_url,
    whole_number,
)

DIFF_PAGE = 25
#: The what-if window offered first: "would a window of 50 have kept this call?"
CMP_DEFAULT = 50
FATE_ROWS = 25
ROW_HEIGHT = 35
REFIRE_LABELS = {
    "none": "no re-fire",
    "results": "re-fire every tool result",
    "steps": "re-fire the whole run",
}

_COMPARISONS: weakref.WeakKeyDictionary[Timeline, dict[int, tuple[Any, Comparison]]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()


def cached_comparison(
    base: Timeline,
    other: Timeline,
    base_keys: list[tuple[int, int]] | None = None,
    other_keys: list[tuple[int, int]] | None = None,
) -> Comparison:
    """``compare_timelines(base, other)``, once per pair of (read-only, cached) timelines."""
    with _LOCK:
        for_base = _COMPARISONS.setdefault(base, {})
        hit = for_base.get(id(other))
        if hit is not None and hit[0]() is other:
            return hit[1]
    comparison = compare_timelines(
        base,
        other,
        base_keys,
        other_keys,
        base_settings=Settings.of(base.scenario),
        other_settings=Settings.of(other.scenario),
    )
    with _LOCK:
        for_base = _COMPARISONS.setdefault(base, {})
        for_base[id(other)] = (weakref.ref(other), comparison)
        for dead in [k for k, (ref, _) in for_base.items() if ref() is None]:
            del for_base[dead]
    return comparison


def show_differences(comparison: Comparison, step: int, key: str, prefix: str) -> None:
    """The differing steps, paged, each with the fields that differ both ways; click to select."""
    diffs = comparison.differences
    pages = max(1, -(-len(diffs) // DIFF_PAGE))
    page_key = f"{prefix}_diff_page"
    page = 1
    if pages > 1:
        page = int(
            st.number_input("Page of differing steps", 1, pages, key=page_key, width=180) or 1
        )
    shown = diffs[(page - 1) * DIFF_PAGE : page * DIFF_PAGE]
    frame = clip_frame(pd.DataFrame([d.row() for d in shown]))
    frame = frame.loc[:, (frame != "").any(axis=0)]  # only the fields that differ somewhere

    def mark(row: pd.Series) -> list[str]:
        return ["background-color: #cfe2ff" if row["step"] == step else ""] * len(row)

    table_key = f"{prefix}_diff_table_{page}_{len(diffs)}"
    steps = [d.base_step for d in shown]

    def clicked() -> None:
        state = st.session_state.get(table_key)
        rows = list(getattr(getattr(state, "selection", None), "rows", []) or [])
        if rows and steps[rows[0]] is not None:
            select_step(key, int(steps[rows[0]]))  # type: ignore[arg-type]

    st.dataframe(
        frame.style.apply(mark, axis=1),
        hide_index=True,
        height=ROW_HEIGHT * (len(shown) + 1) + 3,
        key=table_key,
        on_select=clicked,
        selection_mode="single-row",
        alt="Steps whose report differs under the new settings, made and new values side by side",
        column_config={"step": st.column_config.NumberColumn("step", pinned=True, width=56)},
    )


def show_call_fates(
    made: Timeline, other: Timeline, step: int, other_step: int | None = None
) -> None:
    """For the selected step: is each call still in the buffer under the other settings?

    This is "would a window of 50 have kept this call?", read off both buffers.
    """
    twin = step if other_step is None else other_step
    every = call_fates(made.buffer_after(step), other.buffer_after(twin))
    if not every:
        return
    # One pass: those that fare differently first, then the rest (a list lookup per call
    # made this quadratic: 14 s at 2,000 calls).
    differ: list[CallFate] = []
    same: list[CallFate] = []
    for f in every:
        fared = (f.in_base, f.answered_base) != (f.in_other, f.answered_other)
        (differ if fared else same).append(f)
    fates = (differ + same)[:FATE_ROWS]
    st.markdown(f"**Tool calls in the buffer after step {step}**")
    more = (
        f"; the first {FATE_ROWS} are listed, those that differ first"
        if len(every) > FATE_ROWS
        else ""
    )
    st.caption(
        f"{len(every)} call(s), {len(differ)} fare differently under the other settings{more}."
    )
    st.dataframe(
        height=ROW_HEIGHT * (len(fates) + 1) + 3,
        data=pd.DataFrame(
            [
                {
                    "call id": f.call_id,
                    "as made": "kept" if f.in_base else "gone",
                    "answered (made)": f.answered_base,
                    "new settings": "kept" if f.in_other else "gone",
                    "answered (new)": f.answered_other,
                    "verdict": f.verdict,
                }
                for f in fates
            ]
        ),
        hide_index=True,
        alt="Each tool call: in the buffer as made and under the new settings",
    )


def _make_current(window: int, refire: str) -> None:
    """The person picked the what-if settings: they become the replay's own."""
    st.session_state.r_window = window
    st.session_state.r_refire = refire
    st.session_state.r_compare = False


def show_replay_compare(
    timeline: Timeline,
    step: int,
    data: bytes,
    name: str,
    scenario: Scenario | None,
    per: str,
    refire: str,
    window: int,
    conversation: int | None = None,
) -> None:
    """What-if window and re-fire on the Replay page: the other timeline, what differs, why.

    ``conversation`` picks one of a file holding several (from 0)."""
    if not fits_in_session(len(timeline.steps), len(timeline.steps)):
        # Both replays must stay cached, or every rerun would replay them again.
        st.info(
            f"Compare needs two replays of {len(timeline.steps):,} steps kept at once; this "
            f"session keeps at most {SESSION_STEP_BUDGET:,} steps. Compare a shorter part of "
            "the recording, or compare windows with the CLI.",
            icon=":material/compare_arrows:",
        )
        return
    with st.container(border=True, key="r_compare_box"):
        row = st.container(horizontal=True, vertical_alignment="bottom")
        # Not bound by Streamlit (see inspector_ui.urlparams.seed_from_url): checked, seeded
        # from the URL once, and written back by hand.
        check_url(
            [
                Param(
                    "r_cmp_window",
                    "a window size (0 to 1,000,000)",
                    50,
                    whole_number(0, MAX_WINDOW),
                )
            ]
        )
        seed_from_url("r_cmp_window", int)
        st.session_state.setdefault("r_cmp_window", CMP_DEFAULT)
        other_window = int(
            row.number_input(
                "What-if window (0 = no cap)",
                min_value=0,
                max_value=MAX_WINDOW,
                step=1,
                key="r_cmp_window",
                width=220,
            )
        )
        mirror_to_url("r_cmp_window", other_window, CMP_DEFAULT)
        other_refire = str(
            row.selectbox(
                "What-if re-fire",
                list(REFIRE_LABELS),
                format_func=REFIRE_LABELS.__getitem__,
                key="r_cmp_refire",
                bind="query-params",
                width=260,
            )
            or "none"
        )
        if scenario is not None:
            base_refire = refire
            made = Settings.of(scenario, base_refire)  # type: ignore[arg-type]
            wanted = Settings(
                other_window,
                made.scope,
                made.key,
                made.context,
                other_refire,  # type: ignore[arg-type]
            )
            other = cached_replay(dump_scenario(with_settings(scenario, wanted)), other_refire)
            appends = scenario_appends(scenario)
        else:
            conv = cached_conversation(data, name, conversation)
            other = cached_conversation_replay(
                data, name, per, other_refire, other_window, conversation=conversation
            )
            appends = (
                conv.messages
                if per == "message"
                else [[conv.messages[k] for k in g] for g in conv.turns]
            )
        comparison = cached_comparison(
            timeline,
            other,
            plan_keys(appends, refire),  # type: ignore[arg-type]
            plan_keys(appends, other_refire),  # type: ignore[arg-type]
        )
        st.caption(
            f"{md(Path(name).name)} as replayed: window {window or 'none'}, "
            f"{REFIRE_LABELS.get(refire, refire)}. What if: window {other_window or 'none'}, "
            f"{REFIRE_LABELS.get(other_refire, other_refire)}."
        )
        if comparison.differences:
            st.warning(md(comparison.summary()), icon=":material/compare_arrows:")
        else:
            st.success(md(comparison.summary()), icon=":material/check:")
        row.button(
            "Make these settings current",
            key="r_adopt",
            on_click=_make_current,
            args=(other_window, other_refire),
            icon=":material/done:",
            disabled=(other_window, other_refire) == (window, refire),
        )
        show_what_if(
            timeline,
            other,
            f"window {other_window or 'none'}, {REFIRE_LABELS.get(other_refire, other_refire)}",
        )
        if comparison.differences:
            show_differences(comparison, step, "rstep", "r")
        twin = _twin_step(comparison, step, refire == other_refire)
        if twin is not None:
            show_call_fates(timeline, other, step, twin)


def _twin_step(comparison: Comparison, step: int, same_plan: bool) -> int | None:
    """The other timeline's step for ``step`` (same number when the plans match)."""
    if step <= 0:
        return None
    for diff in comparison.differences:
        if diff.base_step == step:
            return diff.other_step
    return step if same_plan else None
