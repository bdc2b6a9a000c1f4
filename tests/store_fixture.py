"""A SQLite store file with three slots and a journal, for the Store page and CLI tests."""

from __future__ import annotations

from pathlib import Path

from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.scenario import load_scenario, step_context
from flowdrop_core.storage import SQLiteStore, Store

REPO = Path(__file__).resolve().parents[1]

#: The three slots the file holds; the first has a journal of every append.
SLOTS = [
    ("session", "demo", "chat_history"),
    ("user", "alice", "chat_history"),
    ("workflow", "wf-1", "notes"),
]


def fill(store: Store) -> None:
    """Write the three slots: a recorded crash-and-resume run (journaled), and two small ones."""
    scenario = load_scenario(REPO / "sample_data" / "recorded-crash-resume.json")
    journaled = ConversationBuffer(scope="session", max_messages=4, store=store, journal=100)
    for step in scenario.steps:
        journaled.append(
            step.append, {**(step_context(scenario, step) or {}), "session_id": "demo"}
        )
    ConversationBuffer(scope="user", store=store).append(
        {"role": "user", "content": "<b>alice</b> writes"}, {"user_id": "alice"}
    )
    ConversationBuffer(scope="workflow", key="notes", store=store).append(
        [{"role": "user", "content": "note 1"}, {"role": "assistant", "content": "note 2"}],
        {"workflow_id": "wf-1"},
    )


def make_store_file(path: Path) -> Path:
    """Create the file at ``path`` and return it."""
    store = SQLiteStore(path)
    fill(store)
    journal_for(store).close()  # type: ignore[attr-defined]
    store.close()  # the last connection: the WAL is checkpointed into the file
    return path
