"""Spec examples: every scenario in sample_data/ that cites a rule, run against its expectations."""

from __future__ import annotations

import json
import re

import pandas as pd
import streamlit as st

from flowdrop_core.inspect.spec import field_checks, rule_index
from flowdrop_core.replay import CheckResult
from flowdrop_core.scenario import Scenario
from inspector_ui.cache import cached_check, samples
from inspector_ui.entries import show_entries
from inspector_ui.plain import md, show_text
from inspector_ui.playground_state import load_scenario_into_playground
from inspector_ui.samples import group_by_rule, rule_summary
from inspector_ui.shell import follow_goto_playground, page_shell

RULE_ID = re.compile(r"[A-Z]+-[0-9]+")


def open_in_playground(scenario: Scenario) -> None:
    load_scenario_into_playground(scenario, source=scenario.name)
    st.session_state.goto_playground = scenario.name  # switched below, after callbacks


def _cell(value: object) -> str:
    """A field's value as table text: JSON for structures, the value itself otherwise."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, default=str)


def _mark_verdict(row: pd.Series) -> list[str]:
    colour = {"fail": "background-color: #f8d7da", "pass": "background-color: #d1e7dd"}
    return [colour.get(row["verdict"], "")] * len(row)


def run_all() -> None:
    cached_check.clear()


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

st.caption(
    "Each card is a scenario file in `sample_data/`: a starting buffer, the node's settings, "
    "the append(s) and the expected report. The check replays it through the library."
)

index = rule_index(
    {rule: [m.name for m in members] for rule, members in groups.items()},
    {name: r.passed for name, r in results.items()},
)
with st.container(border=True, key="rule_index"):
    st.markdown("**Rule index**: jump to a rule's examples")
    links = st.container(horizontal=True, gap="small")
    for entry in index:  # rule ids and counts only: fixed vocabulary, safe as Markdown
        if RULE_ID.fullmatch(entry.rule):
            links.markdown(
                f"[{entry.rule}](#{entry.anchor}) {entry.passed}/{len(entry.examples)}",
                help=entry.summary,
                width="content",
            )

for rule, members in groups.items():
    st.subheader(
        md(rule), anchor=rule.lower() if RULE_ID.fullmatch(rule) else False, divider="gray"
    )
    st.markdown(f"*{md(rule_summary(rule))}*")
    for sample in members:
        scenario = sample.scenario
        assert scenario is not None
        result = results[sample.name]
        with st.container(border=True, key=f"card_{sample.name}"):
            head = st.container(horizontal=True, vertical_alignment="center")
            if result.passed:
                head.badge("pass", icon=":material/check:", color="green")
            else:
                head.badge("fail", icon=":material/close:", color="red")
            head.markdown(f"**{md(scenario.title or scenario.name)}**")
            for other in scenario.rules[1:]:
                if RULE_ID.fullmatch(other):  # badges render Markdown: rule ids only
                    head.badge(other, color="gray", help=rule_summary(other))
            st.caption(
                f"{md(sample.path.name)} · scope {scenario.config.scope} · window "
                f"{scenario.config.max_messages or 'no cap'} · context "
                f"{md(json.dumps(scenario.context))}"
            )
            with st.expander("What this example shows"):
                show_text(scenario.description or "(no description)", f"spec_{sample.name}_about")
            left, right = st.columns(2)
            with left:
                st.markdown("**Starting buffer**")
                show_entries(
                    [(e, "kept") for e in scenario.buffer],
                    "Chat",
                    "Empty buffer.",
                    key=f"spec_{sample.name}_buffer",
                )
            with right:
                st.markdown("**Append(s)**")
                for k, step in enumerate(scenario.steps, start=1):
                    msgs = step.append if isinstance(step.append, list) else [step.append]
                    st.text(
                        f"step {k}: {step.label}"
                        + (f"  context {json.dumps(step.context)}" if step.context else "")
                    )
                    show_entries(
                        [(m, "incoming") for m in msgs],
                        "Chat",
                        "Nothing incoming.",
                        key=f"spec_{sample.name}_step{k}",
                    )
            checks = field_checks(result)
            frame = pd.DataFrame(
                [
                    {
                        **c.row(),
                        "expected": _cell(c.row()["expected"]) if c.checked else "(not checked)",
                        "actual": _cell(c.actual),
                    }
                    for c in checks
                ],
                columns=["step", "field", "rule", "expected", "actual", "verdict"],
            )
            st.dataframe(
                frame.style.apply(_mark_verdict, axis=1),
                hide_index=True,
                alt="Each step's fields: expected and actual side by side, with the rule",
                column_config={
                    "step": st.column_config.NumberColumn("step", width=56),
                    "field": st.column_config.TextColumn("field", width=140),
                    "rule": st.column_config.TextColumn("rule", width=70),
                    "expected": st.column_config.TextColumn("expected", width="large"),
                    "actual": st.column_config.TextColumn("actual", width="large"),
                    "verdict": st.column_config.TextColumn("verdict", width=90),
                },
                key=f"fields_{sample.name}",
            )
            for mismatch in result.mismatches:
                st.error(md(mismatch))
            st.button(
                "Open in playground",
                key=f"open_{sample.name}",
                on_click=open_in_playground,
                args=(scenario,),
                icon=":material/open_in_new:",
            )
