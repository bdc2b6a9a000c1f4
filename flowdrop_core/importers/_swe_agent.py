"""SWE-agent trajectories (``*.traj``): what the model saw, from ``history``.

A trajectory is ``{"environment", "trajectory": [...], "history": [...],
"info": {...}, "replay_config"}``. ``history`` is the conversation the agent
sent the model: OpenAI Chat messages (``role``, ``content`` as text or text
parts, ``tool_calls``) with SWE-agent's own fields: ``agent``,
``message_type`` (``system_prompt``, ``observation``, ``action``, ...),
``thought`` and ``action`` (the parts of an assistant message's content),
``is_demo`` (a demonstration shown in the prompt) and, on a ``tool``
message, ``tool_call_ids`` (a list) instead of ``tool_call_id``. It is read
as :mod:`.openai_chat` reads messages, origins ``history[3]``.
``trajectory`` (one step per action: ``action``, ``observation``,
``response``, ``thought``, ``state``) repeats ``history`` and is not read,
except a step whose response or observation no history message holds (a
note);
``info.submission`` (the patch the run produced) is a note.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers import _openai_chat as openai_chat
from flowdrop_core.importers._base import Out, PendingCalls, Problem, json_type
from flowdrop_core.importers._claims import Claim, Miss, Verdict

NAME = "swe-agent"
EXPECTS = (
    "a SWE-agent trajectory {'history': [{'role', 'content', 'agent', 'message_type', ...}], "
    "'trajectory', 'info'}"
)

#: SWE-agent's own message fields, beside OpenAI Chat's.
OWN = frozenset({"agent", "message_type", "thought", "action", "is_demo", "tool_call_ids"})
#: Fields that repeat the content (``thought`` + ``action`` make an assistant's text).
REPEATS = frozenset({"agent", "message_type", "thought", "action", "is_demo"})


def claims(document: Any) -> Verdict:
    """A ``history`` of role messages, with SWE-agent's fields on one of them or a
    ``trajectory`` beside it."""
    if not isinstance(document, dict):
        return Miss("", f"expected a trajectory object, got {json_type(document)}")
    history = document.get("history")
    if not isinstance(history, list) or not history:
        return Miss("", "no 'history' list of messages")
    for k, message in enumerate(history):
        if not (isinstance(message, dict) and "role" in message and "content" in message):
            return Miss(f"history[{k}]", "not a message {'role', 'content'}", 1 + k)
    if "trajectory" not in document and not any(OWN & set(m) for m in history):
        return Miss("", "no 'trajectory' and no SWE-agent message fields", 1 + len(history))
    return Claim("a trajectory")


def read(document: Any, out: Out) -> None:
    """Read ``history``; note the submission."""
    verdict = claims(document)
    if isinstance(verdict, Miss):
        raise Problem(verdict.where, verdict.what)
    chat = [_chat(message, f"history[{k}]", out) for k, message in enumerate(document["history"])]
    openai_chat._read_list(chat, "history", out, PendingCalls())
    _steps(document.get("trajectory"), out)
    submission_note(document.get("info"), "info", out)


def _steps(steps: Any, out: Out) -> None:
    """A ``trajectory`` step whose response or observation no history message holds (the
    history was rewritten after it, a retried step) is a note: the step's text is kept."""
    if not isinstance(steps, list):
        return
    said = "\n".join(str(m.get("content") or "") for m in out.messages)
    for k, step in enumerate(steps):
        if not isinstance(step, dict):
            continue
        texts = [step.get(key) for key in ("response", "observation")]
        missing = [t for t in texts if isinstance(t, str) and t.strip() and t.strip() not in said]
        if missing:
            out.note(f"trajectory[{k}]", "a step the history does not hold",
                     "the run's step-by-step record; the history the model saw has no such "
                     "turn", "\n".join(missing))  # fmt: skip


def _chat(message: dict[str, Any], where: str, out: Out) -> dict[str, Any]:
    """The message as OpenAI Chat has it: SWE-agent's fields dropped, ``tool_call_ids``
    as ``tool_call_id`` (a result that names several calls answers the first; a note
    names the others)."""
    chat = {k: v for k, v in message.items() if k not in OWN}
    ids = message.get("tool_call_ids")
    if isinstance(ids, list) and ids and "tool_call_id" not in chat:
        chat["tool_call_id"] = ids[0]
        if len(ids) > 1:
            out.note(f"{where}.tool_call_ids", "one result for several calls",
                     "the observation answers the first call it names", ids)  # fmt: skip
    return chat


def submission_note(info: Any, where: str, out: Out) -> None:
    """``info.submission`` (the patch a run submitted) as a note, with its exit status."""
    if not isinstance(info, dict):
        return
    submission = info.get("submission")
    if isinstance(submission, str) and submission.strip():
        status = info.get("exit_status")
        why = "what the run submitted, not a conversation message"
        out.note(f"{where}.submission", "submission",
                 f"{why} (exit status {status!r})" if status else why, submission)  # fmt: skip
