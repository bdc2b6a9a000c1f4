"""A slot's journal back as a scenario and a timeline: the run, step by step, as it happened."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from flowdrop_core.journal._record import JournalRecord
from flowdrop_core.replay import CheckResult, Timeline, check, replay
from flowdrop_core.scenario import Expectation, Scenario, ScenarioConfig, ScenarioStep

__all__ = ["JournalReplay", "journal_scenario", "replay_journal"]


@dataclass
class JournalReplay:
    """The journal replayed: the timeline, the scenario it came from, notes and the check.

    ``notes`` name every record left out or any reason the replay may differ
    from the run (nothing is skipped silently); ``check`` compares each
    step's report with the one recorded.
    """

    scenario: Scenario
    timeline: Timeline
    check: CheckResult
    notes: list[str] = field(default_factory=list)
    first_seq: int = 0


def journal_scenario(
    records: Sequence[JournalRecord], name: str = "journal"
) -> tuple[Scenario, list[str]]:
    """The records as a scenario ``check`` accepts: start = the oldest checkpoint's buffer.

    Each step is one recorded append (its incoming messages and context),
    each expect its recorded MEM-14 report. Records older than the oldest
    kept checkpoint cannot be replayed (their starting buffer is gone); they
    are named in the notes, as is every gap where the slot was written
    outside the journal and every append that ran unserialized (MEM-12).
    """
    kept, notes = _segment(records, name)
    first = kept[0]
    for rec in kept:
        if rec.max_messages != first.max_messages:
            notes.append(
                f"record {rec.seq}: window {rec.max_messages}, not {first.max_messages} as "
                "at the start; the replay uses the first"
            )
        if not rec.serialized:
            notes.append(f"record {rec.seq}: ran unserialized (MEM-12 lock timeout)")
    scenario = Scenario(
        name=name,
        title=f"Journal of slot {first.scope}/{first.scope_id}/{first.key}, "
        f"records {first.seq}..{kept[-1].seq}",
        config=ScenarioConfig(
            scope=first.scope,  # type: ignore[arg-type]
            key=first.key,
            max_messages=first.max_messages,
        ),
        buffer=list(first.base or []),
        steps=[
            ScenarioStep(label=f"record {r.seq}", append=r.incoming, context=r.context)
            for r in kept
        ],
        expect=[Expectation(**r.report, resolved_scope_id=r.scope_id) for r in kept],
    )
    return scenario, notes


def _segment(records: Sequence[JournalRecord], name: str) -> tuple[list[JournalRecord], list[str]]:
    """The records the replay runs (from a checkpoint, resynchronised after each break) and notes."""
    notes: list[str] = []
    if not records:
        raise ValueError(f"{name}: the journal is empty; nothing to replay")
    records = _after_last_clear(list(records), name, notes)
    start = next((k for k, r in enumerate(records) if r.base is not None), None)
    if start is None:
        raise ValueError(
            f"{name}: no kept record carries a checkpoint of the buffer (records "
            f"{records[0].seq}..{records[-1].seq}); the journal cannot be replayed"
        )
    if start:
        notes.append(
            f"records {records[0].seq}..{records[start - 1].seq} are older than the oldest "
            f"kept checkpoint (record {records[start].seq}): left out of the replay"
        )
    k = start + 1
    while k < len(records):
        prev, rec = records[k - 1], records[k]
        if rec.seq <= prev.seq:
            why = f"record {rec.seq}: out of order after record {prev.seq}"
        elif rec.seq != prev.seq + 1:
            why = f"record {rec.seq}: records {prev.seq + 1}..{rec.seq - 1} are missing"
        elif rec.revision_before != prev.revision:
            why = (
                f"record {rec.seq}: the slot was written outside the journal before it "
                f"(it read revision {rec.revision_before!r}, record {prev.seq} left "
                f"{prev.revision!r})"
            )
        else:
            k += 1
            continue
        resync = next((c for c in range(k, len(records)) if records[c].base is not None), None)
        if resync is None:
            notes.append(f"{why}; the replay may differ from here")
            k += 1
            continue
        notes.append(
            f"{why}; the replay resynchronises at checkpoint record {records[resync].seq}, "
            f"leaving records {records[start].seq}..{records[resync - 1].seq} out"
        )
        start = resync
        k = resync + 1
    return records[start:], notes


def _after_last_clear(
    records: list[JournalRecord], name: str, notes: list[str]
) -> list[JournalRecord]:
    """The records after the newest clear (MEM-15), the first starting from the empty buffer.

    A clear is an administrative act, not an append: the run before it is
    not replayed (its result is gone), and the note says who cleared what.
    """
    cut = next((k for k in range(len(records) - 1, -1, -1) if records[k].action == "clear"), None)
    if cut is None:
        return records
    clear = records[cut]
    notes.append(
        f"record {clear.seq}: the slot was cleared at the admin tier (MEM-15"
        + (f", {clear.removed} entries removed" if clear.removed is not None else "")
        + (f", by {clear.by}" if clear.by else "")
        + "); the replay starts after it, from the empty buffer"
    )
    after = records[cut + 1 :]
    if not after:
        raise ValueError(
            f"{name}: the journal's last record ({clear.seq}) is a clear at the admin tier "
            "(MEM-15); no append since, nothing to replay"
        )
    first = after[0]
    if first.base is None and first.revision_before == clear.revision:
        after[0] = first.model_copy(update={"base": []})  # it read the buffer the clear left
    return after


def replay_journal(records: Sequence[JournalRecord], name: str = "journal") -> JournalReplay:
    """Replay the journal through the engine and check every step against its record."""
    scenario, notes = journal_scenario(records, name)
    return JournalReplay(
        scenario=scenario,
        timeline=replay(scenario),
        check=check(scenario),
        notes=notes,
        first_seq=_segment(records, name)[0][0].seq,
    )
