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
