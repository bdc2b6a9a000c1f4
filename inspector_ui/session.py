"""The playground's session in the URL, Reset with undo, and the compare view.

* The appends travel in the URL (``?appends=1.…``, :mod:`flowdrop_core.inspect.session_url`),
  with the settings they were made with; past the size limit the page says
  so and offers the scenario file instead.
* Reset keeps what it cleared until the next append, so it can be undone.
* Changing a setting does not rewrite history: the steps keep the settings
  they were made with (``pg_made``), and the timeline under the new
  settings is shown next to it with the differing steps marked, until the
  person picks which settings are current.
"""

from __future__ import annotations

import copy
from typing import Any

import streamlit as st

from flowdrop_core.inspect.compare import Comparison
from flowdrop_core.inspect.session_url import PARAM, SessionUrlError, decode_session, encode_session
from flowdrop_core.replay import Timeline
from inspector_ui.calls import show_what_if
from inspector_ui.compare import cached_comparison, show_call_fates, show_differences
from inspector_ui.plain import md

#: The sidebar settings a session is made with (session state keys, also URL parameters).
SETTING_KEYS = ("window", "scope", "key", "storage", "session", "user", "owner")


def current_settings() -> dict[str, Any]:
    """The sidebar's settings as they stand (before the widgets render: their state)."""
    return {name: st.session_state.get(name) for name in SETTING_KEYS}


def describe(settings: dict[str, Any]) -> str:
    """``window 3 · scope user · session s-42 · user 0`` for captions (escape before Markdown)."""
    window = settings.get("window") or 0
    parts = [f"window {window}" if window else "no window", f"scope {settings.get('scope')}"]
    for box, name in (("session", "session"), ("user", "user"), ("owner", "owner")):
        value = settings.get(box)
        parts.append(f"{name} {value!r}" if value not in (None, "") else f"no {name}")
    return " · ".join(parts)


# --------------------------------------------------------------------------- URL


def restore_from_url() -> None:
    """On a fresh session, load ``?appends=`` into the recipe (a bad link is a named error)."""
    if st.session_state.get("pg_url_checked"):
        return
    st.session_state.pg_url_checked = True
    value = st.query_params.get(PARAM)
    if not value:
        return
    try:
        found = decode_session(value)
    except SessionUrlError as exc:
        st.session_state.pg_error = str(exc)
        st.session_state.pg_url_bad = True  # keep the link as it is: nothing is lost
        return
    st.session_state.pg_recipe = found.recipe()
    made = {k: v for k, v in found.settings.items() if k in SETTING_KEYS}
    st.session_state.pg_made = made or None
    for name, value in made.items():  # the link's own sidebar parameters win
        if name not in st.query_params:
            st.session_state[name] = value


def write_to_url(recipe: dict[str, Any], made: dict[str, Any] | None) -> str | None:
    """Put the session in the URL; returns the too-large message instead when it does not fit."""
    if st.session_state.get("pg_url_bad"):
        return None
    empty = not recipe["steps"] and not recipe["buffer"]
    if empty or recipe.get("source"):  # nothing to keep, or a sample already named in the URL
        if PARAM in st.query_params:
            del st.query_params[PARAM]
        return None
    encoded = encode_session(recipe, made)
    if encoded.value is None:  # it does not fit
        if PARAM in st.query_params:
            del st.query_params[PARAM]
        return encoded.message
    if st.query_params.get(PARAM) != encoded.value:
        st.query_params[PARAM] = encoded.value
    return None


def url_changed() -> None:
    """The person changed the session: a bad link in the URL may now be replaced."""
    st.session_state.pg_url_bad = False


# --------------------------------------------------------------------------- reset / undo


def reset(empty: dict[str, Any]) -> None:
    """Clear the session, keeping it for one undo."""
    st.session_state.pg_reset_backup = (
        copy.deepcopy(st.session_state.pg_recipe),
        copy.deepcopy(st.session_state.get("pg_made")),
    )
    st.session_state.pg_recipe = empty
    st.session_state.pg_made = None
    st.session_state.pg_error = None
    url_changed()


def undo_reset() -> None:
    backup = st.session_state.pop("pg_reset_backup", None)
    if backup is not None:
        st.session_state.pg_recipe, st.session_state.pg_made = backup
        url_changed()


# --------------------------------------------------------------------------- compare


def made_settings() -> dict[str, Any]:
    """The settings the steps were made with (adopting the sidebar's while there are none)."""
    made = st.session_state.get("pg_made")
    recipe = st.session_state.pg_recipe
    current = current_settings()
    if made is None or (not recipe["steps"] and not recipe["buffer"]):
        made = dict(current)
        st.session_state.pg_made = made
    return {**current, **made}


def adopt_current() -> None:
    """The person picked the new settings: they become the ones the steps are made with."""
    st.session_state.pg_made = current_settings()
    url_changed()


def restore_made() -> None:
    """The person picked the settings the steps were made with: put them back in the sidebar."""
    for name, value in (st.session_state.get("pg_made") or {}).items():
        st.session_state[name] = value


def _compare_header(made_with: dict[str, Any], now: dict[str, Any]) -> None:
    """The panel's title and caption: the same words whatever the new settings report."""
    changed = [k for k in SETTING_KEYS if made_with.get(k) != now.get(k)]
    st.markdown("**Compare, don't rewrite: the new settings are not applied yet**")
    st.caption(
        f"Made with: {md(describe(made_with))}  \n"
        f"New: {md(describe(now))}  \n"
        f"Changed: {md(', '.join(changed))}. The inspector below still shows the "
        "steps as they were made; this panel shows what the new settings would report."
    )


def show_compare_refused(made_with: dict[str, Any], now: dict[str, Any], error: str) -> None:
    """The what-if panel when the new settings run nothing (e.g. a scope no context resolves)."""
    with st.container(border=True, key="pg_compare"):
        _compare_header(made_with, now)
        st.warning(
            f"Under the new settings nothing runs: {md(error)}",
            icon=":material/compare_arrows:",
        )
        buttons = st.container(horizontal=True)
        buttons.button(
            "Use the new settings",
            key="pg_adopt",
            disabled=True,
            icon=":material/done:",
            help="Nothing runs under them; change them, or keep the ones the steps were made with.",
        )
        buttons.button(
            "Keep the settings the steps were made with",
            key="pg_restore",
            on_click=restore_made,
            icon=":material/undo:",
        )


def show_compare(
    made: Timeline,
    other: Timeline,
    made_with: dict[str, Any],
    now: dict[str, Any],
    step: int,
    key: str,
) -> Comparison:
    """The what-if panel: both settings, the differing steps, the selected step's calls."""
    comparison = cached_comparison(made, other)
    with st.container(border=True, key="pg_compare"):
        _compare_header(made_with, now)
        if comparison.differences:
            st.warning(md(comparison.summary()), icon=":material/compare_arrows:")
        else:
            st.success(md(comparison.summary()), icon=":material/check:")
        buttons = st.container(horizontal=True)
        buttons.button(
            "Use the new settings",
            key="pg_adopt",
            on_click=adopt_current,
            type="primary",
            icon=":material/done:",
            help="The timeline is replayed under the new settings and becomes current.",
        )
        buttons.button(
            "Keep the settings the steps were made with",
            key="pg_restore",
            on_click=restore_made,
            icon=":material/undo:",
        )
        show_what_if(made, other, describe(now))
        if comparison.differences:
            show_differences(comparison, step, key, "pg")
        if step > 0 and step <= min(len(made.steps), len(other.steps)):
            show_call_fates(made, other, step)
    return comparison
