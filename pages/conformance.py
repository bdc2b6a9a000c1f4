"""Conformance: this implementation's standing against every GR-MEM rule, MEM-1 to MEM-16.

The report is :func:`flowdrop_core.conformance.conformance_report`: the
conformance kit made from the example scenarios, run against this library.
This page draws it and offers it as Markdown and JSON, the same as
``flowdrop-buffer conformance``; an uploaded standing (the JSON that
``flowdrop-buffer conformance --against COMMAND --json`` writes for another
implementation) is shown beside it, rule by rule.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

from flowdrop_core.conformance import (
    ConformanceReport,
    StandingError,
    compare_standings,
    conformance_report,
    read_standing,
)
from inspector_ui.plain import md
from inspector_ui.samples import sample_scenarios
from inspector_ui.shell import page_shell

STATUS_ICONS = {
    "pass": ":material/check_circle:",
    "fail": ":material/cancel:",
    "no example": ":material/help:",
    "not covered": ":material/remove_circle:",
}
STATUS_COLORS: dict[str, Literal["green", "red", "orange", "gray"]] = {
    "pass": "green",
    "fail": "red",
    "no example": "orange",
    "not covered": "gray",
}


@st.cache_data(show_spinner="Checking every example…")
def report() -> ConformanceReport:
    """The report over sample_data/ (computed once per server: the files ship with the app)."""
    return conformance_report(s.scenario for s in sample_scenarios() if s.scenario is not None)


page_shell("conformance")
data = report()
summary = ", ".join(f"{n} {status}" for status, n in data.totals.items() if n)
if data.passed:
    st.success(f"No rule fails: {summary}.", icon=":material/verified:")
else:
    st.error(f"Some rules fail: {summary}.", icon=":material/error:")
st.caption(
    'MEM-14\'s text: "each implementation publishes its own standing against these rules". '
    "This is ours: each rule with the examples that cite it, replayed and checked, and the "
    "decisions taken where the specification leaves the point open."
)
downloads = st.container(horizontal=True)
downloads.download_button(
    "Markdown",
    data=data.to_markdown(),
    file_name="gr-mem-conformance.md",
    mime="text/markdown",
    icon=":material/download:",
    on_click="ignore",
)
downloads.download_button(
    "JSON",
    data=data.to_json(),
    file_name="gr-mem-conformance.json",
    mime="application/json",
    icon=":material/download:",
    on_click="ignore",
)
st.dataframe(
    [
        {
            "rule": r.rule,
            "status": r.status,
            "examples": f"{sum(e.passed for e in r.examples)}/{len(r.examples)}"
            if r.examples
            else "-",
            "summary": r.summary,
        }
        for r in data.rules
    ],
    hide_index=True,
    width="stretch",
    alt="Every GR-MEM rule with its status and how many of its examples pass",
)
for r in data.rules:
    with st.expander(f"{r.rule}: {r.status}", icon=STATUS_ICONS[r.status]):
        st.badge(r.status, color=STATUS_COLORS[r.status])
        st.markdown(md(r.summary))
        for e in r.examples:
            st.text(f"{'pass' if e.passed else 'FAIL'}  {e.name}: {e.title}")
            st.caption(md("verdicts: " + ", ".join(e.verdicts)))
            for m in e.mismatches:
                st.error(md(m))
        if r.evidence:
            st.caption(md(r.evidence))
        if r.decisions:
            st.markdown("**Decisions where the text is open**")
            for d in r.decisions:
                st.markdown(f"- {md(d)}")

st.subheader("Another implementation, side by side")
st.caption(
    "Run the kit against any implementation with `flowdrop-buffer conformance --against "
    '"COMMAND" --json > standing.json` (docs/conformance.md), then upload that file.'
)
uploaded = st.file_uploader(
    "Standing file (JSON)", type=["json"], key="conformance_standing", max_upload_size=5
)
if uploaded is not None:
    try:
        theirs = read_standing(uploaded.getvalue().decode("utf-8", "replace"), uploaded.name)
    except StandingError as exc:
        st.error(md(str(exc)), icon=":material/error:")
    else:
        rows = compare_standings(data, theirs)
        differ = [row["rule"] for row in rows if not row["same"]]
        st.info(
            md(
                f"Uploaded standing of {theirs.implementation} (theirs): "
                + ", ".join(f"{n} {status}" for status, n in theirs.totals.items() if n)
                + (f". Differs from ours on {', '.join(differ)}." if differ else ". Same as ours.")
            ),
            icon=":material/compare_arrows:",
        )
        st.dataframe(
            rows,
            hide_index=True,
            width="stretch",
            alt="Each rule's status here (ours) and in the uploaded standing (theirs)",
        )
        for r in theirs.rules:
            failed = [e for e in r.examples if not e.passed]
            if failed:
                with st.expander(
                    f"{theirs.implementation}: {r.rule} fails", icon=":material/cancel:"
                ):
                    for e in failed:
                        st.text(f"FAIL  {e.name}: {e.title}")
                        for m in e.mismatches:
                            st.text(m)
