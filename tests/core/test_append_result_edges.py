"""An AppendResult behaves like the pydantic model it is, also where its fields are built lazily."""

from __future__ import annotations

import pytest

from flowdrop_core.engine import AppendResult, append_messages


def test_an_unknown_attribute_is_an_attribute_error_so_hasattr_works() -> None:
    result = append_messages([], [{"role": "user", "content": "a"}])
    with pytest.raises(AttributeError, match="'AppendResult' object has no attribute 'nope'"):
        result.nope  # noqa: B018
    assert not hasattr(result, "nope")
    assert hasattr(result, "events")


def test_a_result_read_back_from_its_dump_has_the_same_decisions() -> None:
    result = append_messages(
        [], [{"role": "user", "content": "a"}, {"role": "user", "content": ""}]
    )
    again = AppendResult.model_validate(result.model_dump())
    assert again == result
    assert [(d[0], d[2], d[3]) for d in again.decisions()] == [
        ("appended", 0, 0),
        ("pure_read", 1, None),
    ]


def test_fields_are_not_class_attributes() -> None:
    """Like pydantic: ``AppendResult.count`` is not a value."""
    with pytest.raises(AttributeError, match="count"):
        AppendResult.count  # noqa: B018


def test_a_partly_constructed_result_lacks_the_fields_it_was_not_given() -> None:
    partial = AppendResult.model_construct(count=1)
    assert partial.count == 1
    with pytest.raises(AttributeError, match="appended"):
        partial.appended  # noqa: B018
    assert tuple(partial.decisions()) == ()


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


def test_a_result_is_an_ordinary_model_an_assignment_sticks() -> None:
    """Like any pydantic model, a field a caller sets is what dumps, copies and equality see."""
    result = append_messages([], [{"role": "user", "content": "a"}])
    assert result.appended == 1
    result.appended = 5
    assert result.model_dump()["appended"] == 5
    assert result.model_copy().appended == 5
    assert result.count == 1


def test_a_fresh_result_reports_every_field_as_set() -> None:
    """The engine gives every field, so pydantic's ``model_fields_set`` names them all,
    also when it is the first thing read."""
    result = append_messages([], [{"role": "user", "content": "a"}])
    fresh = AppendResult.model_validate(result.model_dump())
    from flowdrop_core import Buffer

    pending = Buffer().append({"role": "user", "content": "a"})
    assert pending.model_fields_set == set(AppendResult.model_fields)
    assert fresh.model_fields_set == set(AppendResult.model_fields)


def test_defaults_of_a_result_built_by_hand() -> None:
    """Built by hand, a result has no messages, no events and no window (0 = no cap)."""
    result = AppendResult(count=0, appended=0, appended_any=False)
    assert (result.messages, result.events, result.max_messages) == (None, (), 0)
    assert result.decisions() == ()


def test_model_construct_without_a_count_dumps_what_it_was_given() -> None:
    """pydantic's ``model_construct`` skips validation; a result made that way without a
    count still dumps the fields it has, like any model."""
    partial = AppendResult.model_construct(appended=1, appended_any=True)
    assert partial.model_dump() == {
        "appended": 1,
        "appended_any": True,
        "messages": None,
        "events": (),
        "max_messages": 0,
    }
    assert partial.decisions() == ()


def test_an_uninitialised_result_fails_like_any_pydantic_model() -> None:
    """``__new__`` without ``__init__``: pydantic's bookkeeping is missing, as for any model."""
    from pydantic import BaseModel

    class Plain(BaseModel):
        count: int

    for bare in (Plain.__new__(Plain), AppendResult.__new__(AppendResult)):
        with pytest.raises(AttributeError, match="__pydantic_fields_set__"):
            bare.model_fields_set  # noqa: B018
    assert AppendResult.__new__(AppendResult).decisions() == ()
