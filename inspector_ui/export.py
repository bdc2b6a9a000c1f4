"""Downloads: the timeline (CSV, JSON lines) and the session as a scenario file.

Exports are built only when their button is pressed (deferred ``data``)
and written line by line to a temporary file, so building one never holds
the text and its pieces at once. The JSON lines carry each
step's report and events (its delta, as the CLI's ``--json``); the whole
buffer per line is offered only while that stays small (:data:`BUFFER_EXPORT_ENTRIES`),
because its size grows with steps x buffer (2 GB for the long sample).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable

import streamlit as st

from flowdrop_core.replay import Timeline
from flowdrop_core.scenario import dump_scenario
from inspector_ui.cache import rows_of
from inspector_ui.display import timeline_frame

#: Past this many entries summed over every step's buffer, no export carries the buffers.
BUFFER_EXPORT_ENTRIES = 200_000


def spool(lines: Iterable[str]) -> bytes:
    """``lines`` (each without its newline) as one download, built through a temporary file.

    Each line is written as it is produced, so building the export holds one
    line at a time; the file is read back once, as the bytes Streamlit
    serves (it keeps a download in memory).
    """
    with tempfile.TemporaryFile() as out:
        for line in lines:
            out.write(line.encode("utf-8"))
            out.write(b"\n")
        out.seek(0)
        return out.read()


def timeline_json_lines(timeline: Timeline, *, with_buffers: bool = False) -> bytes:
    """The timeline as JSON lines: one object per step (report and events), buffers if asked."""
    return spool(timeline.to_json_lines(include_messages=with_buffers))


def buffer_entries(timeline: Timeline) -> int:
    """Entries summed over the buffer after every step: the size of a with-buffers export."""
    return sum(record.count for record in timeline.steps)


def show_exports(timeline: Timeline, name: str, prefix: str) -> None:
    """Download the timeline (CSV, JSON lines) and the session as a scenario file."""
    stem = name or "timeline"

    def csv_data() -> bytes:
        frame = timeline_frame(rows_of(timeline))
        return spool(frame.to_csv(index=False).splitlines())

    def scenario_data() -> str:
        return dump_scenario(timeline.to_scenario(stem))

    with_buffers = buffer_entries(timeline) <= BUFFER_EXPORT_ENTRIES
    cols = st.columns(4 if with_buffers else 3)
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
        data=lambda: timeline_json_lines(timeline),
        file_name=f"{stem}-timeline.jsonl",
        mime="application/jsonl",
        icon=":material/data_object:",
        key=f"{prefix}_dl_json",
        on_click="ignore",
        help="One object per step: the report and its events (what changed), as `--json`.",
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
    if with_buffers:
        cols[3].download_button(
            "JSON lines with buffers",
            data=lambda: timeline_json_lines(timeline, with_buffers=True),
            file_name=f"{stem}-timeline-buffers.jsonl",
            mime="application/jsonl",
            icon=":material/data_array:",
            key=f"{prefix}_dl_json_buffers",
            on_click="ignore",
            help="Each line also carries the whole buffer after the step.",
        )
    st.caption(
        "The scenario file holds the starting buffer, the settings and every append, with "
        "`expect` set to what happened; load it on the Replay page or run it with "
        "`flowdrop-buffer check FILE`."
        + (
            ""
            if with_buffers
            else f" The buffers add up to {buffer_entries(timeline):,} entries over all steps, "
            "too many for one download; `flowdrop-buffer replay FILE --json --buffer` "
            "writes them from the command line."
        )
    )
