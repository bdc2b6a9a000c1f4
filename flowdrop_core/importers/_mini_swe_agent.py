"""mini-SWE-agent trajectories (``*.traj.json``).

A trajectory is ``{"info": {...}, "messages": [...], "trajectory_format":
"mini-swe-agent-1" | "mini-swe-agent-1.1"}``. ``messages`` are OpenAI Chat
messages (``role``, ``content``; tool-calling models add ``tool_calls`` and
``tool`` messages), read as :mod:`.openai_chat` reads them (origins
``messages[3]``). Version 1.1 (mini-SWE-agent 2) adds ``extra`` to each
message (the parsed actions, the raw model response, return codes, costs and
timestamps: bookkeeping, not read) and ends a run with an ``exit`` message
(its text is a note). ``info.submission`` (the patch) is a note; ``info.config``
and ``model_stats`` are settings.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers import _openai_chat as openai_chat
from flowdrop_core.importers._base import Out, PendingCalls, Problem, json_type
from flowdrop_core.importers._claims import Claim, Miss, Verdict
from flowdrop_core.importers._swe_agent import submission_note

NAME = "mini-swe-agent"
EXPECTS = (
    "a mini-SWE-agent trajectory {'info': {'mini_version', 'exit_status', ...}, 'messages': "
    "[{'role', 'content', 'extra'}], 'trajectory_format': 'mini-swe-agent-1...'}"
)


def claims(document: Any) -> Verdict:
    """``messages`` beside a ``trajectory_format`` naming mini-swe-agent, or an ``info``
    with ``mini_version``."""
    if not isinstance(document, dict):
        return Miss("", f"expected a trajectory object, got {json_type(document)}")
    fmt = document.get("trajectory_format")
    info = document.get("info")
    if not (
        (isinstance(fmt, str) and fmt.startswith("mini-swe-agent"))
        or (isinstance(info, dict) and "mini_version" in info)
    ):
        return Miss("", "no 'trajectory_format' 'mini-swe-agent...' and no 'info.mini_version'")
    messages = document.get("messages")
    if not isinstance(messages, list) or not messages:
        return Miss("messages", "no non-empty 'messages' list", 1)
    for k, message in enumerate(messages):
        if not (isinstance(message, dict) and "role" in message):
            return Miss(f"messages[{k}]", "not a message {'role', 'content'}", 2 + k)
    return Claim("a trajectory")


def read(document: Any, out: Out) -> None:
    """Read ``messages`` (``exit`` messages as notes); note the submission."""
    verdict = claims(document)
    if isinstance(verdict, Miss):
        raise Problem(verdict.where, verdict.what)
    chat: list[Any] = []
    places: list[int] = []
    for k, message in enumerate(document["messages"]):
        where = f"messages[{k}]"
        if message.get("role") == "exit":
            out.note(where, "exit message", "how the run ended, not a conversation message",
                     message.get("content"))  # fmt: skip
            continue
        chat.append({key: value for key, value in message.items() if key != "extra"})
        places.append(k)
    read = Out()
    try:
        openai_chat._read_list(chat, "", read, PendingCalls())
    except Problem as problem:
        raise Problem(_place(problem.where, places), problem.what) from None
    exits = out.notes[:]
    out.notes.clear()
    out.extend(read, lambda origin: _place(origin, places))
    out.notes.extend(exits)
    submission_note(document.get("info"), "info", out)


def _place(origin: str, places: list[int]) -> str:
    """``[2].content`` (an index among the read messages) -> ``messages[3].content``."""
    if not origin.startswith("["):
        return origin
    index, _, rest = origin[1:].partition("]")
    if not index.isdecimal() or int(index) >= len(places):
        return origin
    return f"messages[{places[int(index)]}]{rest}"
