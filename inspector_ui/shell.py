"""What every page script runs first: page config, the navigation bar, the title.

The app uses Streamlit's classic layout (``app.py`` + ``pages/``) with the
built-in sidebar list switched off (``client.showSidebarNavigation = false``
in ``.streamlit/config.toml``); this bar of page links, drawn from
:mod:`inspector_ui.registry`, replaces it. There is no ``st.navigation``
call: with a ``pages/`` folder, Streamlit runs its classic router on every
request, including a deep link that is a fresh server's first request, so
every URL always meets the same router (see README, "Layout").
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from inspector_ui import place
from inspector_ui.registry import BY_KEY, PAGES, PLAYGROUND, PageSpec
from inspector_ui.visitor import require_token

#: The tab's icon, served by the app itself (inlined as a data URL).
ICON = Path(__file__).with_name("icon.svg")


def page_shell(key: str) -> PageSpec:
    """Configure the page, draw the navigation bar and the page's title; return its spec."""
    spec = BY_KEY[key]
    st.set_page_config(
        page_title=f"{spec.title} · FlowDrop buffer inspector",
        page_icon=str(ICON),  # a file of the app: the browser asks no font host for it
        layout="wide",
    )
    require_token()  # nothing of the page runs before the operator's token (when one is set)
    place.restore(key)  # a page switch comes back to where the person was
    nav = st.container(horizontal=True, gap="small", key="nav")
    with nav:
        for page in PAGES:
            nav.page_link(page.path, label=page.title, icon=page.icon, help=page.help)
    st.title(spec.title, anchor=False)
    return spec


def follow_goto_playground() -> None:
    """Switch to the playground when a callback asked for it (switch_page cannot run in one)."""
    name = st.session_state.pop("goto_playground", None)
    if name:
        st.switch_page(PLAYGROUND, query_params={"scenario": name})
