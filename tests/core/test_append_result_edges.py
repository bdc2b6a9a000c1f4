"""An AppendResult is a plain result object, also where its fields are built lazily."""

from __future__ import annotations

import copy
import operator

import pytest

from flowdrop_core.engine import AppendResult, append_messages


def test_an_unknown_attribute_is_an_attribute_error_so_hasattr_works() -> None:
    result = append_messages([], [{"role": "user", "content": "a"}])
    with pytest.raises(AttributeError, match="'AppendResult' object has no attribute 'nope'"):
        operator.attrgetter("nope")(result)  # a name the class does not have
    assert not hasattr(result, "nope")
    assert hasattr(result, "events")


def test_a_result_read_back_from_its_dict_has_the_same_decisions() -> None:
    result = append_messages(
        [], [{"role": "user", "content": "a"}, {"role": "user", "content": ""}]
    )
    again = AppendResult.from_dict(result.to_dict())
    assert again == result
    assert [(d[0], d[2], d[3]) for d in again.decisions()] == [
        ("appended", 0, 0),
        ("pure_read", 1, None),
    ]


def test_a_bad_dict_is_a_value_error_naming_the_field() -> None:
    result = append_messages([], [{"role": "user", "content": "a"}]).to_dict()
    with pytest.raises(ValueError, match="count"):
        AppendResult.from_dict({**result, "count": "many"})
    with pytest.raises(ValueError, match="surprise"):
        AppendResult.from_dict({**result, "surprise": 1})


def test_the_fields_are_named_once() -> None:
    """``FIELDS`` is what the dict, the repr, equality and the schema use, in that order."""
    result = append_messages([], [{"role": "user", "content": "a"}])
    assert tuple(result.to_dict()) == AppendResult.FIELDS
    assert tuple(result.fields()) == AppendResult.FIELDS
    assert tuple(AppendResult.json_schema()["properties"]) == AppendResult.FIELDS


def test_an_uninitialised_result_lacks_every_field() -> None:
    """``__new__`` without ``__init__`` (and not made by the engine): no field is there."""
    bare = AppendResult.__new__(AppendResult)
    for name in AppendResult.FIELDS:
        with pytest.raises(AttributeError, match=name):
            getattr(bare, name)
    assert tuple(bare.decisions()) == ()


def test_evictions_read_before_the_events_are_the_same_decisions_every_time() -> None:
    """An eviction is recorded as the evicted entry and described when first read;
    reading again returns the same list (built once), and the events agree."""
    from flowdrop_core import Buffer

    old = {"role": "tool", "content": "r", "tool_call_id": "c1"}
    buf = Buffer([{"role": "user", "content": "a"}, old], max_messages=1)
    result = buf.append({"role": "user", "content": "b"})
    first = result.decisions()
    assert first is result.decisions()
    assert [tuple(d) for d in first] == [
        ("appended", "MEM-14", 0, 2, None, {"role": "user", "content": "b", "metadata": {}}, None),
        ("evicted", "MEM-14", None, 0, None, {"role": "user", "content": "a"}, 1),
        ("evicted", "MEM-14", None, 0, "c1", old, 1),
    ]
    assert [tuple(e) for e in result.events] == [tuple(d) for d in first]
    assert result.count == 1 and result.appended == 1 and buf.messages()[0]["content"] == "b"


def test_counts_are_the_same_whether_decisions_or_fields_are_read_first() -> None:
    """Reading the decisions of an evicting append first does not change what it reports."""
    from flowdrop_core import Buffer

    buf = Buffer([{"role": "user", "content": f"m{k}"} for k in range(3)], max_messages=3)
    result = buf.append({"role": "assistant", "content": "n"})
    assert [d[0] for d in result.decisions()] == ["appended", "evicted"]
    assert (result.count, result.appended, result.max_messages) == (3, 1, 3)
    assert result.events[-1].max_messages == 3


def test_an_assignment_sticks() -> None:
    """A field a caller sets is what the dict, copies and equality see."""
    result = append_messages([], [{"role": "user", "content": "a"}])
    assert result.appended == 1
    result.appended = 5
    assert result.to_dict()["appended"] == 5
    assert copy.copy(result).appended == 5
    assert result.replace().appended == 5
    assert result.count == 1
    assert result != append_messages([], [{"role": "user", "content": "a"}])


def test_a_fresh_result_has_every_field() -> None:
    """The engine gives every field, also when the dict is the first thing read."""
    from flowdrop_core import Buffer

    pending = Buffer().append({"role": "user", "content": "a"})
    assert set(pending.to_dict()) == set(AppendResult.FIELDS)
    fresh = AppendResult.from_dict(pending.to_dict())
    assert set(fresh.fields()) == set(AppendResult.FIELDS)
    assert fresh == pending


def test_defaults_of_a_result_built_by_hand() -> None:
    """Built by hand, a result has no messages, no events and no window (0 = no cap)."""
    result = AppendResult(count=0, appended=0, appended_any=False)
    assert (result.messages, result.events, result.max_messages) == (None, (), 0)
    assert result.decisions() == ()
    assert AppendResult(count=1, appended=1).appended_any is True  # derived when not given


def test_replace_names_an_unknown_field() -> None:
    result = AppendResult(count=0, appended=0)
    with pytest.raises(TypeError, match="nope"):
        result.replace(nope=1)


def test_results_are_not_hashable_but_compare_by_value() -> None:
    a, b = AppendResult(count=0, appended=0), AppendResult(count=0, appended=0)
    assert a == b and a != AppendResult(count=1, appended=0)
    assert a != {"count": 0}
    with pytest.raises(TypeError):
        hash(a)
