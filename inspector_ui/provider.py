"""MEM-5: the provider view of the selected step, with its lint findings."""

from __future__ import annotations

import streamlit as st

from flowdrop_core import lint, normalize_report
from flowdrop_core.provider import Finding, NormalizeReport
from flowdrop_core.replay import Timeline
from flowdrop_core.view import clip_value, findings_frame
from inspector_ui.cache import per_step

PROVIDER_TAIL = 50  # normalized messages drawn in the provider view


def provider_view(timeline: Timeline, step: int) -> tuple[int, NormalizeReport, list[Finding]]:
    """The step's buffer size, its MEM-5 provider view and its lint findings (one buffer rebuild)."""
    entries = timeline.buffer_after(step)
    return len(entries), normalize_report(entries), lint(entries)


def show_provider_view(timeline: Timeline, step: int) -> None:
    """MEM-5: the normalized buffer a provider would get, its drop count and lint findings."""
    size, report, findings = per_step(
        timeline, "provider", step, lambda: provider_view(timeline, step)
    )
    cols = st.columns(3)
    cols[0].metric("entries in buffer", size)
    cols[1].metric("messages sent to provider", len(report.messages))
    cols[2].metric("dropped (MEM-5)", report.dropped)
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
    st.json(clip_value(shown), expanded=2 if len(shown) <= 20 else 1)
