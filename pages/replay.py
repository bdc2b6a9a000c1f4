"""Replay: run a recorded conversation (or a scenario file) through the buffer, step by step."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from flowdrop_core.importers import ConversationFormatError
from flowdrop_core.replay import ReplayError, Timeline
from flowdrop_core.scenario import dump_scenario, parse_scenario
from flowdrop_core.view import SAMPLE_DIR, conversation_samples, md_escape
from inspector_ui.cache import cached_conversation, cached_conversation_replay, cached_replay
from inspector_ui.inspector import show_inspector
from inspector_ui.shell import page_shell
from inspector_ui.timeline import step_selector

page_shell("replay")

MAX_UPLOAD_MB = int(st.get_option("server.maxUploadSize"))
REFIRE_LABELS = {
    "none": "no re-fire",
    "results": "re-fire every tool result",
    "steps": "re-fire the whole run",
}

st.caption(
    "Replay a recorded conversation through the buffer: one append per message or per "
    "recorded turn, optionally re-firing results the way an orchestrator re-delivers them. "
    "A saved scenario file replays with its own settings."
)

source_col, options_col = st.columns([3, 2])
with source_col:
    uploaded = st.file_uploader(
        f"Upload a conversation or a scenario file (up to {MAX_UPLOAD_MB} MB)",
        type=["json", "jsonl"],
        key="r_upload",
        help="OpenAI chat or responses, Anthropic messages, LangChain, JSONL, or a scenario file.",
    )
    sample_paths = conversation_samples()
    names = [str(p.relative_to(SAMPLE_DIR)) for p in sample_paths]
    if st.session_state.get("r_sample") not in names and names:
        default = "imports/openai_chat.json"
        st.session_state.r_sample = default if default in names else names[0]
    sample = st.selectbox(
        "…or pick a sample from sample_data/",
        names,
        key="r_sample",
        bind="query-params",
        disabled=uploaded is not None,
    )
with options_col:
    per = st.segmented_control(
        "One append per",
        ["message", "turn"],
        default="message",
        required=True,
        key="r_per",
        bind="query-params",
    )
    refire = st.selectbox(
        "Re-fire",
        list(REFIRE_LABELS),
        format_func=REFIRE_LABELS.get,
        key="r_refire",
        bind="query-params",
    )
    window = st.number_input(
        "Window size (max_messages, 0 = no cap)",
        min_value=0,
        step=1,
        key="r_window",
        bind="query-params",
    )

if uploaded is not None:
    data, name = uploaded.getvalue(), uploaded.name
    if len(data) > MAX_UPLOAD_MB * 1024 * 1024:  # the uploader enforces it too
        st.error(
            f"{md_escape(name)} is larger than the {MAX_UPLOAD_MB} MB limit.",
            icon=":material/error:",
        )
        st.stop()
else:
    if not sample:
        st.info("Upload a file or pick a sample.")
        st.stop()
    path = SAMPLE_DIR / sample
    data, name = path.read_bytes(), str(sample)

timeline: Timeline | None = None
scenario = None
try:
    scenario = parse_scenario(data.decode("utf-8-sig"), source=name)
except (ValueError, RecursionError):
    # Not a scenario (ScenarioError), not UTF-8 (UnicodeDecodeError) or JSON the json module
    # refuses (an integer too long, nesting too deep): the importers below name the problem.
    scenario = None

bar = st.progress(0.0, text="Replaying…")


def progress(done: int, total: int) -> None:
    if done == total or done % 200 == 0:
        bar.progress(done / max(total, 1), text=f"Replaying step {done} of {total}")


try:
    if scenario is not None:
        st.caption(
            f"Scenario file: its own settings apply (scope {scenario.config.scope}, "
            f"window {scenario.config.max_messages})."
        )
        timeline = cached_replay(dump_scenario(scenario), refire or "none")
    else:
        cached_conversation(data, name)  # a format error is reported before replaying
        timeline = cached_conversation_replay(
            data, name, per or "message", refire or "none", int(window), progress=progress
        )
except (ConversationFormatError, ReplayError, ValueError) as exc:
    bar.empty()
    st.error(f"Cannot replay {md_escape(name)}:\n\n{md_escape(exc)}", icon=":material/error:")
    st.stop()
bar.empty()

st.success(
    f"{md_escape(Path(name).name)}: {len(timeline.steps)} step(s), "
    f"{sum(r.appended for r in timeline.steps)} appended, "
    f"{sum(1 for r in timeline.steps if r.mem14_flag)} marked for MEM-14.",
    icon=":material/check_circle:",
)
step = step_selector(timeline, "rstep", label="Step (travel through the timeline)")
show_inspector(timeline, step, prefix="r", name=Path(name).stem)
