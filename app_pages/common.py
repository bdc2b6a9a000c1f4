"""Shared UI of the inspector pages: cached library calls and the timeline view.

Everything shown is computed by ``flowdrop_core`` (replay, events, provider
view); this module only caches those calls and lays out what they return.
Message content is shown with ``st.text`` / ``st.json`` / ``st.dataframe``,
never as Markdown or HTML.
"""

from __future__ import annotations

import hashlib
import json
import threading
import weakref
from collections import OrderedDict
from typing import Any

import altair as alt
import streamlit as st

from flowdrop_core import lint, normalize_report
from flowdrop_core.importers import ImportedConversation, load_conversation
from flowdrop_core.inspect.labels import entry_calls, step_label
from flowdrop_core.replay import CheckResult, Timeline, check, replay, replay_conversation
from flowdrop_core.scenario import ScenarioConfig, dump_scenario, load_scenario, parse_scenario
from flowdrop_core.view import (
    ROLE_AVATARS,
    SampleScenario,
    chart_frame,
    entry_call_ids,
    entry_text,
    event_frame,
    findings_frame,
    focus,
    md_escape,
    sample_scenarios,
    timeline_frame,
)

PLAYGROUND = "app_pages/playground.py"
PROVIDER_TAIL = 50  # normalized messages drawn in the provider view
#: Tag colours for st.badge (fixed vocabulary from Timeline.tagged).
TAG_COLORS = {
    "kept": "gray",
    "new": "green",
    "evicted": "red",
    "replaced": "violet",
    "placeholder inserted": "orange",
}


# --------------------------------------------------------------------------- caching


@st.cache_data(max_entries=32, show_spinner=False)
def cached_conversation(data: bytes, name: str) -> ImportedConversation:
    """Parse uploaded or sample bytes once per (content, name)."""
    return load_conversation(data, name=name)


@st.cache_data(max_entries=4, show_spinner=False)
def cached_samples(stamp: tuple[tuple[str, float], ...]) -> list[SampleScenario]:
    """The sample scenarios; ``stamp`` (names and mtimes) invalidates on edits."""
    return sample_scenarios()


def samples() -> list[SampleScenario]:
    from flowdrop_core.view import SAMPLE_DIR

    stamp = tuple((p.name, p.stat().st_mtime) for p in sorted(SAMPLE_DIR.glob("*.json")))
    return cached_samples(stamp)


# Timelines hold a live store (locks, maybe a SQLite file), so they cannot be
# pickled for st.cache_data; st.cache_resource shares one read-only object.
@st.cache_resource(max_entries=32, show_spinner=False)
def cached_replay(scenario_json: str, refire: str = "none") -> Timeline:
    """Replay a scenario given as its JSON text (the cache key)."""
    return replay(parse_scenario(scenario_json, source="scenario"), refire=refire)  # type: ignore[arg-type]


class _TimelineLRU:
    """A small shared least-recently-used store of replayed timelines.

    A replay reports progress to a progress bar while it runs, which a
    function under ``st.cache_*`` may not do (Streamlit replays cached element
    calls); so the cache is this object, shared through ``st.cache_resource``.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.items: OrderedDict[tuple[Any, ...], Timeline] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> Timeline | None:
        with self.lock:
            if key in self.items:
                self.items.move_to_end(key)
                return self.items[key]
        return None

    def put(self, key: tuple[Any, ...], timeline: Timeline) -> None:
        with self.lock:
            self.items[key] = timeline
            self.items.move_to_end(key)
            while len(self.items) > self.size:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _replays() -> _TimelineLRU:
    return _TimelineLRU(size=8)


def cached_conversation_replay(
    data: bytes,
    name: str,
    per: str,
    refire: str,
    max_messages: int,
    progress: Any = None,
) -> Timeline:
    """Import and replay a recorded conversation, cached on its bytes' digest and the options."""
    key = (hashlib.sha256(data).hexdigest(), name, per, refire, max_messages)
    store = _replays()
    timeline = store.get(key)
    if timeline is None:
        conv = cached_conversation(data, name)
        timeline = replay_conversation(
            conv,
            per=per,  # type: ignore[arg-type]
            config=ScenarioConfig(scope="session", max_messages=max_messages),
            refire=refire,  # type: ignore[arg-type]
            progress=progress,
        )
        store.put(key, timeline)
    return timeline


@st.cache_resource(max_entries=64, show_spinner=False)
def cached_check(path: str, mtime: float) -> CheckResult:
    """Check one sample scenario against its expectations."""
    return check(load_scenario(path))


def follow_goto_playground() -> None:
    """Switch to the playground when a callback asked for it (switch_page cannot run in one)."""
    name = st.session_state.pop("goto_playground", None)
    if name:
        st.switch_page(PLAYGROUND, query_params={"scenario": name})


_ROWS: weakref.WeakKeyDictionary[Timeline, list[dict[str, Any]]] = weakref.WeakKeyDictionary()


def rows_of(timeline: Timeline) -> list[dict[str, Any]]:
    """``timeline.rows()``, computed once per timeline object (a replay is read-only here)."""
    rows = _ROWS.get(timeline)
    if rows is None or len(rows) != len(timeline.steps):
        rows = timeline.rows()
        _ROWS[timeline] = rows
    return rows


# --------------------------------------------------------------------------- rendering


def show_entry_bubble(entry: Any, tag: str | None = None) -> None:
    """One buffer entry as a chat bubble: role, tag, call ids, content as plain text."""
    role = entry.get("role", "?") if isinstance(entry, dict) else "?"
    with st.chat_message(str(role), avatar=ROLE_AVATARS.get(str(role), ":material/help:")):
        head = st.container(horizontal=True, gap="small")
        with head:
            if role in ROLE_AVATARS:  # fixed vocabulary only: badges render Markdown
                st.badge(str(role), color="gray")
            if tag in TAG_COLORS or tag == "incoming":
                st.badge(tag, color=TAG_COLORS.get(tag, "blue"))
        ids = entry_call_ids(entry)
        if ids:  # call ids are data: shown inside a code span, which renders literally
            literal = ids.replace("`", "'")
            st.caption(f"`{literal}`")
        calls = entry_calls(entry)
        for call in calls:  # names and arguments are data: plain text
            st.text(f"calls {call}")
        text = entry_text(entry)
        if text:
            st.text(text)
        elif not calls:
            st.caption("*(empty content)*")


def show_entries(tagged: list[tuple[Any, str]], mode: str, empty: str) -> None:
    """Tagged entries as chat bubbles or raw JSON; a long buffer shows what changed and the end."""
    if not tagged:
        st.info(empty, icon=":material/inbox:")
        return
    items = focus(tagged)
    if mode == "JSON":
        st.json(
            [
                {"position": item[0], "tag": item[2], "entry": item[1]}
                if isinstance(item, tuple)
                else {"skipped": f"{item} kept entries not shown"}
                for item in items
            ],
            expanded=2,
        )
        return
    for item in items:
        if isinstance(item, int):
            st.caption(f"… {item} kept entries not shown …")
        else:
            show_entry_bubble(item[1], item[2])


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
        "refused" if record.refused else (repr(record.resolved_scope_id)),
        help="The storage slot's scope id; a refused identity scope touches no storage (MEM-7).",
    )
    if record.refused:
        st.error(
            f"Refused: {md_escape(record.refusal_reason or 'the identity scope has no usable id')}. "
            "The buffer reads empty; count 0, appended 0 (MEM-7, MEM-14 point 4).",
            icon=":material/block:",
        )
    elif record.mem14_flag:
        st.warning(
            f"MEM-14: {record.mem14_flag}. The count changed by {record.count_delta:+d} "
            f"while {record.appended} incoming message(s) became new entries; only "
            "`appended` tells whether the turn landed.",
            icon=":material/visibility:",
        )


def show_chart(timeline: Timeline, step: int) -> None:
    """count and cumulative appended per step; they part where MEM-14 matters."""
    data = chart_frame(rows_of(timeline), start_count=len(timeline.buffer_after(0)))
    if data.empty:
        return
    lines = (
        alt.Chart(data)
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
    chart = lines
    if step > 0:
        rule = (
            alt.Chart({"values": [{"step": step}]}).mark_rule(strokeDash=[4, 4]).encode(x="step:Q")
        )
        chart = lines + rule
    st.altair_chart(
        chart.properties(height=280, title="count vs cumulative appended"),
        alt="Buffer count and cumulative appended per step; where they part, the count hides appends",
    )


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
            [(e, "kept") for e in timeline.buffer_after(0)], mode or "Chat", "Empty buffer."
        )
        return
    before, after, dropped = timeline.tagged(step)
    record = timeline.steps[step - 1]
    st.markdown(f"**Incoming at step {step}**")
    st.text(
        step_label(record.incoming, width=200) + (f"  ({record.label})" if record.label else "")
    )
    show_entries([(m, "incoming") for m in record.incoming], mode or "Chat", "Nothing incoming.")
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Before** ({len(before)} entries)")
        show_entries(before, mode or "Chat", "Empty buffer.")
    with right:
        st.markdown(f"**After** ({len(after)} entries)")
        show_entries(
            after,
            mode or "Chat",
            "Empty buffer (refused scope)." if record.refused else "Empty buffer.",
        )
    if dropped:
        st.markdown(f"**Dropped as duplicates** ({len(dropped)})")
        st.dataframe(event_frame(dropped), hide_index=True, alt="Incoming messages dropped")
    st.markdown("**Events** (each cites its rule)")
    st.dataframe(
        event_frame(record.events),
        hide_index=True,
        alt="The engine's decisions for this step, with their rule ids",
        column_config={"reason": st.column_config.TextColumn("reason", width="large")},
    )


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


def show_inspector(timeline: Timeline, step: int, *, prefix: str, name: str, key: str) -> None:
    """The centre of the playground and the replay page: metrics, navigator, timeline, detail."""
    from app_pages.navigator import show_nav_table, show_navigator

    show_metrics(timeline, step)
    kind = show_navigator(timeline, step, key, prefix) if timeline.steps else None
    tab_timeline, tab_step, tab_provider, tab_export = st.tabs(
        ["Timeline", f"Step {step} before / after", "Provider view", "Export"]
    )
    with tab_timeline:
        if timeline.steps:
            show_nav_table(timeline, step, key, prefix, kind)
        show_chart(timeline, step)
    with tab_step:
        show_step_detail(timeline, step, prefix)
    with tab_provider:
        show_provider_view(timeline, step)
    with tab_export:
        show_exports(timeline, name, prefix)


def json_text(value: Any) -> str:
    """Pretty JSON for text areas."""
    return json.dumps(value, indent=2, ensure_ascii=False)
