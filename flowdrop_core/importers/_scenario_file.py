"""Scenario files read as a recorded conversation: the starting buffer, then every step."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from flowdrop_core.importers._base import Out, Problem, json_type
from flowdrop_core.importers._claims import Claim, Miss, Verdict
from flowdrop_core.importers._openai_chat import chat_message
from flowdrop_core.scenario import Scenario, _readable_errors

NAME = "scenario"
EXPECTS = "a scenario object with 'steps' (see docs/scenario-format.md)"


def claims(document: Any) -> Verdict:
    """A scenario: an object with a ``steps`` list."""
    if isinstance(document, dict) and isinstance(document.get("steps"), list):
        return Claim("a scenario")
    return Miss("", "not a scenario (no 'steps' list)")


def read(document: Any, out: Out) -> None:
    """A scenario file: its starting buffer, then every step's messages, in order."""
    if not isinstance(document, dict):
        raise Problem("", f"expected a scenario object, got {json_type(document)}")
    if "steps" not in document:
        raise Problem("", "not a scenario (no 'steps')")
    try:
        scenario = Scenario.model_validate(document)
    except ValidationError as exc:
        raise Problem("", _readable_errors(exc)[0]) from None
    for i, entry in enumerate(scenario.buffer):
        where = f"buffer[{i}]"
        out.add(chat_message(entry, where, out), where)
    for s, step in enumerate(scenario.steps):
        batch = step.append if isinstance(step.append, list) else [step.append]
        for k, entry in enumerate(batch):
            where = f"steps[{s}].append" + (f"[{k}]" if isinstance(step.append, list) else "")
            out.add(chat_message(entry, where, out), where)
