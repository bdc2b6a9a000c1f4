"""Learn MEM-14: press the buttons and watch count stay the same while appended differs.

Both examples are the spec's own, loaded from their sample scenario files and
run through a live :class:`~flowdrop_core.replay.Timeline`, one button press
per append.
"""

from __future__ import annotations

import streamlit as st

from flowdrop_core.replay import RULE_SUMMARIES, new_timeline
from flowdrop_core.scenario import load_scenario, step_context
from inspector_ui.entries import show_entries
from inspector_ui.plain import md
from inspector_ui.playground_state import load_scenario_into_playground
from inspector_ui.samples import SAMPLE_DIR
from inspector_ui.shell import follow_goto_playground, page_shell

EXAMPLES = {
    "full": ("mem-14-full-window", "Append the new message"),
    "refire": ("mem-14-refired-result", "Re-fire the tool result"),
}


def fresh(which: str) -> None:
    scenario = load_scenario(SAMPLE_DIR / f"{EXAMPLES[which][0]}.json")
    st.session_state[f"learn_{which}"] = new_timeline(
        scenario.config, scenario.context, scenario.buffer, name=scenario.name
    )
    st.session_state[f"learn_{which}_scenario"] = scenario


def press(which: str) -> None:
    timeline = st.session_state[f"learn_{which}"]
    scenario = st.session_state[f"learn_{which}_scenario"]
    step = scenario.steps[0]
    if timeline.steps:
        timeline.refire_last()
    else:
        timeline.append_step(step.append, context=step_context(scenario, step), label=step.label)


def open_in_playground(which: str) -> None:
    scenario = st.session_state[f"learn_{which}_scenario"]
    load_scenario_into_playground(scenario, source=scenario.name)
    st.session_state.goto_playground = scenario.name  # switched below, after callbacks


page_shell("learn_mem14")
follow_goto_playground()

for which in EXAMPLES:
    if f"learn_{which}" not in st.session_state:
        fresh(which)

st.markdown(f"> **MEM-14.** {RULE_SUMMARIES['MEM-14']}")
st.caption(
    "Every drop the buffer makes is silent, and the total count can look identical whether "
    "a turn landed or not. Press the buttons below and compare the two numbers."
)


def example(which: str, number: int, intro: str, lesson: str) -> None:
    timeline = st.session_state[f"learn_{which}"]
    scenario = st.session_state[f"learn_{which}_scenario"]
    label = EXAMPLES[which][1]
    st.subheader(f"{number}. {md(scenario.title)}", anchor=False, divider="gray")
    st.markdown(intro)
    n = len(timeline.steps)
    before_col, incoming_col, after_col = st.columns(3)
    with before_col:
        st.markdown("**Buffer before**")
        if n:
            before, _, _ = timeline.tagged(n)
        else:
            before = [(e, "kept") for e in timeline.buffer_after(0)]
        show_entries(before, "Chat", "Empty buffer.", key=f"learn_{which}_before")
    with incoming_col:
        st.markdown("**Incoming**")
        step = scenario.steps[0]
        show_entries(
            [
                (m, "incoming")
                for m in (step.append if isinstance(step.append, list) else [step.append])
            ],
            "Chat",
            "Nothing incoming.",
            key=f"learn_{which}_incoming",
        )
        st.button(
            label if not n else f"{label} again",
            key=f"learn_{which}_press",
            on_click=press,
            args=(which,),
            type="primary",
            icon=":material/play_arrow:",
            width="stretch",
        )
        others = st.container(horizontal=True)
        others.button("Start over", key=f"learn_{which}_reset", on_click=fresh, args=(which,))
        others.button(
            "Open in playground",
            key=f"learn_{which}_open",
            on_click=open_in_playground,
            args=(which,),
            icon=":material/open_in_new:",
        )
    with after_col:
        st.markdown("**Buffer after**")
        if n:
            _, after, _ = timeline.tagged(n)
            show_entries(after, "Chat", "Empty buffer.", key=f"learn_{which}_after")
        else:
            st.caption("Press the button to append.")
    if n:
        record = timeline.steps[-1]
        cols = st.columns(3)
        cols[0].metric("count", record.count, delta=record.count_delta, delta_color="off")
        cols[1].metric("appended", record.appended)
        cols[2].metric("appended_any", "true" if record.appended_any else "false")
        st.dataframe(
            [
                {
                    "press": r.step,
                    "count before": r.count_before,
                    "count": r.count,
                    "appended": r.appended,
                    "what happened": " ".join(ev.reason for ev in r.events),
                }
                for r in timeline.steps
            ],
            hide_index=True,
            alt="Each press: count before and after, appended, and why",
            column_config={"what happened": st.column_config.TextColumn(width="large")},
        )
        st.info(lesson, icon=":material/lightbulb:")


example(
    "full",
    1,
    "A three-message window already holds three entries. The incoming message is new, "
    "so the window evicts the oldest to make room.",
    "The buffer is three messages long before and after, but one of those three is the "
    "message that just arrived: `appended` is 1, `appended_any` is true. Press again: the "
    "same text is a new user turn each time, so it lands again while the count never moves.",
)
example(
    "refire",
    2,
    "The buffer holds an assistant turn that called tool `c1` and its result. The same "
    "result arrives again under the id the buffer already holds.",
    "The count is 2 again, the same as before, but for the opposite reason: nothing new "
    "landed. The result was dropped as a duplicate (MEM-1), which counts zero (MEM-14 "
    "point 3), so `appended` is 0 and `appended_any` is false.",
)

st.subheader("What to take away", anchor=False, divider="gray")
full, refire = st.session_state.learn_full, st.session_state.learn_refire
if full.steps and refire.steps:
    a, b = full.steps[0], refire.steps[0]
    st.dataframe(
        [
            {
                "example": "full window",
                "count change": a.count_delta,
                "appended": a.appended,
                "appended_any": a.appended_any,
            },
            {
                "example": "re-fired result",
                "count change": b.count_delta,
                "appended": b.appended,
                "appended_any": b.appended_any,
            },
        ],
        hide_index=True,
        alt="Both examples side by side: same count change, different appended",
    )
    st.success(
        "Both appends left the count unchanged. Only `appended` tells that the first turn "
        "landed and the second did not: never derive it from the change in size.",
        icon=":material/check_circle:",
    )
else:
    st.caption("Press both buttons above to compare the two examples side by side.")
