"""The timeline: the step selector, the paged table with MEM-14 rows marked, the chart."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from flowdrop_core.replay import Timeline
from flowdrop_core.view import chart_frame, clip_frame, page_count, page_of, timeline_frame
from inspector_ui.cache import per_step, rows_of

PAGE_SIZE = 25


def step_selector(timeline: Timeline, key: str, label: str = "Step") -> int:
    """A slider over the timeline (0 = the starting buffer), bound to the URL."""
    n = len(timeline.steps)
    if n == 0:
        st.session_state.pop(key, None)
        return 0
    current = st.session_state.get(key)
    if current is None and key in st.query_params:  # a copied link: ?step=N
        try:
            current = int(st.query_params[key])
            st.session_state[key] = current
        except ValueError:
            current = None
    seen = st.session_state.get(f"{key}_seen")  # timeline length on the last run
    if (
        not isinstance(current, int)
        or current > n
        or current < 0
        or (seen is not None and current == seen and n != seen)
    ):
        st.session_state[key] = n  # follow the newest step
    st.session_state[f"{key}_seen"] = n
    return int(
        st.slider(
            label,
            min_value=0,
            max_value=n,
            key=key,
            bind="query-params",
            help="0 is the starting buffer. The selected step is kept in the URL.",
        )
    )


def _mark_rows(row: Any) -> list[str]:
    color = "background-color: #fff3cd" if row["mem14_flag"] else ""
    return [color] * len(row)


def show_timeline_table(timeline: Timeline, step: int, prefix: str) -> None:
    """The timeline, paged, with MEM-14 rows marked."""
    rows = rows_of(timeline)
    flagged_only = st.toggle(
        "Only rows MEM-14 is about",
        key=f"{prefix}_flagged",
        help="Count unchanged but appended > 0, or count grew but appended is 0.",
    )
    if flagged_only:
        rows = [r for r in rows if r["mem14_flag"]]
    total = len(rows)
    pages = page_count(total, PAGE_SIZE)
    page_key = f"{prefix}_page"
    follow_key = f"{prefix}_page_for_step"
    # Follow the selected step to its page when the step changes.
    if not flagged_only and st.session_state.get(follow_key) != step:
        st.session_state[page_key] = page_of(step, PAGE_SIZE)
        st.session_state[follow_key] = step
    if st.session_state.get(page_key, 1) > pages:
        st.session_state[page_key] = pages
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    flagged = sum(1 for r in rows_of(timeline) if r["mem14_flag"])
    left.caption(
        f"{len(timeline.steps)} step(s); {flagged} marked for MEM-14 "
        "(highlighted). Page size "
        f"{PAGE_SIZE}."
    )
    page = right.number_input("Page", min_value=1, max_value=pages, step=1, key=page_key, width=140)
    shown = rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    frame = clip_frame(timeline_frame(shown))
    st.dataframe(
        frame.style.apply(_mark_rows, axis=1),
        hide_index=True,
        alt="Timeline: one row per append with its MEM-14 report",
        column_config={
            "step": st.column_config.NumberColumn("step", pinned=True, width="small"),
            "mem14_flag": st.column_config.TextColumn("MEM-14", width="medium"),
            "incoming": st.column_config.TextColumn("incoming", width="medium"),
            "count_delta": st.column_config.NumberColumn("count Δ", format="%+d"),
            "appended_any": st.column_config.CheckboxColumn("appended_any"),
            "refused": st.column_config.CheckboxColumn("refused"),
        },
        key=f"{prefix}_table",
    )


CHART_POINTS = 2_000  # steps drawn per line at most


def chart_data(timeline: Timeline) -> pd.DataFrame:
    """The chart's data, once per timeline: every step, or every k-th (and the last) past 2,000.

    The cumulative sum is taken over every step first, so thinning drops
    points, never appends; the table and the step views stay exact.
    """
    data = chart_frame(rows_of(timeline), start_count=len(timeline.buffer_after(0)))
    steps = len(timeline.steps)
    if steps > CHART_POINTS:
        k = -(-steps // CHART_POINTS)
        data = data[(data["step"] % k == 0) | (data["step"] == steps)].reset_index(drop=True)
    return data


def chart_spec(timeline: Timeline) -> dict[str, Any]:
    """The chart's lines as a Vega-Lite spec, built (and validated by Altair) once per timeline."""
    lines = (
        alt.Chart(chart_data(timeline))
        .mark_line(point=len(timeline.steps) <= 200, strokeWidth=2)
        .encode(
            x=alt.X("step:Q", title="step", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y("value:Q", title="entries"),
            color=alt.Color(
                "series:N",
                title=None,
                legend=alt.Legend(orient="top"),
                scale=alt.Scale(range=["#1f77b4", "#e4572e"]),
            ),
            strokeDash=alt.StrokeDash("series:N", legend=None),
            tooltip=["step:Q", "series:N", "value:Q"],
        )
    )
    return lines.to_dict()


def show_chart(timeline: Timeline, step: int) -> None:
    """count and cumulative appended per step; they part where MEM-14 matters.

    The lines are the same on every rerun of a timeline (built once); only
    the marker of the selected step is added per rerun, as a plain layer.
    """
    if not timeline.steps:
        return
    spec = per_step(timeline, "chart", 0, lambda: chart_spec(timeline))
    lines = {k: v for k, v in spec.items() if k not in ("$schema", "config", "datasets")}
    layers: list[dict[str, Any]] = [lines]
    if step > 0:
        layers.append(
            {
                "data": {"values": [{"step": step}]},
                "mark": {"type": "rule", "strokeDash": [4, 4]},
                "encoding": {"x": {"field": "step", "type": "quantitative"}},
            }
        )
    st.vega_lite_chart(
        {
            "layer": layers,
            "datasets": spec.get("datasets", {}),
            "height": 280,
            "title": "count vs cumulative appended",
        },
        width="stretch",
    )
