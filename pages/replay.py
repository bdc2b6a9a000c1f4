"""Replay: run a recorded conversation (or a scenario file) through the buffer, step by step."""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.scriptrunner import get_script_run_ctx

from flowdrop_core.importers import ConversationFormatError
from flowdrop_core.inspect.compare import plan_keys, scenario_appends
from flowdrop_core.inspect.rows import count_flag
from flowdrop_core.replay import ReplayError, Timeline
from flowdrop_core.scenario import dump_scenario
from inspector_ui import place, upload_guard
from inspector_ui.cache import (
    RecordingTooLarge,
    cached_conversation,
    cached_conversation_replay,
    cached_conversations,
    cached_import_notes,
    cached_replay,
    cached_scenario,
    digest_of,
    replay_key,
    replays,
)
from inspector_ui.compare import REFIRE_LABELS, show_replay_compare
from inspector_ui.health import show_health_panel
from inspector_ui.inspector import show_inspector
from inspector_ui.kept_uploads import KeepSettingsError
from inspector_ui.navigator import step_selector
from inspector_ui.notes import show_import_notes
from inspector_ui.plain import md
from inspector_ui.samples import SAMPLE_DIR, conversation_samples
from inspector_ui.shell import page_shell
from inspector_ui.urlparams import (
    MAX_STEP,
    MAX_WINDOW,
    Param,
    check_url,
    mirror_to_url,
    one_of,
    seed_from_url,
    whole_number,
)
from inspector_ui.visitor import forget, keep_value, kept, upload_keeper

page_shell("replay")

MAX_UPLOAD_MB = int(st.get_option("server.maxUploadSize"))
#: Files up to this many times the limit reach the guard, which names them when refusing.
OVERSIZED_FACTOR = 100
DEFAULT_SAMPLE = "imports/openai_chat.json"
#: The URL parameter naming a kept upload by the SHA-256 of its bytes.
UPLOAD_PARAM = "upload"

sample_paths = conversation_samples()
names = [str(p.relative_to(SAMPLE_DIR)) for p in sample_paths]
check_url(
    [
        Param("r_window", "a window size (0 to 1,000,000)", 0, whole_number(0, MAX_WINDOW)),
        Param("r_per", "message or turn", "message", one_of(["message", "turn"])),
        Param("r_refire", f"a re-fire ({', '.join(REFIRE_LABELS)})", "none", one_of(REFIRE_LABELS)),
        Param("r_sample", "a sample in sample_data/", DEFAULT_SAMPLE, one_of(names)),
        Param("rstep", "a step number", "the newest step", whole_number(0, MAX_STEP)),
    ]
)
seed_from_url("r_window", int)

st.caption(
    "Replay a recorded conversation through the buffer: one append per message or per "
    "recorded turn, optionally re-firing results the way an orchestrator re-delivers them. "
    "A saved scenario file replays with its own settings."
)


KEEPER_PROBLEM: str | None = None
try:
    keeper = upload_keeper()  # None: the operator switched keeping off
except KeepSettingsError as exc:
    keeper, KEEPER_PROBLEM = None, str(exc)


def drop_link() -> None:
    """The upload is no longer what the page shows: its digest leaves the URL."""
    if UPLOAD_PARAM in st.query_params:
        del st.query_params[UPLOAD_PARAM]


def forget_upload() -> None:
    """Go back to the samples: the kept upload and its link go."""
    forget("upload")
    drop_link()


def upload_changed() -> None:
    """The person picked another file or removed theirs: what was kept goes with it."""
    if st.session_state.get("r_upload") is None:
        forget_upload()


def shown_size(size: int) -> str:
    return f"{size / 1e6:,.1f} MB" if size >= 100_000 else f"{size / 1e3:,.1f} KB"


def open_kept(digest: str) -> tuple[str, bytes] | None:
    """The upload a link (or this session) names by digest; the page stops with a message
    when it is not kept here. Never another recording in its place."""
    if keeper is None:
        st.error(
            "This link names an upload, but this server does not keep uploads, so a link "
            "cannot reopen one: upload the file again."
            + (f" ({md(KEEPER_PROBLEM)})" if KEEPER_PROBLEM else ""),
            icon=":material/link_off:",
        )
    else:
        found = keeper.get(digest)
        if found is not None:
            return found.name, found.data
        st.error(
            "This recording is no longer kept on this server; upload it again.",
            icon=":material/link_off:",
        )
    forget("upload")
    st.button(
        "Show the samples instead", key="r_drop_link", on_click=drop_link, icon=":material/close:"
    )
    st.stop()
    return None


def take_oversized(accepted: bool) -> tuple[str, int, int] | None:
    """The upload the guard refused as too large (name, bytes, limit), kept for this
    session's page until another file is accepted."""
    ctx = get_script_run_ctx()
    refused = upload_guard.take_oversized(ctx.session_id) if ctx is not None else None
    if refused is not None:
        st.session_state.r_oversized = refused
    elif accepted:
        st.session_state.pop("r_oversized", None)
    found = st.session_state.get("r_oversized")
    return found if isinstance(found, tuple) else None


def show_oversized(where: DeltaGenerator, refused: tuple[str, int, int], showing: str) -> None:
    """Name the refused file, its size and the limit, and what the page shows instead."""
    file_name, size, limit = refused
    where.error(
        f"{md(file_name)} was not uploaded: it is {size / 1e6:,.1f} MB ({size:,} bytes), over "
        f"the {limit / 1024**2:,.0f} MB limit ({limit:,} bytes). The page shows {md(showing)}, "
        "not this file.",
        icon=":material/error:",
    )


source_col, options_col = st.columns([3, 2])
with source_col:
    uploaded = st.file_uploader(
        f"Upload a conversation or a scenario file (up to {MAX_UPLOAD_MB} MB)",
        type=["json", "jsonl"],
        key="r_upload",
        help="OpenAI chat or responses, Anthropic messages, LangChain, JSONL, or a scenario file.",
        on_change=upload_changed,
        # Behind the guard the browser sends a larger file, which the guard refuses after
        # reading its name (never its bytes): the page can name it. Else the browser refuses.
        max_upload_size=MAX_UPLOAD_MB * OVERSIZED_FACTOR if upload_guard.installed() else None,
    )
    oversized = take_oversized(uploaded is not None)
    oversized_slot = st.container()  # filled once the page knows what it shows
    # A page switch empties the uploader and a reload starts a new session: the upload is
    # kept on disk by digest (a link names it: ?upload=) or, with keeping off, in memory for
    # this browser session (see inspector_ui.kept_uploads and inspector_ui.visitor).
    upload: tuple[str, bytes] | None = None
    linked = st.query_params.get(UPLOAD_PARAM)
    was = kept("upload")
    if uploaded is not None:
        upload = (uploaded.name, uploaded.getvalue())
        digest_now = digest_of(upload[1])
        if keeper is not None:
            if was != (upload[0], digest_now) or linked != digest_now:
                if keeper.put(upload[0], upload[1]) is not None:
                    keep_value("upload", (upload[0], digest_now), 0)  # the bytes are on disk
                    st.query_params[UPLOAD_PARAM] = digest_now
                else:  # larger than the whole budget: kept for this browser session only
                    keep_value("upload", upload, len(upload[1]))
                    drop_link()
        elif was != upload:
            keep_value("upload", upload, len(upload[1]))
    else:
        if linked:  # a link (or this session's own URL) names an upload: it wins
            upload = open_kept(linked)
            assert upload is not None
            if was != (upload[0], linked):
                keep_value("upload", (upload[0], linked), 0)
        elif isinstance(was, tuple) and len(was) == 2 and isinstance(was[1], str):
            upload = open_kept(was[1])  # the digest this browser session kept
            st.query_params[UPLOAD_PARAM] = was[1]
        elif isinstance(was, tuple) and len(was) == 2:
            upload = was
        if upload is not None:
            note = st.container(horizontal=True, vertical_alignment="center")
            where = (
                "kept on this server: a copied link reopens it"
                if keeper is not None and UPLOAD_PARAM in st.query_params
                else "kept for this browser session"
            )
            note.caption(
                f":material/upload_file: Showing your upload {md(upload[0])} "
                f"({shown_size(len(upload[1]))}), {where}."
            )
            note.button(
                "Forget it",
                key="r_forget",
                on_click=forget_upload,
                icon=":material/close:",
                help="Go back to the samples.",
            )
    # The default is the widget's own index, never a session-state assignment: an assignment
    # beats a link's ?r_sample= on the first run, and a default equal to the first option
    # kept that option out of the URL.
    sample = st.selectbox(
        "…or pick a sample from sample_data/",
        names,
        index=names.index(DEFAULT_SAMPLE) if DEFAULT_SAMPLE in names else 0,
        key="r_sample",
        bind="query-params",
        disabled=upload is not None,
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
        format_func=REFIRE_LABELS.__getitem__,
        key="r_refire",
        bind="query-params",
    )
    window = st.number_input(
        "Window size (max_messages, 0 = no cap)",
        min_value=0,
        max_value=MAX_WINDOW,
        step=1,
        key="r_window",
    )
    mirror_to_url("r_window", window, 0)

if upload is not None:
    name, data = upload
    if keeper is None or UPLOAD_PARAM not in st.query_params:
        st.caption(
            ":material/link_off: This upload is not kept on this server (keeping is off, or the "
            "file is larger than its budget): the URL keeps the settings and the step, and a "
            "copied link reopens the sample picked above, not this file."
        )
    if len(data) > MAX_UPLOAD_MB * 1024 * 1024:  # the uploader enforces it too
        st.error(
            f"{md(name)} is larger than the {MAX_UPLOAD_MB} MB limit.",
            icon=":material/error:",
        )
        st.stop()
else:
    if not sample:
        st.info("Upload a file or pick a sample.")
        st.stop()
    path = SAMPLE_DIR / sample
    data, name = path.read_bytes(), str(sample)

digest = digest_of(data)
try:
    scenario = cached_scenario(digest, name, data)  # counts before decoding (too many: refused)
except RecordingTooLarge as exc:
    if upload is not None:
        forget("upload")  # a refused file is not kept for reloads, nor on disk
        if keeper is not None:
            keeper.drop(digest)
        drop_link()
    st.error(f"Cannot replay {md(name)}:\n\n{md(exc)}", icon=":material/error:")
    st.stop()
picked: int | None = None  # which conversation of a file holding one per line
if scenario is None:
    try:
        conversations = cached_conversations(data, name, digest)
    except (ConversationFormatError, ValueError) as exc:
        st.error(f"Cannot replay {md(name)}:\n\n{md(exc)}", icon=":material/error:")
        st.stop()
    if len(conversations) > 1:
        with source_col:
            picked = st.selectbox(
                f"Conversation ({len(conversations)} in this file, one per line)",
                range(len(conversations)),
                format_func=lambda k: (
                    f"{k + 1}: {conversations[k].label}, {len(conversations[k].messages)} messages"
                ),
                key="r_conversation",
            )
key = replay_key(digest, name, per or "message", refire or "none", int(window), picked)


def cancel(key: tuple[object, ...]) -> None:
    """Stop the running replay: the button's rerun interrupts it at its next progress update."""
    st.session_state.r_cancelled = key


def retry() -> None:
    st.session_state.pop("r_cancelled", None)


timeline: Timeline | None = None
notes: list[dict[str, object]] = []
try:
    if scenario is not None:
        st.caption(
            f"Scenario file: its own settings apply (scope {scenario.config.scope}, "
            f"window {scenario.config.max_messages})."
        )
        timeline = cached_replay(dump_scenario(scenario), refire or "none")
    else:
        notes = cached_import_notes(digest, name, data, picked)  # shown next to the upload
        timeline = replays().get(key)
        if timeline is None and st.session_state.get("r_cancelled") == key:
            st.info(f"Replay of {md(name)} cancelled.", icon=":material/cancel:")
            st.button("Replay it", key="r_retry", on_click=retry, icon=":material/play_arrow:")
            st.stop()
        if timeline is None:
            conv = cached_conversation(data, name, picked, digest)  # a format error first
            slot = st.empty()  # the progress and its Cancel button, cleared when done
            row = slot.container(horizontal=True, vertical_alignment="center")
            bar = row.progress(0.0, text=f"Replaying {len(conv.messages):,} messages…")
            row.button(
                "Cancel",
                key="r_cancel",
                on_click=cancel,
                args=(key,),
                icon=":material/cancel:",
                help="Stop this replay; nothing is kept.",
            )

            def progress(done: int, total: int) -> None:
                if done == total or done % 200 == 0:
                    bar.progress(done / max(total, 1), text=f"Replaying step {done:,} of {total:,}")

            timeline = cached_conversation_replay(
                data,
                name,
                per or "message",
                refire or "none",
                int(window),
                progress=progress,
                conversation=picked,
            )
            slot.empty()
except (ConversationFormatError, ReplayError, ValueError) as exc:
    st.error(f"Cannot replay {md(name)}:\n\n{md(exc)}", icon=":material/error:")
    st.stop()

with source_col:
    show_import_notes(notes, key="r_import", source=Path(name).name)

showing = "your upload" if upload is not None else "the sample"
if oversized is not None:
    show_oversized(oversized_slot, oversized, f"{showing} {Path(name).name}")
st.success(
    f"Showing {showing} {md(Path(name).name)}: {len(timeline.steps)} step(s), "
    f"{sum(r.appended for r in timeline.steps)} appended, "
    f"{sum(1 for r in timeline.steps if count_flag(r))} highlighted for MEM-14 (a heal's "
    "growth, a replaced or dropped result's zero).",
    icon=":material/check_circle:",
)
if scenario is not None:
    appends: list[object] = scenario_appends(scenario)
else:
    conv = cached_conversation(data, name, picked, digest)
    appends = (
        list(conv.messages)
        if per != "turn"
        else [[conv.messages[k] for k in g] for g in conv.turns]
    )
show_health_panel(timeline, "rstep", "r", plan_keys(appends, refire or "none"))  # type: ignore[arg-type]
step = step_selector(
    timeline, "rstep", label="Step (travel through the timeline)", recording=(digest, picked)
)
if st.toggle(
    "Compare with other settings",
    key="r_compare",
    bind="query-params",  # a link reopens the comparison too
    help="Replay the same steps under another window or re-fire mode and mark what differs.",
):
    show_replay_compare(
        timeline,
        step,
        data,
        name,
        scenario,
        per or "message",
        refire or "none",
        int(window),
        conversation=picked,
    )
show_inspector(timeline, step, prefix="r", name=Path(name).stem, key="rstep")
place.remember("replay")
