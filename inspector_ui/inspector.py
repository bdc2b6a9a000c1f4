"""The centre of the Playground and the Replay page: metrics, then one tab per view."""

from __future__ import annotations

import streamlit as st

from flowdrop_core.replay import Timeline
from inspector_ui.calls import show_calls
from inspector_ui.export import show_exports
from inspector_ui.navigator import show_nav_table, show_navigator
from inspector_ui.provider import show_provider_view
from inspector_ui.step import show_metrics, show_step_detail
from inspector_ui.timeline import show_chart

TABS = ["Timeline", "Step before / after", "Tool calls", "Provider view", "Export"]


def show_inspector(timeline: Timeline, step: int, *, prefix: str, name: str, key: str) -> None:
    """The centre of the playground and the replay page: metrics, navigator, timeline, detail.

    ``key`` is the session-state key of the selected step (the navigator moves it).

    Only the open tab runs (``on_change="rerun"``): the step views cost
    O(buffer), so a slider move on the Timeline tab never derives them.
    The open tab is ``st.session_state[f"{prefix}_tab"]``.
    """
    show_metrics(timeline, step)
    kind = show_navigator(timeline, step, key, prefix) if timeline.steps else None
    tab_timeline, tab_step, tab_calls, tab_provider, tab_export = st.tabs(
        TABS, key=f"{prefix}_tab", on_change="rerun"
    )
    if tab_timeline.open:
        with tab_timeline:
            if timeline.steps:
                show_nav_table(timeline, step, key, prefix, kind)
            show_chart(timeline, step)
    if tab_step.open:
        with tab_step:
            show_step_detail(timeline, step, prefix)
    if tab_calls.open:
        with tab_calls:
            show_calls(timeline, key, prefix)
    if tab_provider.open:
        with tab_provider:
            show_provider_view(timeline, step)
    if tab_export.open:
        with tab_export:
            show_exports(timeline, name, prefix)
