"""A page's place (its URL parameters) kept for the session, so a page switch returns to it.

Every page keeps where the person is in its URL (the Replay page's upload,
step, window, re-fire, filter and compare; the Store page's store, slot, tab
and step; Learn's stop). A link in the navigation bar opens a page with an
empty query string, and Streamlit drops the state of widgets that were not on
the page: coming back, the step followed the newest append again. So each page
remembers its URL at the end of a run, and a run that arrives with an empty
query string (a page switch) gets the remembered one back before any widget
reads it. A reload keeps the URL itself; a copied link is the URL.
"""

from __future__ import annotations

import streamlit as st


def _state_key(page: str) -> str:
    return f"_place_{page}"


def restore(page: str) -> None:
    """On a run that arrives without URL parameters, put back the page's remembered ones.

    The pages read a URL value into an unbound widget once per session
    (:func:`inspector_ui.urlparams.seed_from_url`, the decision filter): those
    marks are cleared for the restored names so the values are read again.
    """
    saved = st.session_state.get(_state_key(page))
    if not saved or len(st.query_params) > 0:
        return
    for name, value in saved.items():
        st.session_state.pop(f"_url_seeded_{name}", None)
        st.session_state.pop(f"_{name}_seeded", None)
        st.query_params[name] = value


def remember(page: str) -> None:
    """Remember the page's URL parameters as they stand (call at the end of a page's run)."""
    st.session_state[_state_key(page)] = st.query_params.to_dict()
