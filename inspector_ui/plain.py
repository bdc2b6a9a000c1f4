"""Data shown as text, never as markup, and never so long that it freezes the page.

The rule: everything that came from input is drawn with
``st.text`` / ``st.code`` / ``st.json`` / dataframe cells, or, inside an
alert, caption or markdown, through :func:`inspector_ui.display.md_escape`
(re-exported here as :func:`md`), the one helper that neutralises every
Markdown and HTML meaning. A value longer than
:data:`~inspector_ui.display.CLIP` characters is drawn clipped, with a note of
how much is missing and a download of the whole.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from inspector_ui.display import CLIP, clip_text, clip_value, md_escape, shown

__all__ = ["clip_value", "md", "md_with_code", "show_text", "shown"]

md = md_escape


def md_with_code(text: str) -> str:
    """Markdown for prose that marks code with backticks: code spans kept, the rest escaped.

    The text between two backticks becomes an inline code span (inside which
    Markdown reads nothing); everything else goes through :func:`md`. An
    unpaired backtick is escaped like any other punctuation.
    """
    parts = text.split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: the last one is plain text
        parts[-2:] = [parts[-2] + "`" + parts[-1]]
    out = []
    for k, part in enumerate(parts):
        if k % 2 and part.strip():
            out.append("`" + " ".join(part.splitlines()) + "`")
        else:
            out.append(md(part))
    return "".join(out)


def show_text(text: str, key: str, *, limit: int = CLIP, file_name: str = "content.txt") -> None:
    """``text`` as plain text, clipped past ``limit`` characters with the whole one click away.

    Controls a page would obey (a bidi override) are drawn as their escapes (:func:`shown`).
    """
    head, rest = clip_text(text, limit)
    if not rest:
        st.text(shown(text))
        return
    st.text(shown(head) + " …")
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(f"{rest:,} characters clipped (of {len(text):,}).")
    row.download_button(
        f"Whole content ({len(text):,} characters)",
        data=_whole(text),
        file_name=file_name,
        mime="text/plain",
        icon=":material/download:",
        key=f"whole_{key}",
        on_click="ignore",
    )


def _whole(text: str) -> Any:
    """A deferred download: the text is sent only when the button is pressed."""
    return lambda: text
