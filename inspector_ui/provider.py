"""MEM-5: the provider view of the selected step, with its lint findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st

from flowdrop_core import normalize_report
from flowdrop_core.provider import Finding
from flowdrop_core.replay import Timeline
from inspector_ui.cache import per_step
from inspector_ui.display import clip_value, findings_frame, lint_of

PROVIDER_TAIL = 50  # normalized messages drawn in the provider view


@dataclass(frozen=True)
class ProviderView:
    """What the provider tab shows of one step: sizes, the tail of the view, the findings."""

    entries: int
    sent: int
    dropped: int
    tail: list[dict[str, Any]]
    findings: list[Finding]


def provider_view(timeline: Timeline, step: int) -> ProviderView:
    """The step's MEM-5 view, from one buffer rebuild and one normalization.

    ``lint`` is the report's findings in buffer order
    (:func:`inspector_ui.display.lint_of`), so the buffer is normalized once,
    not twice. Only what is drawn is kept (the memo holds a few steps).
    """
    entries = timeline.buffer_after(step)
    report = normalize_report(entries)
    return ProviderView(
        entries=len(entries),
        sent=len(report.messages),
        dropped=report.dropped,
        tail=report.messages[-PROVIDER_TAIL:],
        findings=lint_of(report),
    )


def show_provider_view(timeline: Timeline, step: int) -> None:
    """MEM-5: the normalized buffer a provider would get, its drop count and lint findings."""
    view = per_step(timeline, "provider", step, lambda: provider_view(timeline, step))
    cols = st.columns(3)
    cols[0].metric("entries in buffer", view.entries)
    cols[1].metric("messages sent to provider", view.sent)
    cols[2].metric("dropped (MEM-5)", view.dropped)
    st.markdown("**Lint findings** (what a provider would reject, and the repair)")
    if view.findings:
        frame = findings_frame(view.findings).rename(columns={"entry": "buffer position (0-based)"})
        st.dataframe(frame, hide_index=True, alt="MEM-5 lint findings")
    else:
        st.success(
            f"No findings: a provider accepts the buffer GR-MEM built, as it stands after step "
            f"{step}. What is wrong with the recording itself is in the Recording health panel "
            "above.",
            icon=":material/check:",
        )
    shown = view.tail
    st.markdown(
        "**Normalized messages** (provider-flat"
        + (f", last {len(shown)} of {view.sent}" if len(shown) < view.sent else "")
        + ")"
    )
    first = view.sent - len(shown)
    labelled = {f"provider message {first + k} (0-based)": m for k, m in enumerate(shown)}
    st.json(clip_value(labelled), expanded=2 if len(shown) <= 20 else 1)
