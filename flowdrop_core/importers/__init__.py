"""Importers: recorded conversations on disk -> provider-flat messages with origins and notes.

The inspector replays what people actually have on disk:
one module per format, each declaring what makes a document its own
(``claims``, :mod:`.claims`), and a small registry (:mod:`.registry`) that
lists them, detects and names what ``--format`` takes. Every format becomes the
same provider-flat messages (OpenAI Chat shape), each with an *origin* (where
it came from in the file), and everything of the source that is not in them
is an :class:`ImportNote` (what, where, why): nothing is lost silently.
:mod:`.paste` routes what a person pasted: verbatim messages or an import.

Importers read; they do not judge. Duplicate results, unanswered calls and
unusable ids are what the inspector must show, so they are imported as they
are; ``strict=True`` rejects orphan results. See ``docs/formats.md``.
"""

from __future__ import annotations

from flowdrop_core.importers._base import ERROR_PREFIX, ImportNote
from flowdrop_core.importers._claims import Claim, Miss
from flowdrop_core.importers._registry import (
    FORMATS,
    REGISTRY,
    ConversationFormatError,
    Format,
    ImportedConversation,
    group_turns,
    load_conversation,
    load_conversations,
    loads_or_problem,
    parse_conversation,
    parse_conversations,
)
from flowdrop_core.importers.paste import (
    InputProblem,
    PastedInput,
    parse_pasted,
    parse_pasted_with_notes,
)

__all__ = [
    "ERROR_PREFIX",
    "FORMATS",
    "REGISTRY",
    "Claim",
    "ConversationFormatError",
    "Format",
    "ImportNote",
    "ImportedConversation",
    "InputProblem",
    "Miss",
    "PastedInput",
    "group_turns",
    "load_conversation",
    "load_conversations",
    "loads_or_problem",
    "parse_conversation",
    "parse_conversations",
    "parse_pasted",
    "parse_pasted_with_notes",
]
