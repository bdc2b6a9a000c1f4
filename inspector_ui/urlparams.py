"""URL values checked before any widget reads them.

Widgets bound to the URL (``bind="query-params"``) take whatever a link
says; ``?window=1e309`` used to reach ``int()`` as infinity and end in a
traceback, ``?scope=banana`` silently became another scope. Each page names
its parameters here with a parser; a value the parser refuses is removed
from the URL (so the widget starts from its default) and a notice says what
was replaced, quoting the value as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from inspector_ui.display import clip_text, md_escape

_INT = re.compile(r"[0-9]{1,15}")

#: The largest window a widget or a link may set (a window past the conversation is no cap).
MAX_WINDOW = 1_000_000
#: The largest step number a link may name (past the last step means the newest).
MAX_STEP = 10**9


@dataclass(frozen=True)
class Param:
    """A URL parameter: its name, what it means, its default, and the test a value must pass."""

    name: str
    meaning: str
    default: Any
    valid: Callable[[str], bool]


def whole_number(low: int, high: int) -> Callable[[str], bool]:
    """Digits only (no sign, exponent, ``inf`` or ``nan``), between ``low`` and ``high``."""

    def check(value: str) -> bool:
        return bool(_INT.fullmatch(value)) and low <= int(value) <= high

    return check


def one_of(options: Iterable[str]) -> Callable[[str], bool]:
    """One of a fixed set of values."""
    allowed = frozenset(options)
    return allowed.__contains__


def check_url(params: Iterable[Param], *, defaults: Mapping[str, Any] | None = None) -> list[str]:
    """Remove every refused value from the URL and show one notice naming them all.

    ``defaults`` (name -> value) are written into the session state for the
    refused names, for widgets whose default lives there. Returns the names
    replaced.
    """
    replaced: list[str] = []
    lines: list[str] = []
    for param in params:
        if param.name not in st.query_params:
            continue
        values = st.query_params.get_all(param.name)
        if len(values) == 1 and param.valid(values[0]):
            continue
        shown, _ = clip_text(" ".join(values), 60)
        del st.query_params[param.name]
        st.session_state.pop(param.name, None)
        if defaults and param.name in defaults:
            st.session_state[param.name] = defaults[param.name]
        replaced.append(param.name)
        lines.append(
            f"URL: {param.name}={md_escape(shown)} is not {md_escape(param.meaning)}; "
            f"using {md_escape(param.default)} instead."
        )
    if lines:
        st.warning("  \n".join(lines), icon=":material/link_off:")
    return replaced


def seed_from_url(name: str, convert: Callable[[str], Any]) -> None:
    """On a session's first run, give an unbound widget the URL's (already checked) value.

    The window inputs are not bound with ``bind="query-params"``: Streamlit
    1.67 converts a bound integer input's URL value with ``int()`` before its
    own range check, so ``?window=inf`` raised ``OverflowError`` inside
    Streamlit, before any page code could refuse it. These inputs read the
    URL here (after :func:`check_url`) and write it back with
    :func:`mirror_to_url`.
    """
    seeded = f"_url_seeded_{name}"
    if st.session_state.get(seeded):
        return
    st.session_state[seeded] = True
    if name in st.query_params:
        st.session_state[name] = convert(st.query_params[name])


def mirror_to_url(name: str, value: Any, default: Any) -> None:
    """Keep the URL in step with an unbound widget: the value, or nothing when it is the default."""
    if value == default:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != str(value):
        st.query_params[name] = str(value)
