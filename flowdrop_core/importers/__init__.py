"""Importers: recorded conversations on disk -> provider-flat messages with origins and notes.

The inspector replays what people actually have on disk (issues 4 and 13):
one module per format, a small registry (:mod:`.registry`) that fixes the
detection order and the names ``--format`` takes. Every format becomes the
same provider-flat messages (OpenAI Chat shape), each with an *origin* (where
it came from in the file), and everything of the source that is not in them
is an :class:`ImportNote` (what, where, why): nothing is lost silently.
:mod:`.paste` routes what a person pasted: verbatim messages or an import.

Importers read; they do not judge. Duplicate results, unanswered calls and
unusable ids are what the inspector must show, so they are imported as they
are; ``strict=True`` rejects orphan results. See ``docs/formats.md``.
"""

from __future__ import annotations

from flowdrop_core.importers.base import ERROR_PREFIX, ImportNote
from flowdrop_core.importers.paste import (
    InputProblem,
    PastedInput,
    parse_pasted,
    parse_pasted_with_notes,
)
from flowdrop_core.importers.registry import (
    FORMATS,
    REGISTRY,
    ConversationFormatError,
    Format,
    ImportedConversation,
    group_turns,
    load_conversation,
    loads_or_problem,
    parse_conversation,
)

__all__ = [
    "ERROR_PREFIX",
    "FORMATS",
    "REGISTRY",
    "ConversationFormatError",
    "Format",
    "ImportNote",
    "ImportedConversation",
    "InputProblem",
    "PastedInput",
    "group_turns",
    "load_conversation",
    "loads_or_problem",
    "parse_conversation",
    "parse_pasted",
    "parse_pasted_with_notes",
]
