"""The playground's session state: the recipe (start + appends) and the sidebar settings.

Kept out of ``playground.py`` so other pages (Spec examples) can load a
scenario into the playground before switching to it.
"""

from __future__ import annotations

import copy
from typing import Any

import streamlit as st

from flowdrop_core.scenario import Scenario
from inspector_ui.display import CONTEXT_PRESETS

#: Sidebar text box key -> execution context field.
FIELD_OF = {"session": "session_id", "user": "user_id", "owner": "session_owner_id"}

#: Sidebar defaults (also the URL query parameter names): ready to append.
DEFAULTS: dict[str, Any] = {
    "window": 0,
    "scope": "session",
    "key": "chat_history",
    "storage": "memory",
    **{box: CONTEXT_PRESETS["a real user"][field] for box, field in FIELD_OF.items()},
}


def empty_recipe() -> dict[str, Any]:
    """A fresh session: empty starting buffer, no appends."""
    return {
        "name": "playground",
        "title": "",
        "rules": [],
        "description": "",
        "buffer": [],
        "steps": [],
        "source": None,
        "extra_context": {},
    }


def apply_preset(name: str) -> None:
    """Fill the context boxes from a one-click preset."""
    for box, field in FIELD_OF.items():
        if field in CONTEXT_PRESETS[name]:  # a preset sets only the fields it is about
            st.session_state[box] = CONTEXT_PRESETS[name][field]


def load_scenario_into_playground(
    scenario: Scenario, source: str | None = None, keep: frozenset[str] = frozenset()
) -> None:
    """Put a scenario's start, appends and settings in the playground (before widgets render).

    Settings named in ``keep`` (those a copied link already carries) are left alone.
    """
    context = dict(scenario.context or {})
    st.session_state.pg_recipe = {
        "name": scenario.name,
        "title": scenario.title,
        "rules": list(scenario.rules),
        "description": scenario.description,
        "buffer": copy.deepcopy(scenario.buffer),
        "steps": [step.model_dump(exclude_none=True) for step in scenario.steps],
        "source": source,
        "extra_context": {k: v for k, v in context.items() if k not in FIELD_OF.values()},
    }
    cfg = scenario.config
    settings: dict[str, Any] = {
        "window": cfg.max_messages,
        "scope": cfg.scope,
        "key": cfg.key,
        "storage": cfg.storage if cfg.storage in ("memory", "sqlite") else "memory",
        "step": len(scenario.steps),
    }
    for box, field in FIELD_OF.items():
        value = context.get(field)
        settings[box] = "" if value is None else str(value)
    for name, value in settings.items():
        if name not in keep:
            st.session_state[name] = value
    st.session_state.pg_error = None
    st.session_state.step_pinned = False  # follow the newest step
    st.session_state.pg_made = None  # the steps are made with the scenario's own settings
    st.session_state.pg_url_bad = False
    if source:
        st.session_state.pg_example = source
