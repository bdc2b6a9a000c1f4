"""The centre of the Playground and the Replay page: metrics, then one tab per view."""

from __future__ import annotations

import streamlit as st

from flowdrop_core.replay import Timeline
from inspector_ui.export import show_exports
from inspector_ui.provider import show_provider_view
from inspector_ui.step import show_metrics, show_step_detail
from inspector_ui.timeline import show_chart, show_timeline_table


def show_inspector(timeline: Timeline, step: int, *, prefix: str, name: str) -> None:
    """The centre of the playground and the replay page: metrics, timeline, detail, exports."""
    show_metrics(timeline, step)
    tab_timeline, tab_step, tab_provider, tab_export = st.tabs(
        ["Timeline", f"Step {step} before / after", "Provider view", "Export"]
    )
    with tab_timeline:
        show_timeline_table(timeline, step, prefix)
        show_chart(timeline, step)
    with tab_step:
        show_step_detail(timeline, step, prefix)
    with tab_provider:
        show_provider_view(timeline, step)
    with tab_export:
        show_exports(timeline, name, prefix)
