"""Where a claim gives up, and what a forced format says of a document it does not claim.

Positive detection refuses a document before its reader runs; ``format=``
(the CLI's ``--format``) skips the claims, so a reader's own located errors
are what a user who forces a format reads. These pin both edges.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    parse_conversation,
)
from flowdrop_core.importers import (
    _claude_code as claude_code,
)
from flowdrop_core.importers._claims import Claim, Miss


def _lines(events: list[dict[str, Any]]) -> list[tuple[int, Any]]:
    return [(n, event) for n, event in enumerate(events, start=1)]


USER = {"type": "user", "message": {"role": "user", "content": "hi"}}
OTHER = {"type": "summary", "summary": "a title"}


def test_a_claude_code_session_is_claimed_within_its_first_lines_and_not_after() -> None:
    limit = claude_code.GIVE_UP_AFTER
    assert isinstance(claude_code.claims(_lines([OTHER] * (limit - 1) + [USER])), Claim)
    late = claude_code.claims(_lines([OTHER] * limit + [USER]))
    assert isinstance(late, Miss)
    assert (late.where, late.what) == (
        "line 1",
        "no line is a 'user' or 'assistant' event with a 'message' object",
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[1]", "<text> is not valid scenario: expected a scenario object, got list"),
        ('{"a": 1}', "<text> is not valid scenario: not a scenario (no 'steps')"),
    ],
)
def test_a_forced_scenario_names_what_the_document_lacks(text: str, error: str) -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(text, format="scenario")
    assert str(info.value) == error


def test_a_list_with_no_request_body_is_not_an_api_recording() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps([{"a": 1}, {"b": 2}]), format="api-recording")
    assert "no request body ('messages', 'contents' or 'input')" in str(info.value)


def test_a_list_expected_where_a_claim_finds_something_else_is_located() -> None:
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation(json.dumps({"contents": 5}))
    assert "gemini: contents: expected a list, got number" in str(info.value)
