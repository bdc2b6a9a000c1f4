"""FlowDrop buffer inspector: the Streamlit entry point and router.

Run with ``make run`` (or ``streamlit run app.py``). The pages live in
``app_pages/`` (not ``pages/``: Streamlit treats a ``pages/`` folder next to
the entry point as the legacy multipage layout and bypasses ``st.navigation``).
They hold no buffer logic: they call ``flowdrop_core`` and render its results.
"""

import streamlit as st

st.set_page_config(
    page_title="FlowDrop buffer inspector",
    page_icon=":material/inventory_2:",
    layout="wide",
)

page = st.navigation(
    [
        st.Page(
            "app_pages/playground.py",
            title="Playground",
            icon=":material/science:",
            default=True,
            help=(
                "Append messages under a window, scope and identity of your choice and watch "
                "count and appended per step, with the events that explain them."
            ),
        ),
        st.Page(
            "app_pages/replay.py",
            title="Replay",
            icon=":material/replay:",
            help=(
                "Upload a recorded conversation or pick a sample, replay it per message or per "
                "turn, and travel through its timeline step by step."
            ),
        ),
        st.Page(
            "app_pages/spec_examples.py",
            title="Spec examples",
            icon=":material/fact_check:",
            help=(
                "Every example of the GR-MEM rules as a runnable scenario, grouped by rule, "
                "with expected and actual results. Open any of them in the playground."
            ),
        ),
        st.Page(
            "app_pages/learn_mem14.py",
            title="Learn MEM-14",
            icon=":material/school:",
            help=(
                "A short guided walk through MEM-14's two examples: the count stays the same "
                "while appended tells whether a turn landed."
            ),
        ),
    ],
    position="top",
)

st.title(page.title, anchor=False)
page.run()
