"""FlowDrop buffer inspector, entry page: the Playground.

Run with ``make run`` (or ``streamlit run app.py``). Streamlit's classic
multipage layout: this file is the root page, ``pages/*.py`` are the other
pages, and the code they share lives in the ``inspector_ui`` package (see
``inspector_ui.registry``). No page holds buffer logic: they call
``flowdrop_core`` and render its results.

Playground: append messages under a chosen window, scope and identity; watch MEM-14.

The session is a recipe (starting buffer + the appends made so far). The
timeline shown is the library's replay of that recipe under the sidebar's
current settings, so changing the window, the scope or the identity shows at
once what every append would have reported under them.
"""

from __future__ import annotations

import copy
from typing import Any

import streamlit as st

from flowdrop_core import InvalidMessagesError
from flowdrop_core.assembly import AssemblyError, assemble_messages
from flowdrop_core.context import resolve_scope
from flowdrop_core.engine import as_batch
from flowdrop_core.importers import ConversationFormatError
from flowdrop_core.importers.paste import InputProblem, parse_pasted_with_notes
from flowdrop_core.messages import read_messages
from flowdrop_core.replay import ReplayError, Timeline, conversation_to_scenario, incoming_summary
from flowdrop_core.scenario import SCOPES, Scenario, ScenarioConfig, ScenarioStep, dump_scenario
from inspector_ui import session as session_ui
from inspector_ui.cache import cached_conversation, cached_replay, samples
from inspector_ui.display import CONTEXT_PRESETS, compose_message, context_from_fields
from inspector_ui.health import show_health_panel
from inspector_ui.inspector import show_inspector
from inspector_ui.navigator import step_selector
from inspector_ui.notes import show_import_notes
from inspector_ui.plain import md
from inspector_ui.playground_state import (
    DEFAULTS,
    apply_preset,
    empty_recipe,
    load_scenario_into_playground,
)
from inspector_ui.samples import SAMPLE_DIR
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

STORAGES = ["memory", "sqlite"]
SAMPLE_CONVERSATION = SAMPLE_DIR / "imports" / "openai_chat.json"
PRESET_ICONS = {
    "no identity": ":material/person_off:",
    "the no-user id 0": ":material/exposure_zero:",
    "a real user": ":material/person:",
}


def modified() -> None:
    """The recipe no longer matches a sample file: drop it from the URL (the session goes there)."""
    st.session_state.pg_recipe["source"] = None
    session_ui.url_changed()
    if "scenario" in st.query_params:
        del st.query_params["scenario"]


# --------------------------------------------------------------------------- callbacks


def add_step(append: Any, label: str) -> None:
    st.session_state.pg_recipe["steps"].append({"label": label, "append": append})
    st.session_state.pg_error = None
    st.session_state.pop("pg_reset_backup", None)
    modified()


def on_append_pasted() -> None:
    text = st.session_state.get("pg_paste", "")
    st.session_state.pg_paste_notes = []  # the notes of the last append only
    try:
        pasted = parse_pasted_with_notes(text)
        batch = pasted.messages
        read_messages(as_batch(batch))  # the engine's own check; names incoming[i]
    except InputProblem as exc:  # names its source itself
        st.session_state.pg_error = str(exc)
        return
    except (InvalidMessagesError, ValueError, RecursionError) as exc:
        # Whatever else a reader refuses in the text is bad input too: shown, never a traceback.
        st.session_state.pg_error = f"pasted text: {exc}"
        return
    st.session_state.pg_paste_notes = pasted.notes_as_dicts()  # shown under the paste box
    n = len(batch)
    add_step(batch[0] if n == 1 else batch, f"pasted ({n} message{'s' if n != 1 else ''})")


def on_append_composed() -> None:
    s = st.session_state
    message = compose_message(s.pg_role, s.pg_content, s.pg_call_id, s.pg_declare)
    if message is None:
        s.pg_error = (
            "composer: empty content makes no message (MEM-16); type some text, or declare "
            "tool call ids on an assistant turn"
        )
        return
    add_step(message, f"composed {message['role']}")


def on_add_input() -> None:
    """Keep the composed message as the next input of a batch (MEM-4: declared order)."""
    s = st.session_state
    message = compose_message(s.pg_role, s.pg_content, s.pg_call_id, s.pg_declare)
    if message is None:
        s.pg_error = "composer: empty content makes no message (MEM-16); nothing to add as an input"
        return
    inputs = s.setdefault("pg_inputs", [])
    inputs.append((f"in_{len(inputs) + 1}", message))


def on_append_inputs() -> None:
    """Append the batch of inputs, assembled in their declared order (MEM-4)."""
    s = st.session_state
    inputs = s.get("pg_inputs") or []
    try:
        batch = assemble_messages(inputs)
    except AssemblyError as exc:
        s.pg_error = f"composer: {exc}"
        return
    if batch:
        add_step(batch, f"assembled {len(inputs)} input{'s' if len(inputs) != 1 else ''} (MEM-4)")
    s.pg_inputs = []


def on_refire() -> None:
    steps = st.session_state.pg_recipe["steps"]
    if steps:
        last = copy.deepcopy(steps[-1])
        last["label"] = f"re-fire of step {len(steps)}"
        last["refire"] = True
        steps.append(last)
        modified()


def on_undo() -> None:
    if st.session_state.pg_recipe["steps"]:
        st.session_state.pg_recipe["steps"].pop()
        modified()


def on_reset() -> None:
    session_ui.reset(empty_recipe())
    modified()


def on_undo_reset() -> None:
    session_ui.undo_reset()


def on_preset(name: str) -> None:
    apply_preset(name)


def on_load_example() -> None:
    choice = st.session_state.get("pg_example")
    for sample in samples():
        if sample.scenario is not None and sample.name == choice:
            load_scenario_into_playground(sample.scenario, source=sample.name)
            st.query_params["scenario"] = sample.name
            return


def on_load_conversation() -> None:
    """The sample recording, one append per message, under the current settings."""
    try:
        conv = cached_conversation(SAMPLE_CONVERSATION.read_bytes(), SAMPLE_CONVERSATION.name)
    except (OSError, ConversationFormatError) as exc:
        st.session_state.pg_error = str(exc)
        return
    scenario = conversation_to_scenario(conv, per="message")
    recipe = empty_recipe()
    recipe.update(
        name=SAMPLE_CONVERSATION.stem,
        title=scenario.title,
        steps=[step.model_dump(exclude_none=True) for step in scenario.steps],
    )
    st.session_state.pg_recipe = recipe
    st.session_state.pg_error = None
    st.session_state.pg_made = None  # made with the settings in force now
    session_ui.url_changed()
    if not st.session_state.get("session"):
        on_preset("a real user")
    if "scenario" in st.query_params:
        del st.query_params["scenario"]


page_shell("playground")
check_url(
    [
        Param("window", "a window size (0 to 1,000,000)", 0, whole_number(0, MAX_WINDOW)),
        Param("scope", f"a scope ({', '.join(SCOPES)})", "session", one_of(SCOPES)),
        Param("storage", "a storage backend (memory, sqlite)", "memory", one_of(STORAGES)),
        Param("step", "a step number", "the newest step", whole_number(0, MAX_STEP)),
    ],
    defaults={name: DEFAULTS[name] for name in ("window", "scope", "storage")},
)
seed_from_url("window", int)

# --------------------------------------------------------------------------- state

if "pg_recipe" not in st.session_state:
    st.session_state.pg_recipe = empty_recipe()
    st.session_state.pg_error = None
    for name, value in DEFAULTS.items():
        if name not in st.query_params:
            st.session_state[name] = value
session_ui.restore_from_url()  # ?appends=: the appends of a copied link

wanted = st.query_params.get("scenario")
if wanted and st.session_state.pg_recipe.get("source") != wanted:
    match = [s for s in samples() if s.scenario is not None and s.name == wanted]
    if match:
        load_scenario_into_playground(
            match[0].scenario,  # type: ignore[arg-type]
            source=wanted,
            keep=frozenset(st.query_params),  # a copied link's own settings win
        )
    else:
        st.session_state.pg_error = f"URL: no sample scenario named {wanted!r} in sample_data/"

# --------------------------------------------------------------------------- sidebar

with st.sidebar:
    st.header("Buffer node", divider="gray")
    window = st.number_input(
        "Window size (max_messages)",
        min_value=0,
        max_value=MAX_WINDOW,
        step=1,
        key="window",
        help="0 means no cap. Past the window the oldest entries are evicted (GR-MEM step 6).",
    )
    mirror_to_url("window", window, DEFAULTS["window"])
    scope = st.selectbox("Scope", SCOPES, key="scope", bind="query-params")
    key = st.text_input("Key", key="key", bind="query-params")
    storage = st.segmented_control(
        "Storage backend",
        STORAGES,
        required=True,
        key="storage",
        bind="query-params",
        help="SQLite writes every append to a real file (a fresh temporary one per run).",
    )
    st.header("Execution context", divider="gray")
    st.caption("One-click presets")
    for name in CONTEXT_PRESETS:
        st.button(
            name,
            key=f"preset_{name}",
            on_click=on_preset,
            args=(name,),
            width="stretch",
            icon=PRESET_ICONS[name],
        )
    st.text_input("Session id", key="session", bind="query-params")
    st.text_input("User id", key="user", bind="query-params")
    st.text_input(
        "Session owner",
        key="owner",
        bind="query-params",
        help="MEM-8: when set, the user scope resolves to the owner, never the caller.",
    )
    recipe = st.session_state.pg_recipe
    context = context_from_fields(
        st.session_state.session, st.session_state.user, st.session_state.owner
    )
    if recipe.get("extra_context"):
        context = {**recipe["extra_context"], **(context or {})}
    resolution = resolve_scope(scope, context)
    if resolution.refused:
        st.error(f"{scope} scope refuses: {md(resolution.reason)}", icon=":material/block:")
    else:
        st.success(
            f"{scope} scope resolves to {md(repr(resolution.resolved_scope_id))}",
            icon=":material/key:",
        )

# --------------------------------------------------------------------------- main

st.caption(
    "Append messages to a conversation buffer and read what each append reports. "
    "`count` is the buffer's size; `appended` is how many incoming messages became "
    "new entries (MEM-14). The timeline is recomputed under the sidebar's settings."
)

start = st.container(horizontal=True, vertical_alignment="bottom")
options = [s.name for s in samples() if s.scenario is not None]
if options:
    if st.session_state.get("pg_example") not in options:
        st.session_state.pg_example = (
            "mem-14-full-window" if "mem-14-full-window" in options else options[0]
        )
    start.selectbox("Spec example", options, key="pg_example", width=320)
    start.button(
        "Load example", key="pg_load_example", on_click=on_load_example, icon=":material/menu_book:"
    )
start.button(
    "Load sample conversation",
    key="pg_load_conversation",
    on_click=on_load_conversation,
    icon=":material/forum:",
    type="primary",
    help=f"{SAMPLE_CONVERSATION.name}: a recorded OpenAI chat with a re-fired result and a dangling call.",
)

if recipe.get("title"):
    st.markdown(f"**{md(recipe['name'])}**: {md(recipe['title'])}")

paste_tab, compose_tab = st.tabs(["Paste", "Compose"])
with paste_tab:
    st.text_area(
        "One message, a list of messages, or a recorded conversation (any importable format)",
        key="pg_paste",
        height=110,
        placeholder='{"role": "user", "content": "hello"}',
    )
    st.button(
        "Append", key="pg_append", on_click=on_append_pasted, type="primary", icon=":material/add:"
    )
    show_import_notes(
        st.session_state.get("pg_paste_notes") or [], key="pg_paste", source="last paste"
    )
with compose_tab:
    c1, c2 = st.columns([1, 3])
    c1.selectbox("Role", ["user", "assistant", "tool", "system"], key="pg_role")
    c2.text_input("Content", key="pg_content")
    c3, c4 = st.columns(2)
    c3.text_input(
        "Tool call id (answered, role tool)",
        key="pg_call_id",
        help="Kept only on role tool (MEM-16).",
    )
    c4.text_input("Declare call ids (assistant, comma-separated)", key="pg_declare")
    buttons = st.container(horizontal=True)
    buttons.button(
        "Append message",
        key="pg_compose_append",
        on_click=on_append_composed,
        type="primary",
        icon=":material/add:",
    )
    buttons.button(
        "Add as an input",
        key="pg_add_input",
        on_click=on_add_input,
        icon=":material/playlist_add:",
        help="Collect several messages as a node's inputs and append them in one step, "
        "assembled in the order they were added (MEM-4).",
    )
    pending = st.session_state.get("pg_inputs") or []
    if pending:
        st.caption(f"{len(pending)} input(s), appended in this order (MEM-4):")
        for port, message in pending:
            st.text(f"{port}: {incoming_summary([message]).strip()}")
        buttons2 = st.container(horizontal=True)
        buttons2.button(
            "Append the inputs",
            key="pg_append_inputs",
            on_click=on_append_inputs,
            type="primary",
            icon=":material/merge:",
        )
        buttons2.button(
            "Forget the inputs",
            key="pg_forget_inputs",
            on_click=lambda: st.session_state.update(pg_inputs=[]),
            icon=":material/delete_sweep:",
        )

if st.session_state.get("pg_url_bad"):
    st.error(
        f"The link's session could not be loaded; the URL is kept as it is. "
        f"{md(st.session_state.get('pg_error') or '')}",
        icon=":material/link_off:",
    )
elif st.session_state.get("pg_error"):
    st.error(f"Nothing was appended. {md(st.session_state.pg_error)}", icon=":material/error:")

actions = st.container(horizontal=True)
has_steps = bool(recipe["steps"])
actions.button(
    "Re-fire last append",
    key="pg_refire",
    on_click=on_refire,
    disabled=not has_steps,
    icon=":material/replay:",
)
actions.button(
    "Undo", key="pg_undo", on_click=on_undo, disabled=not has_steps, icon=":material/undo:"
)
actions.button(
    "Reset",
    key="pg_reset",
    on_click=on_reset,
    icon=":material/restart_alt:",
    help="Clears the session; Undo reset brings it back until the next append.",
)
if st.session_state.get("pg_reset_backup"):
    actions.button(
        "Undo reset", key="pg_undo_reset", on_click=on_undo_reset, icon=":material/history:"
    )


def build_timeline(settings: dict[str, Any]) -> Timeline:
    """The recipe replayed under ``settings`` (sidebar keys); cached on the scenario's JSON."""
    config = ScenarioConfig(
        scope=settings["scope"],
        key=(settings["key"] or "").strip() or "chat_history",
        max_messages=int(settings["window"] or 0),
        storage=settings["storage"] or "memory",
    )
    ctx = context_from_fields(settings["session"], settings["user"], settings["owner"])
    if recipe.get("extra_context"):
        ctx = {**recipe["extra_context"], **(ctx or {})}
    scenario = Scenario(
        name=recipe["name"],
        title=recipe["title"],
        rules=recipe["rules"],
        description=recipe["description"],
        config=config,
        context=ctx,
        buffer=recipe["buffer"],
        steps=[ScenarioStep.model_validate(s) for s in recipe["steps"]],
    )
    return cached_replay(dump_scenario(scenario))


now = session_ui.current_settings()
made = session_ui.made_settings()
try:
    timeline = build_timeline(made)
except (ReplayError, ValueError) as exc:
    st.error(f"Cannot run this session: {md(exc)}", icon=":material/error:")
    st.stop()
other: Timeline | None = None
other_error: str | None = None
if made != now:
    # Settings under which nothing can run are a compare like any other: the timeline
    # as made stays, and the panel says why the new settings run nothing.
    try:
        other = build_timeline(now)
    except (ReplayError, ValueError) as exc:
        other_error = str(exc)

too_large = session_ui.write_to_url(recipe, made)
if too_large:
    st.warning(md(too_large), icon=":material/link_off:")
    st.download_button(
        "Download the session as a scenario file",
        data=lambda: dump_scenario(timeline.to_scenario(recipe["name"])),
        file_name=f"{recipe['name']}.json",
        mime="application/json",
        icon=":material/save:",
        key="pg_dl_too_large",
        on_click="ignore",
    )

if not timeline.steps:
    st.info(
        "No appends yet. Paste or compose a message and press Append, load a spec example, "
        "or load the sample conversation.",
        icon=":material/arrow_upward:",
    )
if timeline.steps:
    show_health_panel(timeline, "step", "pg")
step = step_selector(timeline, "step")
if other is not None:
    session_ui.show_compare(timeline, other, made, now, step, "step")
elif other_error is not None:
    session_ui.show_compare_refused(made, now, other_error)
show_inspector(timeline, step, prefix="pg", name=recipe["name"], key="step")
