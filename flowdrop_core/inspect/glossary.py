"""The words of GR-MEM, once: the help text of every metric, pill and column, and the glossary page.

The inspector and the CLI explain a report in the same words, so each term
is defined here and nowhere else. Definitions follow ``GR-MEM.md`` and
MEM-14's own text; each names the rule it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GLOSSARY", "KIND_TERMS", "Term", "help_for"]


@dataclass(frozen=True)
class Term:
    """One glossary entry: the word, a one-line definition, a longer one, and its rule."""

    term: str
    short: str
    long: str
    rule: str

    def help(self) -> str:
        """The tooltip text: the short definition and the rule it comes from."""
        return f"{self.short} ({self.rule})"


_TERMS = (
    Term(
        "count",
        "How many entries the buffer holds after the append.",
        "The size of the buffer after the call. It is not what the append added: a full "
        "window can evict as many entries as the call added, and healing can grow the "
        "buffer with nothing appended.",
        "MEM-14",
    ),
    Term(
        "appended",
        "How many incoming messages became new entries.",
        "The number MEM-14 asks every append to report. A duplicate and a placeholder "
        "replacement count zero, placeholders a heal inserts are not incoming messages and "
        "never count, and an entry appended then evicted by the same call still counts.",
        "MEM-14",
    ),
    Term(
        "appended_any",
        "Whether appended is greater than zero: did anything new land?",
        "The yes/no a caller checks to know that its turn actually landed. It is derived "
        "from appended, never from a change in count.",
        "MEM-14",
    ),
    Term(
        "window",
        "The cap on the buffer's size (max_messages); 0 means no cap.",
        "After all incoming messages are processed, the oldest entries are evicted until "
        "the buffer holds max_messages entries.",
        "GR-MEM",
    ),
    Term(
        "eviction",
        "The window dropping the oldest entry to make room.",
        "An eviction lowers the count but never lowers appended, which is why a full "
        "window can keep the count the same while a new message lands.",
        "MEM-14",
    ),
    Term(
        "re-fire",
        "The same message delivered again, e.g. a retried tool result.",
        "A tool result re-fired under an id the buffer already answers is dropped as a "
        "duplicate (MEM-1); an assistant turn whose every call id is already declared is "
        "dropped (MEM-2). Both count zero.",
        "MEM-1",
    ),
    Term(
        "placeholder",
        "A synthetic 'interrupted' result for a call that never got one.",
        "Inserted by a heal directly after the turn that declared the call, marked "
        "healed: true. The first real result for its id replaces it in place, which adds "
        "no entry and counts zero (MEM-10).",
        "MEM-3",
    ),
    Term(
        "heal",
        "Giving every unanswered call a placeholder before a user turn.",
        "Runs only when a user turn arrives. The user turn counts one; its placeholders "
        "count zero, so the count can grow by more than appended.",
        "MEM-3",
    ),
    Term(
        "refusal",
        "An identity scope without a usable id: the append does nothing.",
        "The user or session scope refuses when its id is missing or unusable (0, '0', "
        "blanks, booleans). Storage is not touched, the result is an empty buffer, and the "
        "report is count 0, appended 0.",
        "MEM-7",
    ),
    Term(
        "scope",
        "Whose buffer an append reads and writes: global, workflow, pipeline, execution, "
        "session or user.",
        "The scope and the context give the resolved scope id. An identity scope (user, "
        "session) refuses rather than fall back to the shared global bucket.",
        "MEM-6",
    ),
    Term(
        "slot",
        "Where one buffer is stored: (scope, resolved scope id, key).",
        "Appends to one slot are serialized with a bounded wait, so concurrent appends "
        "queue instead of losing each other's turns.",
        "MEM-12",
    ),
)

#: Every term, by name.
GLOSSARY: dict[str, Term] = {t.term: t for t in _TERMS}

#: The glossary term that explains each decision kind (an event kind or a MEM-14 flag).
KIND_TERMS: dict[str, str] = {
    "appended": "appended",
    "duplicate_result": "re-fire",
    "duplicate_turn": "re-fire",
    "placeholder_inserted": "heal",
    "placeholder_replaced": "placeholder",
    "evicted": "eviction",
    "refused": "refusal",
    "pure_read": "appended",
    "idless_result": "re-fire",
    "unserialized": "slot",
    "hidden append": "eviction",
    "growth without append": "heal",
}


def help_for(name: str) -> str:
    """Tooltip text for a term, a decision kind or a report field; empty when unknown."""
    term = GLOSSARY.get(name) or GLOSSARY.get(KIND_TERMS.get(name, ""))
    return term.help() if term else ""
