"""The selected step: its MEM-14 metrics and its buffer before and after, with events."""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from flowdrop_core.events import Event
from flowdrop_core.inspect.labels import step_label
from flowdrop_core.inspect.rows import count_flag, count_parts
from flowdrop_core.replay import Timeline
from inspector_ui.cache import per_step
from inspector_ui.display import clip_text, event_frame, focus
from inspector_ui.entries import Focused, show_entries, show_focused
from inspector_ui.plain import md, show_text


def show_metrics(timeline: Timeline, step: int) -> None:
    """The MEM-14 report of the selected step: count (with its change), appended, appended_any."""
    cols = st.columns(4)
    if step == 0:
        start = timeline.buffer_after(0)
        cols[0].metric("count", len(start), help="Entries in the starting buffer.")
        cols[1].metric("appended", "n/a")
        cols[2].metric("appended_any", "n/a")
        cols[3].metric("resolved_scope_id", "n/a")
        return
    record = timeline.steps[step - 1]
    cols[0].metric(
        "count",
        record.count,
        delta=record.count_delta,
        delta_color="off",
        help="Entries in the buffer after the append. Its change is NOT what was appended (MEM-14).",
    )
    cols[1].metric(
        "appended",
        record.appended,
        help="Incoming messages that became new entries (MEM-14).",
    )
    cols[2].metric("appended_any", "true" if record.appended_any else "false")
    cols[3].metric(
        "resolved_scope_id",
        "refused" if record.refused else md(clip_text(repr(record.resolved_scope_id), 80)[0]),
        help="The storage slot's scope id; a refused identity scope touches no storage (MEM-7).",
    )
    if record.refused:
        st.error(
            f"Refused: {md(record.refusal_reason or 'the identity scope has no usable id')}. "
            "The buffer reads empty; count 0, appended 0 (MEM-7, MEM-14 point 4).",
            icon=":material/block:",
        )
    else:
        parts = count_parts(record)
        st.caption(
            f"Δcount {record.count_delta:+d} = {parts.appended} appended + {parts.inserted} "
            f"placeholder(s) inserted - {parts.evicted} evicted"
            + (f"; {parts.replaced} replaced in place" if parts.replaced else "")
            + (f"; {parts.dropped} duplicate(s) dropped" if parts.dropped else "")
            + "."
        )
        flag = count_flag(record)
        if flag:
            st.warning(
                f"MEM-14: {md(flag)}. The count changed by {record.count_delta:+d} while "
                f"{record.appended} incoming message(s) became new entries; only `appended` "
                "tells whether the turn landed.",
                icon=":material/visibility:",
            )


@dataclass(frozen=True)
class StepView:
    """What the step tab draws of one step: the focused tagged entries and the sizes."""

    before: list[Focused]
    before_count: int
    after: list[Focused]
    after_count: int
    dropped: list[Event]


def step_view(timeline: Timeline, step: int) -> StepView:
    """``Timeline.tagged(step)`` reduced to what is drawn (the memo then holds little)."""
    before, after, dropped = timeline.tagged(step)
    return StepView(focus(before), len(before), focus(after), len(after), dropped)


def show_step_detail(timeline: Timeline, step: int, prefix: str) -> None:
    """Buffer before and after the selected step, tagged, with the events and their rules."""
    mode = st.segmented_control(
        "Show entries as",
        ["Chat", "JSON"],
        default="Chat",
        required=True,
        key=f"{prefix}_mode",
    )
    if step == 0:
        st.markdown("**Starting buffer**")
        show_entries(
            [(e, "kept") for e in timeline.buffer_after(0)],
            mode or "Chat",
            "Empty buffer.",
            key=f"{prefix}_start",
        )
        return
    view = per_step(timeline, "tagged", step, lambda: step_view(timeline, step))
    record = timeline.steps[step - 1]
    st.markdown(f"**Incoming at step {step}**")
    readable = step_label(record.incoming, width=200)
    show_text(readable + (f"  ({record.label})" if record.label else ""), f"{prefix}_label")
    show_entries(
        [(m, "incoming") for m in record.incoming],
        mode or "Chat",
        "Nothing incoming.",
        key=f"{prefix}_incoming",
    )
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Before** ({view.before_count} entries)")
        show_focused(view.before, mode or "Chat", "Empty buffer.", key=f"{prefix}_before")
    with right:
        st.markdown(f"**After** ({view.after_count} entries)")
        show_focused(
            view.after,
            mode or "Chat",
            "Empty buffer (refused scope)." if record.refused else "Empty buffer.",
            key=f"{prefix}_after",
        )
    if view.dropped:
        st.markdown(f"**Dropped as duplicates** ({len(view.dropped)})")
        st.dataframe(event_frame(view.dropped), hide_index=True, alt="Incoming messages dropped")
    st.markdown("**Events** (each cites its rule)")
    st.dataframe(
        event_frame(record.events),
        hide_index=True,
        alt="The engine's decisions for this step, with their rule ids",
        column_config={"reason": st.column_config.TextColumn("reason", width="large")},
    )
