"""The append journal on every backend: records, bounds, replay and export as a scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.cli import main as cli_main
from flowdrop_core.conversation import ConversationBuffer
from flowdrop_core.journal import journal_for
from flowdrop_core.journal.replay import journal_scenario, replay_journal
from flowdrop_core.scenario import dump_scenario, load_scenario, step_context
from flowdrop_core.storage import Store

REPO = Path(__file__).resolve().parents[2]
RECORDINGS = ["recorded-redelivery.json", "recorded-crash-resume.json"]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def _run(store: Store, name: str, journal: int = 1000, window: int | None = None) -> list[Any]:
    """Run a recorded scenario's steps (twice: the second pass is all re-fires) with a journal."""
    scenario = load_scenario(REPO / "sample_data" / name)
    cfg = scenario.config
    buf = ConversationBuffer(
        scope=cfg.scope,
        key=cfg.key,
        max_messages=cfg.max_messages if window is None else window,
        store=store,
        journal=journal,
    )
    results = []
    for step in [*scenario.steps, *scenario.steps]:
        results.append(buf.append(step.append, step_context(scenario, step)))
    return results


@pytest.mark.parametrize("name", RECORDINGS)
@pytest.mark.parametrize("window", [0, 4])
def test_journal_replays_to_the_same_reports(store: Store, name: str, window: int) -> None:
    """A recorded run's journal, replayed, reports what the run reported, step by step."""
    results = _run(store, name, window=window)
    slot = (str(results[0].scope), results[0].resolved_scope_id, results[0].key)
    records = journal_for(store).read(slot)
    assert [r.seq for r in records] == list(range(1, len(results) + 1))
    assert [r.report for r in records] == [
        {"count": r.count, "appended": r.appended, "appended_any": r.appended_any} for r in results
    ]
    replayed = replay_journal(records)
    assert replayed.notes == []
    assert replayed.check.passed, replayed.check.mismatches
    steps = replayed.timeline.steps
    assert [(s.count, s.appended, s.appended_any) for s in steps] == [
        (r.count, r.appended, r.appended_any) for r in results
    ]
    # the events, and so every buffer of the timeline, are the run's own
    assert [tuple(s.events) for s in steps] == [tuple(r.events) for r in results]
    assert replayed.timeline.buffer_after(len(steps)) == results[-1].messages


def test_record_holds_incoming_context_report_and_revisions(store: Store) -> None:
    buf = ConversationBuffer(store=store, journal=10)
    ctx = {"session_id": "s1", "node_id": "n1"}
    first = buf.append(user("hi"), ctx)
    again = buf.append(user(""), ctx)  # a pure read (MEM-16) writes nothing
    one, two = journal_for(store).read(("session", "s1", "chat_history"))
    assert one.incoming == [user("hi")] and one.context == ctx
    assert (one.count, one.appended, one.appended_any) == (1, 1, True)
    assert one.base == [] and two.base is None  # the first record is a checkpoint
    assert one.revision_before is None
    assert one.revision == store.revision("session", "s1", "chat_history")
    assert two.revision_before == two.revision == one.revision  # nothing written
    assert (two.count, two.appended, again.appended) == (1, 0, 0)
    assert [e["kind"] for e in one.events] == [str(e.kind) for e in first.events]


def test_journal_is_off_by_default(store: Store) -> None:
    ConversationBuffer(store=store).append(user("hi"), {"session_id": "s1"})
    assert journal_for(store).read(("session", "s1", "chat_history")) == []
    assert journal_for(store).slots() == []


def test_refused_append_records_nothing(store: Store) -> None:
    buf = ConversationBuffer(scope="user", store=store, journal=10)
    assert buf.append(user("hi"), {"user_id": 0}).refused
    assert journal_for(store).slots() == []


def test_journal_keeps_the_newest_n_and_still_replays(store: Store) -> None:
    """Bounded per slot: 50 appends with N=8 keep records 43..50, which replay from a checkpoint."""
    buf = ConversationBuffer(store=store, journal=8, max_messages=5)
    ctx = {"session_id": "s1"}
    results = [buf.append(user(f"m{k}"), ctx) for k in range(50)]
    buf.append(user("other slot"), {"session_id": "s2"})
    records = journal_for(store).read(("session", "s1", "chat_history"))
    assert [r.seq for r in records] == list(range(43, 51))
    replayed = replay_journal(records)
    assert replayed.check.passed
    first = replayed.first_seq
    assert first in range(43, 51)
    if first > 43:
        assert replayed.notes == [
            f"records 43..{first - 1} are older than the oldest kept checkpoint "
            f"(record {first}): left out of the replay"
        ]
    assert replayed.timeline.buffer_after(len(replayed.timeline.steps)) == results[-1].messages
    assert journal_for(store).slots() == [
        ("session", "s1", "chat_history"),
        ("session", "s2", "chat_history"),
    ]


def test_a_write_outside_the_journal_is_a_located_note(store: Store) -> None:
    buf = ConversationBuffer(store=store, journal=10)
    ctx = {"session_id": "s1"}
    buf.append(user("a"), ctx)
    store.set("session", "s1", "chat_history", [user("planted")])
    buf.append(user("b"), ctx)
    records = journal_for(store).read(("session", "s1", "chat_history"))
    _, notes = journal_scenario(records)
    assert len(notes) == 1 and notes[0].startswith("record 2: the slot was written outside")


def test_empty_journal_is_a_clear_error(store: Store) -> None:
    with pytest.raises(ValueError, match="journal is empty"):
        journal_scenario([])


def test_exported_journal_is_a_scenario_check_accepts(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = _run(store, "recorded-crash-resume.json", window=3)
    slot = (str(results[0].scope), results[0].resolved_scope_id, results[0].key)
    scenario, notes = journal_scenario(journal_for(store).read(slot), name="crash-journal")
    assert notes == []
    path = tmp_path / "crash-journal.json"
    path.write_text(dump_scenario(scenario), encoding="utf-8")
    assert cli_main(["check", "-v", str(path)]) == 0
    assert "1 passed, 0 failed" in capsys.readouterr().out
    # and a wrong report is caught: the expectations are real
    data = json.loads(path.read_text())
    data["expect"][-1]["appended"] += 1
    path.write_text(json.dumps(data), encoding="utf-8")
    assert cli_main(["check", str(path)]) == 1


def test_bad_journal_option_is_rejected() -> None:
    for bad in (-1, True, 1.5):
        with pytest.raises(ValueError, match="journal"):
            ConversationBuffer(journal=bad)  # type: ignore[arg-type]


def test_a_record_another_writer_added_meanwhile_is_numbered_around(store: Store) -> None:
    """A buffer numbers its next record from its own last write (no read of the journal
    first); when another writer added a record meanwhile without changing the entries (a
    re-fired result: MEM-1 drops it, the journal still records it), the write's number no
    longer follows, nothing is written, and the append runs again on a fresh read: every
    record numbered once, in order, and the report is the append's."""
    import uuid

    slot_id = f"j{uuid.uuid4().hex[:8]}"
    ctx = {"session_id": slot_id}
    ours = ConversationBuffer(store=store, journal=50)
    other = ConversationBuffer(store=store, journal=50)
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "name": "f"}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "done"}
    ours.append([call, result], ctx)  # record 1
    ours.append(user("cached now"), ctx)  # record 2, numbered from the cache
    refired = other.append(result, ctx)  # record 3: dropped by MEM-1, recorded
    assert refired.appended == 0
    later = ours.append(user("after the re-fire"), ctx)  # record 4, after a conflict
    assert later.appended == 1 and later.count == 4
    records = journal_for(store).read(("session", slot_id, "chat_history"))
    assert [r.seq for r in records] == [1, 2, 3, 4]
    assert [m["content"] for m in ours.messages(ctx)][-1] == "after the re-fire"
