"""Learn MEM-14: a guided walk through every point of the rule, and a presenter mode.

Each stop of the walk (:data:`flowdrop_core.inspect.walk.WALK`) quotes the
rule's own sentence, runs its example's append when the button is pressed
and shows the report next to what the example file expects, in the
specification's words. Presenter mode shows one example at a time in large
type, with previous and next. All numbers come from the library.
"""

from __future__ import annotations

import json

import streamlit as st

from flowdrop_core.inspect.glossary import help_for
from flowdrop_core.inspect.walk import MEM14_POINTS, WALK, WalkOutcome, run_walk_step, walk_summary
from flowdrop_core.replay import RULE_SUMMARIES
from flowdrop_core.verdicts import VERDICTS
from inspector_ui import place
from inspector_ui.entries import show_entries
from inspector_ui.playground_state import load_scenario_into_playground
from inspector_ui.samples import SAMPLE_DIR
from inspector_ui.shell import follow_goto_playground, page_shell

KEYS = [s.key for s in WALK]
LABELS = {s.key: f"{n}. {s.title.split(':')[0]}" for n, s in enumerate(WALK, start=1)}


def presses(key: str) -> int:
    return int(st.session_state.get(f"walk_presses_{key}", 0))


def press(key: str) -> None:
    st.session_state[f"walk_presses_{key}"] = presses(key) + 1


def start_over(key: str) -> None:
    st.session_state[f"walk_presses_{key}"] = 0


def go(offset: int) -> None:
    current = st.session_state.get("walk_stop") or KEYS[0]
    st.session_state.walk_stop = KEYS[(KEYS.index(current) + offset) % len(KEYS)]


def open_in_playground(key: str) -> None:
    outcome = run_walk_step(WALK[KEYS.index(key)], SAMPLE_DIR)
    assert outcome is not None
    load_scenario_into_playground(outcome.scenario, source=outcome.scenario.name)
    st.session_state.goto_playground = outcome.scenario.name  # switched below, after callbacks


def report_metrics(outcome: WalkOutcome) -> None:
    """The MEM-14 report (point 1): count with its change, appended, appended_any."""
    record = outcome.record
    cols = st.columns(4)
    cols[0].metric(
        "count", record.count, delta=record.count_delta, delta_color="off", help=help_for("count")
    )
    cols[1].metric("appended", record.appended, help=help_for("appended"))
    cols[2].metric(
        "appended_any", "true" if record.appended_any else "false", help=help_for("appended_any")
    )
    cols[3].metric("verdict", record.verdict, help=VERDICTS[record.verdict])


def _spell(value: object) -> str:
    """A report value as the specification writes it: true, 3, appended."""
    return value if isinstance(value, str) else json.dumps(value)


def spec_report(outcome: WalkOutcome, *, expected: bool) -> str:
    """The report in the form MEM-14's examples give it, with its verdict."""
    fields = {c.field: (c.expected if expected else c.actual) for c in outcome.checks}
    shown = {k: fields[k] for k in ("count", "appended", "appended_any") if fields[k] is not None}
    verdict = fields["verdict"] or "(not said)"
    return f'{json.dumps(shown)}\nverdict="{verdict}"'


def presenter_compare(outcome: WalkOutcome) -> None:
    """Expected next to actual, large, in the specification's own notation."""
    left, right = st.columns(2)
    with left:
        st.subheader("The example expects", anchor=False)
        st.code(spec_report(outcome, expected=True), language="json")
    with right:
        st.subheader("The buffer reported", anchor=False)
        st.code(spec_report(outcome, expected=False), language="json")


def checks_table(outcome: WalkOutcome) -> None:
    """Expected (the example file) next to actual, field by field."""
    st.dataframe(
        [
            {
                "field": c.field,
                "expected": "(not said)" if c.expected is None else _spell(c.expected),
                "actual": _spell(c.actual),
                "agrees": "yes" if c.ok else "NO",
            }
            for c in outcome.checks
        ],
        hide_index=True,
        width="stretch",
        alt="The report expected by the example file next to the one the buffer gave",
    )


page_shell("learn_mem14")
follow_goto_playground()

presenting = st.toggle(
    "Presenter mode",
    value=st.query_params.get("present") == "1",
    key="present",
    help="Large type, one example at a time, with previous and next.",
)
if presenting:
    st.query_params["present"] = "1"
else:
    st.query_params.pop("present", None)

if not st.session_state.get("_stop_seeded"):  # a link's ?stop= opens that stop (once)
    st.session_state._stop_seeded = True
    if st.query_params.get("stop") in KEYS:
        st.session_state.walk_stop = st.query_params["stop"]
if "walk_stop" not in st.session_state:
    st.session_state.walk_stop = KEYS[0]

if not presenting:
    with st.container(border=True, key="mem14_rule"):
        st.markdown(f"**MEM-14.** {RULE_SUMMARIES['MEM-14']} The rule's four points:")
        for n, sentence in enumerate(MEM14_POINTS, start=1):
            st.markdown(f"{n}. {sentence}")
    st.caption(
        "Walk through one example per point. Press each stop's button and compare the count "
        "with appended. The question mark next to each number explains it; the glossary has "
        "every term."
    )
    st.page_link("pages/glossary.py", label="Glossary", icon=":material/menu_book:")

nav = st.container(horizontal=True, vertical_alignment="center", key="walk_nav")
nav.button("Previous", key="walk_prev", on_click=go, args=(-1,), icon=":material/arrow_back:")
nav.segmented_control(
    "Stop",
    KEYS,
    format_func=LABELS.__getitem__,
    key="walk_stop",
    label_visibility="collapsed",
)
nav.button("Next", key="walk_next", on_click=go, args=(1,), icon=":material/arrow_forward:")

key = st.session_state.walk_stop or KEYS[0]
if st.query_params.get("stop") != key:
    st.query_params["stop"] = key  # a copied link opens this stop
stop = WALK[KEYS.index(key)]
n_pressed = presses(key)
outcome = run_walk_step(stop, SAMPLE_DIR, n_pressed)

if presenting:
    st.header(stop.title, anchor=False)
    st.subheader(f"MEM-14, point {stop.point}: {stop.sentence}", anchor=False)
else:
    st.subheader(stop.title, anchor=False, divider="gray")
    st.markdown(f"> **MEM-14, point {stop.point}.** {stop.sentence}")
    st.markdown(stop.intro)

before_col, incoming_col, after_col = st.columns(3)
scenario_outcome = outcome or run_walk_step(stop, SAMPLE_DIR)
assert scenario_outcome is not None
before, after = scenario_outcome.tagged()
with before_col:
    st.markdown("**Buffer before**")
    show_entries(
        before if outcome else [(e, "kept") for e, _ in before],
        "Chat",
        "Empty buffer.",
        key=f"walk_{key}_before",
    )
with incoming_col:
    st.markdown("**Incoming**")
    show_entries(
        [(m, "incoming") for m in scenario_outcome.incoming],
        "Chat",
        "Nothing incoming.",
        key=f"walk_{key}_incoming",
    )
    st.button(
        "Append" if not n_pressed else "Re-fire it",
        key=f"walk_{key}_press",
        on_click=press,
        args=(key,),
        type="primary",
        icon=":material/play_arrow:",
        width="stretch",
    )
    others = st.container(horizontal=True)
    others.button("Start over", key=f"walk_{key}_reset", on_click=start_over, args=(key,))
    if not presenting:
        others.button(
            "Open in playground",
            key=f"walk_{key}_open",
            on_click=open_in_playground,
            args=(key,),
            icon=":material/open_in_new:",
        )
with after_col:
    st.markdown("**Buffer after**")
    if outcome is None:
        st.caption("Press Append to run the example.")
    else:
        show_entries(
            after,
            "Chat",
            "Empty buffer: the refused scope returns nothing (MEM-14 point 4)."
            if outcome.record.refused
            else "Empty buffer.",
            key=f"walk_{key}_after",
        )

if outcome is not None:
    report_metrics(outcome)
    if presenting:
        presenter_compare(outcome)
    else:
        st.markdown("**Expected by the example, and what the buffer reported**")
        checks_table(outcome)
    if outcome.passed:
        st.info(stop.lesson, icon=":material/lightbulb:")
    else:
        st.error("The report differs from what the example expects.", icon=":material/error:")

if not presenting:
    st.subheader("What to take away", anchor=False, divider="gray")
    ran = [
        o
        for o in (run_walk_step(s, SAMPLE_DIR, 1) for s in WALK if presses(s.key))
        if o is not None
    ]
    if ran:
        st.dataframe(
            walk_summary(ran),
            hide_index=True,
            width="stretch",
            alt="Each stop run so far: the change in count next to appended",
        )
    if len(ran) == len(WALK):
        st.success(
            "The count stayed the same while a message landed, stayed the same while nothing "
            "landed, stayed the same through a replacement, read 0 under a refusal, and grew "
            "by two with one append. Only appended tells what came in: never derive it from "
            "the change in size.",
            icon=":material/check_circle:",
        )
    else:
        st.caption(f"{len(ran)} of {len(WALK)} stops run. Press Append on each to compare them.")

place.remember("learn_mem14")
