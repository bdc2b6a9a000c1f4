"""MEM-5: the provider view of the selected step, with its lint findings."""

from __future__ import annotations

import streamlit as st

from flowdrop_core import lint, normalize_report
from flowdrop_core.replay import Timeline
from flowdrop_core.view import findings_frame

PROVIDER_TAIL = 50  # normalized messages drawn in the provider view


def show_provider_view(timeline: Timeline, step: int) -> None:
    """MEM-5: the normalized buffer a provider would get, its drop count and lint findings."""
    entries = timeline.buffer_after(step)
    report = normalize_report(entries)
    cols = st.columns(3)
    cols[0].metric("entries in buffer", len(entries))
    cols[1].metric("messages sent to provider", len(report.messages))
    cols[2].metric("dropped (MEM-5)", report.dropped)
    findings = lint(entries)
    st.markdown("**Lint findings** (what a provider would reject, and the repair)")
    if findings:
        st.dataframe(findings_frame(findings), hide_index=True, alt="MEM-5 lint findings")
    else:
        st.success("No findings: a provider accepts this buffer as is.", icon=":material/check:")
    shown = report.messages[-PROVIDER_TAIL:]
    st.markdown(
        "**Normalized messages** (provider-flat"
        + (
            f", last {len(shown)} of {len(report.messages)}"
            if len(shown) < len(report.messages)
            else ""
        )
        + ")"
    )
    st.json(shown, expanded=2 if len(shown) <= 20 else 1)
