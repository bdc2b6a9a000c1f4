"""Bring the step into view after a jump: the one script the inspector runs in the page.

A jump (a finding picked, a pasted error's cause) selects a step whose caption is
far below the control that made it (about 1,550 px down on an 800 px screen).
Streamlit has no call that scrolls the page, so a jump asks for a scroll
(:func:`request_scroll`) and that run mounts a small component
(:func:`scroll_if_requested`) whose script waits for the run to end and scrolls
the step's caption (else its slider) to the middle of the screen. It carries no
data, only which elements to look for, from the inspector's own keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

__all__ = ["request_scroll", "scroll_if_requested"]

_JS = """
export default function (component) {
  const targets = component.data.targets;
  const idle = "[data-testid='stApp'][data-test-script-state='notRunning']";
  const deadline = Date.now() + 10000;
  const tick = () => {
    const found = document.querySelector(idle)
      ? targets.map((t) => document.querySelector(t)).find((e) => e)
      : null;
    if (found) {
      found.scrollIntoView({ block: "center" });
    } else if (Date.now() < deadline) {
      setTimeout(tick, 100);
    }
  };
  setTimeout(tick, 200);
}
"""

_SCROLL = st.components.v2.component("flowdrop_scroll_into_view", js=_JS)


def request_scroll(prefix: str) -> None:
    """Ask this run to bring the selected step into view (called by a jump's callback)."""
    st.session_state[f"{prefix}_scroll"] = int(st.session_state.get(f"{prefix}_scroll", 0)) + 1
    st.session_state[f"{prefix}_scroll_pending"] = True


def scroll_if_requested(prefix: str, targets: Sequence[str]) -> None:
    """Mount the scroll once after a jump: to the first of ``targets`` (CSS selectors) found."""
    if not st.session_state.pop(f"{prefix}_scroll_pending", False):
        return
    n = st.session_state.get(f"{prefix}_scroll", 0)
    _SCROLL(key=f"{prefix}_scroll_{n}", data={"targets": list(targets)}, height=0)
