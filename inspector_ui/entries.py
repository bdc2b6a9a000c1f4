"""Buffer entries as chat bubbles or JSON: role, tag, call ids, content as plain text."""

from __future__ import annotations

from typing import Any

import streamlit as st

from flowdrop_core.view import ROLE_AVATARS, entry_call_ids, entry_text, focus

#: Tag colours for st.badge (fixed vocabulary from Timeline.tagged).
TAG_COLORS = {
    "kept": "gray",
    "new": "green",
    "evicted": "red",
    "replaced": "violet",
    "placeholder inserted": "orange",
}


def show_entry_bubble(entry: Any, tag: str | None = None) -> None:
    """One buffer entry as a chat bubble: role, tag, call ids, content as plain text."""
    role = entry.get("role", "?") if isinstance(entry, dict) else "?"
    with st.chat_message(str(role), avatar=ROLE_AVATARS.get(str(role), ":material/help:")):
        head = st.container(horizontal=True, gap="small")
        with head:
            if role in ROLE_AVATARS:  # fixed vocabulary only: badges render Markdown
                st.badge(str(role), color="gray")
            if tag in TAG_COLORS or tag == "incoming":
                st.badge(tag, color=TAG_COLORS.get(tag, "blue"))
        ids = entry_call_ids(entry)
        if ids:  # call ids are data: shown inside a code span, which renders literally
            literal = ids.replace("`", "'")
            st.caption(f"`{literal}`")
        text = entry_text(entry)
        if text:
            st.text(text)
        else:
            st.caption("*(empty content)*")


def show_entries(tagged: list[tuple[Any, str]], mode: str, empty: str) -> None:
    """Tagged entries as chat bubbles or raw JSON; a long buffer shows what changed and the end."""
    if not tagged:
        st.info(empty, icon=":material/inbox:")
        return
    items = focus(tagged)
    if mode == "JSON":
        st.json(
            [
                {"position": item[0], "tag": item[2], "entry": item[1]}
                if isinstance(item, tuple)
                else {"skipped": f"{item} kept entries not shown"}
                for item in items
            ],
            expanded=2,
        )
        return
    for item in items:
        if isinstance(item, int):
            st.caption(f"… {item} kept entries not shown …")
        else:
            show_entry_bubble(item[1], item[2])
