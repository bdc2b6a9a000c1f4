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
