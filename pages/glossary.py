"""Glossary: the words of GR-MEM, as every metric, pill and column of the inspector uses them."""

from __future__ import annotations

import streamlit as st

from flowdrop_core.inspect.glossary import GLOSSARY
from flowdrop_core.verdicts import VERDICTS
from inspector_ui.shell import page_shell

page_shell("glossary")
st.caption(
    "The same definitions are the help text (the question mark) of every metric and decision "
    "pill in the inspector."
)
for term in GLOSSARY.values():
    with st.container(border=True, key=f"term_{term.term.replace('-', '_')}"):
        head = st.container(horizontal=True, vertical_alignment="center")
        head.markdown(f"**{term.term}**")
        head.badge(term.rule, color="gray")
        st.markdown(term.short)
        st.caption(term.long)

st.subheader("Verdicts", anchor=False, divider="gray")
st.caption("The specification's one-word outcome of an append, as the Spec examples page uses it.")
st.dataframe(
    [{"verdict": word, "meaning": meaning} for word, meaning in VERDICTS.items()],
    hide_index=True,
    width="stretch",
    alt="Each verdict word and what it means",
)
