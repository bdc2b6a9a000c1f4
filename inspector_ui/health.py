"""The health panel: what is wrong with this recording, where, and what GR-MEM did about it.

Shown at the top of the Replay page and the Playground. The report itself is
:func:`flowdrop_core.inspect.health.health` (computed once per timeline and
length); this module lays it out: one verdict line, a picker that jumps to a
finding's step (brought into view, and the tool-call view filtered to its call
id), every finding in a table whose rows jump too (columns as wide as the
recording's places, kinds and call ids; a longer message ends with "…"), and a
box to paste a provider's error, which names the rule, says what each call id
it names is in this recording, and jumps to the messages that caused it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from flowdrop_core.inspect.health import KIND_TEXT, HealthFinding, HealthReport, health
from flowdrop_core.inspect.provider_errors import diagnose
from flowdrop_core.replay import Timeline
from inspector_ui.display import clip_frame, fit_cells, fit_width, shown
from inspector_ui.navigator import select_step
from inspector_ui.plain import md
from inspector_ui.scroll import request_scroll, scroll_if_requested

__all__ = [
    "FINDING_COLUMNS",
    "cached_health",
    "finding_config",
    "finding_label",
    "show_health_panel",
]

ROW_HEIGHT = 35
TABLE_ROWS = 10
PICKER_LIMIT = 500

_REPORTS: weakref.WeakKeyDictionary[Timeline, tuple[Any, HealthReport]] = (
    weakref.WeakKeyDictionary()
)
_LOCK = threading.Lock()


def cached_health(
    timeline: Timeline, keys: Sequence[tuple[int, int]] | None = None
) -> HealthReport:
    """The timeline's health report, once per (timeline, its length, re-fire plan)."""
    stamp = (len(timeline.steps), tuple(keys) if keys is not None else None)
    with _LOCK:
        hit = _REPORTS.get(timeline)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    report = health(timeline, keys)
    with _LOCK:
        _REPORTS[timeline] = (stamp, report)
    return report


def finding_label(finding: HealthFinding) -> str:
    """One finding in one line of plain text: the step it opens, what, what GR-MEM did, where.

    ``step 6 · unanswered call call_Rf4m · healed there · messages[4], appended at step 5``:
    the place is the file's own (``messages[4]``), as in ``doctor``'s line.
    """
    cid = f" {finding.call_id}" if finding.call_id else ""
    what = f"{KIND_TEXT.get(finding.kind, finding.kind)}{cid}"
    at = f"step {finding.jump_step}" if finding.jump_step is not None else "no step"
    did: str = finding.action if finding.action != "nothing" else "GR-MEM did nothing"
    if finding.action_step is not None and finding.action_step != finding.step:
        did += " there"
    came = ""
    if finding.index is not None:
        came = f" · {finding.origin or f'message {finding.index} (0-based)'}"
        if finding.step is not None and finding.step != finding.jump_step:
            came += f", appended at step {finding.step}"
    return f"{at} · {what} · {did}{came}"


#: Column order of the findings table: one place in the file, the step, then the rest.
FINDING_COLUMNS = [
    "step (1-based)",
    "in the file",
    "kind",
    "rule",
    "call id",
    "GR-MEM did",
    "at step",
    "buffer position (0-based)",
    "provider rejects",
    "message",
]

#: The table's width in the panel at 1280 px (selection column left out); the message takes
#: what the other columns leave, at least MESSAGE_LEAST px, and a longer one ends with "…"
#: (the picked finding shows it whole).
TABLE_PX = 1010
MESSAGE_LEAST = 220


def finding_config(findings: Sequence[HealthFinding]) -> dict[str, Any]:
    """Column widths from the findings shown: every place, kind and call id fits whole."""
    config = _fixed_config(findings)
    used = sum(int(c["width"]) for c in config.values())
    config["message"] = st.column_config.TextColumn(
        "message", width=message_px(used), help="Pick the finding above to read it whole"
    )
    return config


def message_px(used: int) -> int:
    """The message column's width when the other columns take ``used`` px."""
    return max(MESSAGE_LEAST, TABLE_PX - used)


def _fixed_config(findings: Sequence[HealthFinding]) -> dict[str, Any]:
    return {
        "step (1-based)": st.column_config.NumberColumn(
            "step (1-based)", width=92, pinned=True, help="The replay step, 1-based"
        ),
        "in the file": st.column_config.TextColumn(
            "in the file",
            width=fit_width((f.origin for f in findings), least=80, most=260),
            help="Where the message is in the file you opened (for Anthropic, the "
            "messages[i] its errors name)",
        ),
        "kind": st.column_config.TextColumn(
            "kind", width=fit_width((f.kind for f in findings), least=60)
        ),
        "rule": st.column_config.TextColumn("rule", width=60),
        "call id": st.column_config.TextColumn(
            "call id", width=fit_width((f.call_id for f in findings), least=60)
        ),
        "GR-MEM did": st.column_config.TextColumn("GR-MEM did", width=82),
        "at step": st.column_config.NumberColumn("at step", width=56, help="Where GR-MEM did it"),
        "buffer position (0-based)": st.column_config.NumberColumn(
            "buffer pos. (0-based)", width=140, help="The buffer position concerned, 0-based"
        ),
        "provider rejects": st.column_config.CheckboxColumn(
            "rejects", width=60, help="A provider would reject the recording because of it"
        ),
    }


def _row(f: HealthFinding) -> dict[str, Any]:
    return {
        "step (1-based)": f.step,
        "in the file": f.origin if f.index is not None else "",
        "kind": f.kind,
        "rule": f.rule,
        "call id": f.call_id or "",
        "GR-MEM did": f.action,
        "at step": f.action_step,
        "buffer position (0-based)": f.position,
        "provider rejects": f.rejects,
        "message": f.message,
    }


def _go(key: str, prefix: str, finding: HealthFinding) -> None:
    """Jump to a finding: its step, brought into view, and the tool-call view on its call id."""
    if finding.jump_step is not None:
        select_step(key, finding.jump_step)
        request_scroll(prefix)
    st.session_state[f"{prefix}_calls_id"] = finding.call_id or ""
    st.session_state[f"{prefix}_calls_status"] = None


def _open_calls(prefix: str, finding: HealthFinding) -> None:
    """Open the Tool calls tab on the finding's call id (its lifecycle row)."""
    st.session_state[f"{prefix}_calls_id"] = finding.call_id or ""
    st.session_state[f"{prefix}_calls_status"] = None
    st.session_state[f"{prefix}_tab"] = "Tool calls"


def _picked(key: str, prefix: str, picker: str, findings: list[HealthFinding]) -> None:
    chosen = st.session_state.get(picker)
    if isinstance(chosen, int) and 0 <= chosen < len(findings):
        _go(key, prefix, findings[chosen])


def _table_clicked(key: str, prefix: str, table_key: str, shown: list[HealthFinding]) -> None:
    state = st.session_state.get(table_key)
    rows = list(getattr(getattr(state, "selection", None), "rows", []) or [])
    if rows and 0 <= rows[0] < len(shown):
        _go(key, prefix, shown[rows[0]])


def show_health_panel(
    timeline: Timeline,
    key: str,
    prefix: str,
    keys: Sequence[tuple[int, int]] | None = None,
) -> HealthReport:
    """The panel (see the module doc); returns the report for the page's other views."""
    report = cached_health(timeline, keys)
    findings = report.findings
    with st.container(border=True, key=f"{prefix}_health"):
        st.markdown("**Recording health**")
        if not findings:
            st.success(md(report.summary()), icon=":material/health_and_safety:")
        elif report.provider_rejects:
            st.error(md(report.summary()), icon=":material/report:")
        else:
            st.warning(md(report.summary()), icon=":material/warning:")
        if findings:
            _show_findings(report, key, prefix)
        _show_paste(report, key, prefix)
    # after a jump: the step's caption (the timeline tab), else its slider, in view
    scroll_if_requested(prefix, [".st-key-nav_reasons", f".st-key-{key}"])
    return report


def _show_findings(report: HealthReport, key: str, prefix: str) -> None:
    findings = report.findings
    picker = f"{prefix}_finding"
    offered = findings[:PICKER_LIMIT]
    more = f" (the first {PICKER_LIMIT} of {len(findings)})" if len(findings) > PICKER_LIMIT else ""
    st.selectbox(
        f"Go to a finding{more}",
        list(range(len(offered))),
        index=None,
        format_func=lambda k: shown(finding_label(offered[k])),
        key=picker,
        on_change=_picked,
        args=(key, prefix, picker, offered),
        placeholder="Pick a finding to jump to its step",
        help="Jumps to the step where GR-MEM acted on it (else where the message came in) and "
        "filters the Tool calls tab to its call id, and brings the step into view. Steps are "
        "1-based; a place is named as your file names it (messages[4], line 5); buffer "
        "positions are 0-based.",
    )
    chosen = st.session_state.get(picker)
    if isinstance(chosen, int) and 0 <= chosen < len(offered):
        st.text(shown(f"{offered[chosen].line}\n{offered[chosen].message}"))
    if isinstance(chosen, int) and 0 <= chosen < len(offered) and offered[chosen].call_id:
        st.button(
            f"Show call {md(offered[chosen].call_id)} in the Tool calls tab",
            key=f"{prefix}_finding_calls",
            on_click=_open_calls,
            args=(prefix, offered[chosen]),
            icon=":material/build:",
        )
    with st.expander(f"Every finding ({len(findings)})", expanded=False):
        page_key = f"{prefix}_health_page"
        pages = max(1, -(-len(findings) // TABLE_ROWS))
        page = 1
        if pages > 1:
            page = int(st.number_input("Page", 1, pages, key=page_key, width=140) or 1)
        on_page = findings[(page - 1) * TABLE_ROWS : page * TABLE_ROWS]
        frame = clip_frame(pd.DataFrame([_row(f) for f in on_page], columns=FINDING_COLUMNS))
        config = finding_config(on_page)
        frame = fit_cells(frame, {"message": int(config["message"]["width"])})
        table_key = f"{prefix}_health_table_{page}_{len(findings)}"
        st.dataframe(
            frame,
            hide_index=True,
            height=ROW_HEIGHT * (len(on_page) + 1) + 3,
            key=table_key,
            on_select=lambda: _table_clicked(key, prefix, table_key, on_page),
            selection_mode="single-row",
            alt="Every finding of the recording: where, kind, rule, call id, what GR-MEM did",
            column_config=config,
        )


def _show_paste(report: HealthReport, key: str, prefix: str) -> None:
    """Paste the provider's error: its rule, and a jump to each message that caused it."""
    with st.expander("Paste the provider's error", expanded=False):
        text = st.text_area(
            "The error a provider returned for this history",
            key=f"{prefix}_perr",
            height=90,
            placeholder="e.g. messages.20: `tool_use` ids were found without `tool_result` "
            "blocks immediately after: toolu_01...",
        )
        if not text or not text.strip():
            return
        found = diagnose(text, report)
        if found is None:
            st.info(
                "Not an error this inspector knows: it reads OpenAI's, Anthropic's, Gemini's "
                "and Bedrock's tool-history errors.",
                icon=":material/help:",
            )
            return
        st.warning(md(found.explain()), icon=":material/report:")
        for k, cause in enumerate(found.findings[:5]):
            if cause.jump_step is None:
                continue
            st.button(
                f"Go to {md(finding_label(cause))}",
                key=f"{prefix}_perr_go_{k}",
                on_click=_go,
                args=(key, prefix, cause),
                icon=":material/arrow_forward:",
            )
        for k, other in enumerate(found.others[:5]):  # offered as what they are: other calls
            if other.jump_step is None:
                continue
            st.button(
                f"Not the call named, another of this kind: go to {md(finding_label(other))}",
                key=f"{prefix}_perr_other_{k}",
                on_click=_go,
                args=(key, prefix, other),
                icon=":material/arrow_forward:",
                type="tertiary",
            )
