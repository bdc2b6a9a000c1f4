"""Buffer entries as chat bubbles or JSON: role, tag, call ids, content as plain text."""

from __future__ import annotations

from typing import Any, Literal

import streamlit as st

from flowdrop_core.inspect.labels import entry_calls
from inspector_ui.display import ROLE_AVATARS, clip_text, entry_call_ids, entry_text, focus
from inspector_ui.plain import clip_value, md, show_text, shown

#: Tag colours for st.badge (fixed vocabulary from Timeline.tagged).
#: Badge colour per tag (Streamlit's named badge colours).
BadgeColor = Literal["gray", "green", "red", "violet", "orange", "blue"]
TAG_COLORS: dict[str, BadgeColor] = {
    "kept": "gray",
    "new": "green",
    "evicted": "red",
    "replaced": "violet",
    "placeholder inserted": "orange",
}


def show_entry_bubble(entry: Any, tag: str | None, key: str) -> None:
    """One buffer entry as a chat bubble: role, tag, call ids, content as plain text.

    ``key`` makes the entry's widgets (the download of a clipped content) unique.
    """
    role = entry.get("role", "?") if isinstance(entry, dict) else "?"
    name, _ = clip_text(str(role), 40)
    with st.chat_message(name, avatar=ROLE_AVATARS.get(str(role), ":material/help:")):
        head = st.container(horizontal=True, gap="small")
        with head:
            if role in ROLE_AVATARS:  # fixed vocabulary only: badges render Markdown
                st.badge(str(role), color="gray")
            if tag in TAG_COLORS or tag == "incoming":
                st.badge(tag, color=TAG_COLORS.get(tag, "blue"))
        ids = entry_call_ids(entry)
        if ids:  # call ids are data: through the one plain-text rule, clipped
            short, rest = clip_text(ids, 200)
            st.caption(md(short + (f" … ({rest:,} more characters)" if rest else "")))
        calls = entry_calls(entry)
        for call in calls:  # names and arguments are data: plain text, clipped
            short, rest = clip_text(call, 300)
            st.text(f"calls {shown(short)}" + (f" … ({rest:,} more characters)" if rest else ""))
        text = entry_text(entry)
        if text:
            show_text(text, key)
        elif not calls:
            st.caption("*(empty content)*")


def show_entries(tagged: list[tuple[Any, str]], mode: str, empty: str, key: str) -> None:
    """Tagged entries as chat bubbles or raw JSON; a long buffer shows what changed and the end.

    ``key`` names the place (``"r_before"``, ...) so widgets of two lists never collide.
    """
    show_focused(focus(tagged), mode, empty, key)


#: An item of :func:`inspector_ui.display.focus`: ``(position, entry, tag)`` or a skipped count.
Focused = tuple[int, Any, str] | int


def show_focused(items: list[Focused], mode: str, empty: str, key: str) -> None:
    """Entries already reduced by ``focus`` (what changed, its neighbours, the end)."""
    if not items:
        st.info(empty, icon=":material/inbox:")
        return
    if mode == "JSON":
        st.json(
            clip_value(
                [
                    {"position": item[0], "tag": item[2], "entry": item[1]}
                    if isinstance(item, tuple)
                    else {"skipped": f"{item} kept entries not shown"}
                    for item in items
                ]
            ),
            expanded=2,
        )
        return
    for item in items:
        if isinstance(item, int):
            st.caption(f"… {item} kept entries not shown …")
        else:
            show_entry_bubble(item[1], item[2], key=f"{key}_{item[0]}")
