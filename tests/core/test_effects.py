"""The decision table (``events.EFFECTS``): one row per kind, read by every layer.

A new kind added in a temporary table (a row for a kind ``EventKind`` does
not have) is handled by every layer that acts on events, with nothing but the
row: replaying events, the timeline's tallies and tags, the storage delta,
the engine's ``changed``, the verdict, the call lifecycle and the count
parts. The layers that need more than the row (the inspector's label) and a
row naming something no layer knows (a verdict word, a lifecycle step) fail
loudly, naming what to add. And the table agrees with what the engine does.
"""

from __future__ import annotations

import random
from enum import StrEnum
from typing import Any

import pytest

from flowdrop_core import Buffer
from flowdrop_core.engine import AppendResult
from flowdrop_core.events import (
    EFFECTS,
    Effect,
    Event,
    EventKind,
    apply_events,
    effect_of,
    tally_parts,
)
from flowdrop_core.inspect.decisions import decision_cells
from flowdrop_core.inspect.lifecycle import lifecycle
from flowdrop_core.inspect.rows import count_parts
from flowdrop_core.replay import StepRecord, new_timeline
from flowdrop_core.storage._delta import delta_from_events
from flowdrop_core.verdicts import step_verdict


class Extra(StrEnum):
    """Kinds the library does not have: each test gives one a row for its duration."""

    REWOUND = "rewound"


REWOUND = Extra.REWOUND


def _explain(ev: Event) -> str:
    return f"{ev.rule}: rewound the entry at position {ev.position}."


#: A kind that removes an entry, counts as an eviction and takes calls out of the window.
ROW = Effect(
    rule="MEM-99",
    change="delete",
    part="evicted",
    lifecycle="removed",
    verdict="dropped",
    tag="rewound",
    explain=_explain,
)


@pytest.fixture
def rewound(monkeypatch: pytest.MonkeyPatch) -> Effect:
    """The temporary table: EFFECTS with one row more, for this test only."""
    monkeypatch.setitem(EFFECTS, REWOUND, ROW)
    return ROW


def rewind(position: int, entry: dict[str, Any] | None = None) -> Event:
    return Event(kind=REWOUND, rule="MEM-99", position=position, entry=entry)  # type: ignore[arg-type]


USER = {"role": "user", "content": "hi"}
TURN = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "ok"}


def test_every_kind_has_its_row() -> None:
    assert set(EFFECTS) == set(EventKind)
    for kind, effect in EFFECTS.items():
        assert effect_of(str(kind)) is effect  # the string of a kind finds its row too


def test_a_kind_without_a_row_fails_loudly_naming_the_table() -> None:
    with pytest.raises(KeyError, match=r"no row in flowdrop_core\.events\.EFFECTS"):
        apply_events([USER], [rewind(0)])
    with pytest.raises(KeyError, match="EFFECTS"):
        tally_parts([rewind(0)])
    with pytest.raises(KeyError, match="EFFECTS"):
        delta_from_events([rewind(0)], 0)
    with pytest.raises(KeyError, match="EFFECTS"):
        _ = rewind(0).reason


def test_the_buffer_layers_act_on_a_new_row(rewound: Effect) -> None:
    # apply_events (the inspector's timeline travel and the replay's rebuild)
    assert apply_events([USER, TURN], [rewind(0, USER)]) == [TURN]
    # the storage delta: the store operation the row names
    delta = delta_from_events([rewind(0, USER)], 1)
    assert [(op.kind, op.position) for op in delta.ops] == [("delete", 0)]
    # the engine's ``changed``
    assert AppendResult(count=1, appended=0, events=[rewind(0, USER)]).changed
    # the reason, from the row
    assert rewind(3).reason == "MEM-99: rewound the entry at position 3."


def test_the_counting_layers_act_on_a_new_row(rewound: Effect) -> None:
    parts = tally_parts([rewind(0, USER)])
    assert (parts.evicted, parts.growth) == (1, -1)
    record = StepRecord(
        step=1,
        incoming=[],
        count_before=2,
        count=1,
        appended=0,
        appended_any=False,
        refused=False,
        scope="session",
        key="k",
        resolved_scope_id="s",
        events=(rewind(0, USER),),
    )
    assert record.evicted == 1
    assert count_parts(record).text() == "0 + 0 - 1"
    assert step_verdict(False, 0, [REWOUND]) == "dropped"
    assert record.verdict == "dropped"


def test_the_timeline_tags_and_lifecycle_act_on_a_new_row(rewound: Effect) -> None:
    timeline = new_timeline(context={"session_id": "s"})
    timeline.append_step([USER, TURN])
    timeline.append_step(RESULT)
    last = timeline.steps[-1]
    # the step also rewound the turn declaring c1 (position 1), after appending its result
    last.events = (*last.events, rewind(1, TURN))
    before, after, _ = timeline.tagged(2)
    assert [tag for _, tag in before] == ["kept", "rewound"]
    assert [tag for _, tag in after] == ["kept", "new"]
    # the lifecycle: "removed" takes the call out of the window, leaving its result orphaned
    life = lifecycle(timeline).get("c1")
    assert life is not None
    assert (life.evicted_step, life.orphaned_step, life.status) == (2, 2, "result orphaned")


def test_the_inspector_label_is_the_one_thing_beyond_the_row(rewound: Effect) -> None:
    timeline = new_timeline(context={"session_id": "s"})
    timeline.append_step(USER)
    record = timeline.steps[-1]
    record.events = (*record.events, rewind(0, USER))
    with pytest.raises(KeyError, match=r"no Decision and label in .*inspect/decisions\.py"):
        decision_cells(record)


def test_a_row_naming_an_unknown_verdict_or_lifecycle_step_fails_loudly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        EFFECTS,
        REWOUND,
        Effect("MEM-99", None, None, "teleported", "rewound", None, _explain),  # type: ignore[arg-type]
    )
    with pytest.raises(ValueError, match="rewound"):
        step_verdict(False, 0, [REWOUND])
    timeline = new_timeline(context={"session_id": "s"})
    timeline.append_step(USER)
    record = timeline.steps[-1]
    record.events = (*record.events, rewind(0, USER))
    with pytest.raises(KeyError, match="teleported"):
        lifecycle(timeline)


def _conversation(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """User turns, calls, their results, re-sent results and turns, empty user turns."""
    out: list[dict[str, Any]] = []
    call = 0
    while len(out) < n:
        out.append({"role": "user", "content": rng.choice(["q", "", "again"])})
        ids = [f"c{call + k}" for k in range(rng.randint(1, 2))]
        call += len(ids)
        turn = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                for cid in ids
            ],
        }
        out.append(turn)
        for cid in ids:
            if rng.random() < 0.7:
                out.append({"role": "tool", "tool_call_id": cid, "content": "r"})
        if rng.random() < 0.2:
            out.append(dict(turn))  # MEM-2
        if rng.random() < 0.2:
            out.append({"role": "tool", "tool_call_id": ids[0], "content": "late"})  # MEM-1/10
        if rng.random() < 0.1:
            out.append({"role": "tool", "content": "no id"})  # MEM-11
    return out


@pytest.mark.parametrize("seed", range(5))
def test_the_table_says_what_the_engine_does(seed: int) -> None:
    """Each event cites its row's rule; the rows' counts and changes are the report's."""
    rng = random.Random(seed)
    buf = Buffer(max_messages=rng.choice([0, 4, 9]))
    before: list[dict[str, Any]] = []
    for msg in _conversation(rng, 300):
        result = buf.append(msg if rng.random() < 0.7 else [msg])
        events = result.events
        for ev in events:
            assert ev.rule == EFFECTS[ev.kind].rule, ev
        parts = tally_parts(events)
        assert parts.appended == result.appended
        assert len(before) + parts.growth == result.count
        after = buf.messages()
        assert apply_events(before, events) == after
        assert result.changed == (after != before or any(EFFECTS[e.kind].change for e in events))
        before = after


def test_a_row_cannot_be_changed_in_place() -> None:
    import dataclasses

    with pytest.raises(dataclasses.FrozenInstanceError):
        EFFECTS[EventKind.APPENDED].rule = "MEM-99"  # type: ignore[misc]


def test_a_reason_names_the_call_and_the_position() -> None:
    dup = Event(EventKind.DUPLICATE_RESULT, "MEM-1", 3, 2, "call_7")
    assert dup.reason == (
        "MEM-1: tool result for call 'call_7' dropped as a duplicate; the call is already "
        "answered at buffer position 2 (0-based). Counts 0."
    )
    bare = Event(EventKind.PLACEHOLDER_REPLACED, "MEM-10", 0, None, None)
    assert bare.reason == (
        "MEM-10: real result for call replaced the healed placeholder in place. "
        "Counts 0: no new entry."
    )


@pytest.mark.parametrize(
    ("refused", "appended", "kinds", "word"),
    [
        (False, 1, ["duplicate_result"], "appended"),  # appended counts, whatever the kinds
        (False, 0, ["placeholder_inserted", "placeholder_replaced"], "replaced"),
        (False, 0, ["appended"], "unchanged"),  # nothing appended: not "appended"
        (False, 0, ["refused"], "unchanged"),  # only the refusal itself says refused
        (True, 0, [], "refused"),
        (False, 0, ["pure_read", "duplicate_turn"], "dropped"),
        (False, 0, ["not a kind"], "unchanged"),
    ],
)
def test_the_verdict_is_the_first_word_the_rows_give(
    refused: bool, appended: int, kinds: list[str], word: str
) -> None:
    assert step_verdict(refused, appended, kinds) == word


def test_a_row_with_a_word_verdicts_does_not_know_fails_at_its_check(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flowdrop_core import verdicts

    monkeypatch.setitem(
        EFFECTS, REWOUND, Effect("MEM-99", None, None, None, "rewound", None, _explain)
    )
    with pytest.raises(ValueError, match="rewound"):
        verdicts._check()


def test_each_part_is_counted_once_and_kinds_without_one_not_at_all() -> None:
    events = [Event(kind, EFFECTS[kind].rule, 0, 0, "c", {"role": "tool"}) for kind in EventKind]
    parts = tally_parts(events)
    # one kind per part, two duplicates; pure read, id-less, refused, unserialized count nothing
    assert parts == (1, 1, 1, 1, 2)
    assert parts.growth == 1
    assert tally_parts([Event(EventKind.PURE_READ, "MEM-16")]) == (0, 0, 0, 0, 0)
