"""MEM-16: "empty content" means the same thing to the engine and to content_is_empty.

The engine reads a user message's content inline (its hot path); the text
entry point asks ``content_is_empty``. An empty list or object is no content
for both; a list holding a part is content for both.
"""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core import append_messages
from flowdrop_core.messages import content_is_empty
from flowdrop_core.text import text_to_message


@pytest.mark.parametrize(
    ("content", "empty"),
    [
        ([], True),
        ({}, True),
        (None, True),
        (" \n", True),
        ([{"type": "text", "text": "x"}], False),
        ({"type": "text"}, False),
        ("x", False),
    ],
    ids=repr,
)
def test_engine_and_content_is_empty_agree(content: Any, empty: bool) -> None:
    assert content_is_empty(content) is empty
    result = append_messages([], [{"role": "user", "content": content}])
    assert [(e.kind.value, e.rule) for e in result.events] == (
        [("pure_read", "MEM-16")] if empty else [("appended", "MEM-14")]
    )
    assert result.count == (0 if empty else 1)


@pytest.mark.parametrize(
    ("text", "kind"),
    [(b"hi", "a value of type bytes"), ([1], "a list"), (7, "a number")],
    ids=["bytes", "list", "number"],
)
def test_text_that_is_not_text_is_refused_not_printed(text: Any, kind: str) -> None:
    """MEM-16's text entry point never guesses how to print a non-string."""
    with pytest.raises(ValueError) as err:
        text_to_message(text, "user")
    assert str(err.value) == f"text must be a string or null, got {kind}"


def test_a_stored_row_with_a_call_that_is_not_an_object_is_named_by_its_place() -> None:
    """A loaded buffer's bad row is reported as the stored entry it is (buffer[i]), not skipped."""
    from flowdrop_core.messages import InvalidMessagesError

    stored = [{"role": "assistant", "content": None, "metadata": {"tool_calls": [5]}}]
    with pytest.raises(InvalidMessagesError) as err:
        append_messages(stored, [{"role": "user", "content": "x"}])
    assert str(err.value) == (
        "1 invalid message: buffer[0]: tool_calls[0] must be an object, got int"
    )
