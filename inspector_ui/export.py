"""Downloads: the timeline (CSV, JSON lines) and the session as a scenario file."""

from __future__ import annotations

import streamlit as st

from flowdrop_core.replay import Timeline
from flowdrop_core.scenario import dump_scenario
from flowdrop_core.view import timeline_frame
from inspector_ui.cache import rows_of


def show_exports(timeline: Timeline, name: str, prefix: str) -> None:
    """Download the timeline (CSV, JSON lines) and the session as a scenario file."""
    stem = name or "timeline"

    def csv_data() -> str:
        return timeline_frame(rows_of(timeline)).to_csv(index=False)

    def json_data() -> str:
        return "\n".join(timeline.to_json_lines(include_messages=True)) + "\n"

    def scenario_data() -> str:
        return dump_scenario(timeline.to_scenario(stem))

    cols = st.columns(3)
    cols[0].download_button(
        "Timeline CSV",
        data=csv_data,
        file_name=f"{stem}-timeline.csv",
        mime="text/csv",
        icon=":material/table:",
        key=f"{prefix}_dl_csv",
        on_click="ignore",
    )
    cols[1].download_button(
        "Timeline JSON lines",
        data=json_data,
        file_name=f"{stem}-timeline.jsonl",
        mime="application/jsonl",
        icon=":material/data_object:",
        key=f"{prefix}_dl_json",
        on_click="ignore",
    )
    cols[2].download_button(
        "Scenario file",
        data=scenario_data,
        file_name=f"{stem}.json",
        mime="application/json",
        icon=":material/save:",
        key=f"{prefix}_dl_scenario",
        on_click="ignore",
    )
    st.caption(
        "The scenario file holds the starting buffer, the settings and every append, with "
        "`expect` set to what happened; load it on the Replay page or run it with "
        "`flowdrop-buffer check FILE`."
    )
