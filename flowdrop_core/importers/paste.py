"""Paste routing: what a person pasted into the playground, read into a batch of messages.

A message or a list of messages the engine reads as they are is passed on
verbatim (the engine judges it); anything else goes through the importers'
detection (:func:`~flowdrop_core.importers.parse_conversation`), so what an
importer leaves out comes back as its notes. Every problem is one
:class:`InputProblem` naming what and where.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core.importers._base import CONTENT_KEYS, ImportNote
from flowdrop_core.importers._registry import (
    ConversationFormatError,
    loads_or_problem,
    parse_conversation,
)
from flowdrop_core.messages import InvalidMessagesError, read_messages

__all__ = ["InputProblem", "PastedInput", "parse_pasted", "parse_pasted_with_notes"]


class InputProblem(FlowdropError, ValueError):
    """Pasted text that is not a message, a list of messages or a known conversation format."""


@dataclass(frozen=True, slots=True)
class PastedInput:
    """What a paste reads as: the batch to append, and what an importer left out of it.

    ``format`` is the importer that read it, or ``None`` when the messages are
    passed on verbatim (then there are no notes: nothing was left out).
    """

    messages: list[Any]
    notes: list[ImportNote]
    format: str | None = None

    def notes_as_dicts(self) -> list[dict[str, Any]]:
        """The notes as rows (``where``, ``what``, ``why``, ``content``, ``unknown``)."""
        return [note.to_dict() for note in self.notes]


def parse_pasted(text: str, source: str = "pasted text") -> list[Any]:
    """The batch of :func:`parse_pasted_with_notes` (for callers that show no notes)."""
    return parse_pasted_with_notes(text, source).messages


#: Content keys the engine itself reads; any other key of ``CONTENT_KEYS`` is one it would lose.
_ENGINE_KEYS = frozenset({"content", "tool_calls", "tool_call_id"})


def _engine_loses(message: Any) -> bool:
    """Whether the engine, given ``message`` verbatim, would not read some of its content.

    True when a dict carries a content key the engine does not read (``parts``,
    ``additional_kwargs``, ``function_call``, ``toolUse``, ...), content that is
    an object, or a content list with anything but text parts
    (``{"type": "text", "text": str}``): tool_use / tool_result blocks, images,
    Bedrock ``{"text": ...}`` blocks. Role problems are not counted: the
    engine names those itself.
    """
    if not isinstance(message, dict):
        return False
    if (message.keys() & CONTENT_KEYS) - _ENGINE_KEYS:
        return True
    content = message.get("content")
    if isinstance(content, dict):
        return True
    if isinstance(content, list):
        return not all(
            isinstance(part, dict)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
            and not ((part.keys() & CONTENT_KEYS) - {"text"})
            for part in content
        )
    return False


def parse_pasted_with_notes(text: str, source: str = "pasted text") -> PastedInput:
    """Read what a person pasted into the playground into a batch of messages and notes.

    - A JSON object with a ``role``, or a JSON list holding any object with a
      ``role``, is passed on *verbatim* when every object in it is already
      engine-shaped, so the engine judges it and names a bad entry
      (``incoming[1]: missing 'role'``). Engine-shaped: no content key the
      engine does not read (``parts``, ``additional_kwargs``, ``function_call``,
      ``toolUse``...), and content text, null or a list of text parts; calls
      under ``tool_calls``. A wrong or missing role does not count: the engine
      names it.
    - Otherwise such role objects (OpenTelemetry ``parts``, Anthropic
      ``tool_use`` / ``tool_result`` blocks, LangChain ``additional_kwargs``,
      Gemini, Bedrock) go through the importers' detection, which reads what
      the verbatim path would lose; a single object is read as a one-item
      list (origins ``[0]...``). If no importer reads them, they are passed on
      verbatim (the engine keeps unknown fields in the stored row) as before.
    - Anything else is tried as a recorded conversation in every importable
      format (OpenAI chat / responses, Anthropic, LangChain, OTel, scenario,
      JSONL, ...).

    Imported batches carry the importer's notes (what it left out, where,
    why). The JSON is strict (``NaN``, lone surrogates and nesting
    past :data:`~flowdrop_core.scenario.MAX_JSON_DEPTH` are refused with their
    JSON path). Raises :class:`InputProblem` naming the problem and
    where it is, and nothing else.
    """
    if not isinstance(text, str):
        raise InputProblem(f"{source} is not text (got {type(text).__name__})")
    if not text or not text.strip():
        raise InputProblem(
            f"{source} is empty: paste a message, a list of messages or a conversation"
        )
    try:
        document = loads_or_problem(text)
    except ConversationFormatError as exc:
        document = None
        json_problem: str | None = str(exc)
    else:
        json_problem = None
    batch: list[Any] | None = None
    if isinstance(document, dict) and "role" in document:
        batch = [document]
    elif isinstance(document, list) and any(isinstance(m, dict) and "role" in m for m in document):
        batch = document
    if batch is not None:
        if not any(_engine_loses(m) for m in batch):
            return PastedInput(batch, [])
        try:
            imported = parse_conversation(
                text if batch is document else json.dumps(batch), source_name=source
            )
        except (ConversationFormatError, RecursionError, ValueError):
            return PastedInput(batch, [])  # no reader for it: the engine judges it as before
        # an import is never empty (the registry refuses one with no message)
        return PastedInput(imported.messages, imported.notes, imported.format)
    if isinstance(document, list) and not document:
        raise InputProblem(f"{source} is an empty list: there is nothing to append")
    try:
        conversation = parse_conversation(text, source_name=source)
    except ConversationFormatError as exc:
        if json_problem is not None and "\n" not in text.strip():
            raise InputProblem(f"{source}: {json_problem}") from None
        cause = _message_problem(document)
        if cause is not None:  # it looks like messages: the cause first, the guesses after
            raise InputProblem(
                f"{source}: {cause}. It is not a recorded conversation either:\n{exc}"
            ) from None
        raise InputProblem(str(exc)) from None
    return PastedInput(conversation.messages, conversation.notes, conversation.format)


#: Top-level keys of the recorded formats: a pasted object with one of them is a document.
_DOCUMENT_KEYS = frozenset({"messages", "input", "output", "steps"})


def _message_problem(document: Any) -> str | None:
    """What the engine says is wrong with pasted JSON that looks like messages, if it does.

    An object without a format's top-level key, or a list of objects, is read
    as the message(s) it looks like, so ``{"content": "hi"}`` is reported as
    ``incoming[0]: missing 'role'`` before any format guess (the same words a
    pasted list gets).
    """
    if isinstance(document, dict) and not (_DOCUMENT_KEYS & document.keys()):
        batch: list[Any] = [document]
    elif isinstance(document, list) and document and all(isinstance(m, dict) for m in document):
        batch = document
    else:
        return None
    try:
        read_messages(batch)
    except InvalidMessagesError as exc:
        return "; ".join(str(p) for p in exc.problems)
    return None
