"""Import notes next to an upload or a paste: what an importer left out, where and why.

The notes come from the library (:class:`flowdrop_core.importers.ImportNote`);
this view only counts them and lists them as plain text: a caption through
:func:`~inspector_ui.plain.md` and a table whose cells are clipped
(:func:`~inspector_ui.display.clip_frame`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from inspector_ui.display import clip_frame
from inspector_ui.plain import md

__all__ = ["NOTE_COLUMNS", "notes_caption", "show_import_notes"]

#: The table's columns, in order.
NOTE_COLUMNS = ("where", "what", "why", "content")


def notes_caption(count: int) -> str:
    """The count line shown above the table."""
    noun = "import note" if count == 1 else "import notes"
    return f"{count:,} {noun}: parts of the recording that are not messages"


def show_import_notes(notes: Sequence[Mapping[str, Any]], key: str, source: str = "") -> None:
    """Count the notes and list them (where, what, why, content clipped) in an expander.

    Nothing is drawn when there are no notes. ``source`` names the file or
    paste in the caption; ``key`` keeps the table's element id unique.
    """
    if not notes:
        return
    prefix = f"{md(source)}: " if source else ""
    st.caption(f":material/sticky_note_2: {prefix}{md(notes_caption(len(notes)))}")
    with st.expander(f"Import notes ({len(notes):,})", key=f"{key}_notes_box"):
        frame = pd.DataFrame(
            [{column: str(note.get(column, "")) for column in NOTE_COLUMNS} for note in notes],
            columns=list(NOTE_COLUMNS),
        )
        st.dataframe(clip_frame(frame), hide_index=True, key=f"{key}_notes")
