"""Spec examples: every scenario in sample_data/ that cites a rule, one rule at a time.

Each card reads like the specification: the example's verdict words
(appended, dropped, replaced, healed, refused) expected next to actual, the
buffer before and after each step drawn as entries, the incoming messages
(or MEM-16's text input) as full JSON, and every field of the report with
the rule it is about. All checks come from :mod:`flowdrop_core.inspect.spec`.
"""

from __future__ import annotations

import json
import re

import streamlit as st

from flowdrop_core.inspect.spec import FieldCheck, field_checks, rule_index
from flowdrop_core.replay import CheckResult
from flowdrop_core.scenario import Scenario
from flowdrop_core.verdicts import VERDICTS
from inspector_ui.cache import cached_check, samples
from inspector_ui.entries import show_entries
from inspector_ui.plain import clip_value, md, md_with_code
from inspector_ui.playground_state import load_scenario_into_playground
from inspector_ui.samples import group_by_rule, rule_summary
from inspector_ui.shell import follow_goto_playground, page_shell

RULE_ID = re.compile(r"[A-Z]+-[0-9]+")
#: Structured fields: drawn as JSON beside the table, not squeezed into a cell.
STRUCTURED = ("messages", "provider.messages")


def open_in_playground(scenario: Scenario) -> None:
    load_scenario_into_playground(scenario, source=scenario.name)
    st.session_state.goto_playground = scenario.name  # switched below, after callbacks


def run_all() -> None:
    cached_check.clear()


def _scalar(value: object) -> str:
    """A report field as table text: JSON spelling (true, "7", "")."""
    return json.dumps(value, ensure_ascii=False)


def field_table(checks: list[FieldCheck], key: str) -> None:
    """The step's scalar fields: expected, actual, verdict, rule; narrow enough for 1280 px."""
    st.dataframe(
        [
            {
                "field": c.field,
                "expected": _scalar(c.expected) if c.checked else "(not checked)",
                "actual": _scalar(c.actual),
                "result": c.verdict,
                "rule": c.rule,
            }
            for c in checks
            if c.field not in STRUCTURED
        ],
        hide_index=True,
        width="stretch",
        alt="The step's report: expected and actual side by side, with the rule",
        column_config={
            "field": st.column_config.TextColumn("field", width="small"),
            "expected": st.column_config.TextColumn("expected", width="small"),
            "actual": st.column_config.TextColumn("actual", width="small"),
            "result": st.column_config.TextColumn("result", width="small"),
            "rule": st.column_config.TextColumn("rule", width="small"),
        },
        key=key,
    )


def structured(checks: list[FieldCheck], key: str) -> None:
    """The whole buffer and the provider view, expected next to actual, as readable JSON."""
    for c in checks:
        if c.field not in STRUCTURED:
            continue
        st.markdown(f"**{c.field}** ({c.rule}): {c.verdict}")
        left, right = st.columns(2)
        with left:
            st.caption("expected")
            if c.checked:
                st.json(clip_value(c.expected), expanded=True)
            else:
                st.caption("(not checked by the file)")
        with right:
            st.caption("actual")
            st.json(clip_value(c.actual), expanded=True)


def card(scenario: Scenario, result: CheckResult) -> None:
    """One example: what it shows, then each step's buffers, input and report."""
    name = scenario.name
    timeline = result.timeline
    with st.container(border=True, key=f"card_{name}"):
        head = st.container(horizontal=True, vertical_alignment="center")
        if result.passed:
            head.badge("meets the spec", icon=":material/check:", color="green")
        else:
            head.badge("does not meet the spec", icon=":material/close:", color="red")
        head.markdown(f"**{md(scenario.title or scenario.name)}**")
        for other in scenario.rules:
            if RULE_ID.fullmatch(other):  # badges render Markdown: rule ids only
                head.badge(other, color="gray", help=rule_summary(other))
        st.caption(
            f"{md(name)}.json · scope {md(scenario.config.scope)} · window "
            f"{scenario.config.max_messages or 'no cap'} · context "
            f"{md(json.dumps(scenario.context))}"
        )
        if scenario.description:
            st.markdown(md_with_code(scenario.description))
        for k, step in enumerate(scenario.steps, start=1):
            record = timeline.steps[k - 1]
            expected = scenario.expect[k - 1].verdict if k <= len(scenario.expect) else None
            st.markdown(
                f"**Step {k}: {md(step.label or 'append')}**: expected "
                f"**{expected or '(not said)'}**, actual **{record.verdict}**",
                help=VERDICTS.get(record.verdict, ""),
            )
            before, after, _ = timeline.tagged(k)
            cols = st.columns(3)
            with cols[0]:
                st.caption("buffer before")
                show_entries(before, "Chat", "Empty buffer.", key=f"spec_{name}_{k}_before")
            with cols[1]:
                if step.text is not None:
                    st.caption("text input (MEM-16)")
                    st.json(step.text.model_dump(), expanded=True)
                    st.caption("becomes")
                st.caption(
                    "incoming" + (f", context {json.dumps(step.context)}" if step.context else "")
                )
                st.json(clip_value(record.incoming), expanded=True)
            with cols[2]:
                st.caption("buffer after")
                show_entries(
                    [] if record.refused else after,
                    "Chat",
                    "Empty buffer (refused: MEM-14 point 4)."
                    if record.refused
                    else "Empty buffer.",
                    key=f"spec_{name}_{k}_after",
                )
            checks = [c for c in field_checks(result) if c.step == k]
            field_table(checks, key=f"fields_{name}_{k}")
            structured(checks, key=f"json_{name}_{k}")
        for mismatch in result.mismatches:
            st.error(md(str(mismatch)))
        st.button(
            "Open in playground",
            key=f"open_{name}",
            on_click=open_in_playground,
            args=(scenario,),
            icon=":material/open_in_new:",
        )


page_shell("spec_examples")
follow_goto_playground()

all_samples = samples()
groups = group_by_rule(all_samples)
results: dict[str, CheckResult] = {}
for sample in all_samples:
    if sample.scenario is not None:
        results[sample.name] = cached_check(str(sample.path), sample.path.stat().st_mtime)

broken = [s for s in all_samples if s.scenario is None]
passed = sum(1 for r in results.values() if r.passed)

top = st.container(horizontal=True, vertical_alignment="center")
top.button(
    "Run all examples",
    key="run_all",
    on_click=run_all,
    type="primary",
    icon=":material/play_arrow:",
)
if passed == len(results) and not broken:
    top.success(f"All {passed} examples pass.", icon=":material/check_circle:")
else:
    top.error(
        f"{passed} of {len(results)} examples pass; {len(broken)} file(s) could not be read.",
        icon=":material/error:",
    )
for sample in broken:
    st.error(md(f"{sample.path.name}: {sample.error}"))

index = rule_index(
    {rule: [m.name for m in members] for rule, members in groups.items()},
    {name: r.passed for name, r in results.items()},
)
rules = [entry.rule for entry in index]
labels = {e.rule: f"{e.rule} {e.passed}/{len(e.examples)}" for e in index}
wanted = st.query_params.get("rule")
if rules and st.session_state.get("spec_rule") not in rules:
    st.session_state.spec_rule = wanted if wanted in rules else rules[0]
chosen = st.segmented_control(
    "Rule",
    rules,
    format_func=lambda r: labels[r],
    key="spec_rule",
    help="One rule at a time: each with the examples that cite it first, and how many pass.",
)
if chosen:
    st.query_params["rule"] = chosen
    st.subheader(md(chosen), anchor=False, divider="gray")
    st.markdown(f"*{md(rule_summary(chosen))}*")
    st.caption(
        "Each card is a scenario file in `sample_data/`: a starting buffer, the node's settings, "
        "the append(s) and what the specification expects. The check replays it through the "
        "library."
    )
    for sample in groups[chosen]:
        assert sample.scenario is not None
        card(sample.scenario, results[sample.name])
