"""The timeline's chart (the step selector and the table are the navigator's)."""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from flowdrop_core.replay import Timeline
from inspector_ui.cache import per_step, rows_of
from inspector_ui.display import chart_frame

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
