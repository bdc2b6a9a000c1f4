"""The append journal: a per-slot flight recorder of every append (off by default).

``ConversationBuffer(..., journal=N)`` records each append to a slot (its
incoming messages, its context, the MEM-14 report, the events and the
revisions) in the store's journal, keeping the newest ``N`` per slot:

- :mod:`~flowdrop_core.journal._record`: one record, and the checkpoint rule;
- :mod:`~flowdrop_core.journal._backends`: :func:`journal_for`, the reader of
  any store's journal (each backend keeps its own, written atomically with
  the change it records);
- :mod:`~flowdrop_core.journal.replay`: the journal as a scenario ``check``
  accepts, and replayed into a timeline (import it from there: it sits on
  top of :mod:`flowdrop_core.replay`, which sits on the buffer that records).
"""

from flowdrop_core.journal._backends import Journal, journal_for
from flowdrop_core.journal._record import CHECKPOINT_EVERY, JournalRecord, events_from_dicts

__all__ = [
    "CHECKPOINT_EVERY",
    "Journal",
    "JournalRecord",
    "events_from_dicts",
    "journal_for",
]
