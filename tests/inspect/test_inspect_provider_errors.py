"""Paste the provider's error: each real error text names its rule and finds its cause.

Every text below is quoted as a provider returned it, from the public issue
thread cited next to it (ids kept, so the texts stay the real ones; the
recording each test builds uses the same ids).
"""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core.inspect.health import HealthReport, health
from flowdrop_core.inspect.provider_errors import diagnose, locate, read_error
from flowdrop_core.replay import new_timeline


def _report(messages: list[dict[str, Any]]) -> HealthReport:
    timeline = new_timeline(context={"session_id": "s"})
    for m in messages:
        timeline.append_step(m)
    return health(timeline)


def _call(cid: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": cid, "function": {"name": "f"}}],
    }


def _result(cid: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": cid, "content": "ok"}


USER = {"role": "user", "content": "go on"}


def _unanswered(cid: str) -> HealthReport:
    """A call with no result, then a user turn: GR-MEM heals it (MEM-3)."""
    return _report([{"role": "user", "content": "hi"}, _call(cid), USER])


def _orphan(cid: str) -> HealthReport:
    return _report([{"role": "user", "content": "hi"}, _result(cid)])


def _resent(cid: str) -> HealthReport:
    return _report([{"role": "user", "content": "hi"}, _call(cid), _result(cid), _result(cid)])


def _duplicate_turn(cid: str) -> HealthReport:
    return _report([{"role": "user", "content": "hi"}, _call(cid), _result(cid), _call(cid)])


# (provider, source, text, the recording that causes it, kind located, call id, rule)
CASES = [
    (
        "Anthropic",
        # https://github.com/anthropics/claude-code/issues/5989
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
        '"messages.22: `tool_use` ids were found without `tool_result` blocks immediately '
        "after: toolu_01HqfLWiAKQLsniF2fBGF2KD, toolu_01SJzDkeAZER935cpGFptTNk. Each "
        '`tool_use` block must have a corresponding `tool_result` block in the next message."}}',
        _unanswered("toolu_01SJzDkeAZER935cpGFptTNk"),
        "unanswered_call",
        "toolu_01SJzDkeAZER935cpGFptTNk",
        "MEM-3",
    ),
    (
        "Anthropic",
        # https://github.com/router-for-me/CLIProxyAPI/issues/497 (JSON-escaped, as logged)
        '{\\"type\\":\\"error\\",\\"error\\":{\\"type\\":\\"invalid_request_error\\",'
        '\\"message\\":\\"messages.12.content.0: unexpected `tool_use_id` found in '
        "`tool_result` blocks: toolu_01JLpBvrkaJHBDU3z3cWqtyv. Each `tool_result` block must "
        'have a corresponding `tool_use` block in the previous message.\\"}',
        _orphan("toolu_01JLpBvrkaJHBDU3z3cWqtyv"),
        "orphan_result",
        "toolu_01JLpBvrkaJHBDU3z3cWqtyv",
        "MEM-5",
    ),
    (
        "Anthropic",
        # https://github.com/anthropics/claude-code/issues/14110
        "messages.10.content.1: each tool_use must have a single result. Found multiple "
        "`tool_result` blocks with id: toolu_vrtx_01WjbYafn5hwELEqiDQ4n2wv",
        _resent("toolu_vrtx_01WjbYafn5hwELEqiDQ4n2wv"),
        "duplicate_result",
        "toolu_vrtx_01WjbYafn5hwELEqiDQ4n2wv",
        "MEM-1",
    ),
    (
        "Anthropic",
        # https://github.com/anthropics/anthropic-sdk-typescript/issues/653
        "Did not find 1 tool_result block(s) at the beginning of this message. Messages "
        "following tool_use blocks must begin with a matching number of tool_result blocks.",
        _unanswered("toolu_x1"),
        "unanswered_call",
        "toolu_x1",
        "MEM-3",
    ),
    (
        "OpenAI",
        # https://github.com/miurla/morphic/issues/136 (OpenAI's spelling "preceeding")
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        _orphan("call_orphan1"),
        "orphan_result",
        "call_orphan1",
        "MEM-5",
    ),
    (
        "OpenAI",
        # https://github.com/FoundationAgents/OpenManus/issues/744 (the later spelling)
        "Error code: 400 - {'error': {'message': \"Messages with role 'tool' must be a response "
        "to a preceding message with 'tool_calls'\", 'type': 'invalid_request_error'}}",
        _resent("call_twice"),
        "duplicate_result",
        "call_twice",
        "MEM-1",
    ),
    (
        "OpenAI",
        # https://github.com/BerriAI/litellm/issues/10083
        "litellm.BadRequestError: OpenAIException - An assistant message with 'tool_calls' must "
        "be followed by tool messages responding to each 'tool_call_id'. The following "
        "tool_call_ids did not have response messages: call_DAZJkqyYW8JTJdkO76E5MoPH",
        _unanswered("call_DAZJkqyYW8JTJdkO76E5MoPH"),
        "unanswered_call",
        "call_DAZJkqyYW8JTJdkO76E5MoPH",
        "MEM-3",
    ),
    (
        "Gemini",
        # https://github.com/google-gemini/gemini-cli/issues/4217
        "Please ensure that the number of function response parts is equal to the number of "
        "function call parts of the function call turn.",
        _resent("g1"),
        "duplicate_result",
        "g1",
        "MEM-1",
    ),
    (
        "Gemini",
        # https://github.com/google-gemini/gemini-cli/issues/11814
        "400 Bad request\nPlease ensure that function call turn comes immediately after a user "
        "turn or after a function response turn.",
        _duplicate_turn("g2"),
        "duplicate_call",
        "g2",
        "MEM-2",
    ),
    (
        "Gemini",
        # https://github.com/langchain-ai/langchain/issues/27799 (the title)
        "Please ensure that function response turn comes immediately after a function call turn",
        _orphan("g3"),
        "orphan_result",
        "g3",
        "MEM-5",
    ),
    (
        "Bedrock",
        # https://github.com/agno-agi/agno/issues/6698 (two of its eight ids)
        "An error occurred (ValidationException) when calling the ConverseStream operation: "
        "Expected toolResult blocks at messages.2.content for the following Ids: "
        "tooluse_jQ912rboYgzgLULQpRxWot, tooluse_sX1A7q9kipz4qAW36LUR1H",
        _unanswered("tooluse_sX1A7q9kipz4qAW36LUR1H"),
        "unanswered_call",
        "tooluse_sX1A7q9kipz4qAW36LUR1H",
        "MEM-3",
    ),
    (
        "Bedrock",
        # https://github.com/Just-Curieous/Curie/issues/16
        'litellm.BadRequestError: BedrockException - {"message":"The number of toolResult '
        'blocks at messages.2.content exceeds the number of toolUse blocks of previous turn."}',
        _resent("tooluse_b2"),
        "duplicate_result",
        "tooluse_b2",
        "MEM-1",
    ),
]


@pytest.mark.parametrize(
    ("provider", "text", "report", "kind", "call_id", "rule"),
    CASES,
    ids=[f"{c[0]}-{k}" for k, c in enumerate(CASES)],
)
def test_the_error_names_its_rule_and_locates_its_cause(
    provider: str, text: str, report: HealthReport, kind: str, call_id: str, rule: str
) -> None:
    found = diagnose(text, report)
    assert found is not None
    assert found.error.pattern.provider == provider
    assert found.rules[0] == rule
    cause = found.findings[0]
    assert (cause.kind, cause.call_id) == (kind, call_id)
    assert cause.index is not None and cause.step is not None
    assert f"{kind} at {cause.where}" in found.explain()
    assert f"step {cause.step}" in found.explain()


def test_the_ids_named_pick_the_one_finding_among_several() -> None:
    report = _report(
        [{"role": "user", "content": "hi"}, _call("call_keep"), _call("call_DAZJ"), USER]
    )
    assert len(report.of_kind("unanswered_call")) == 2
    error = read_error(
        "An assistant message with 'tool_calls' must be followed by tool messages responding "
        "to each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_DAZJ"
    )
    assert error is not None and error.call_ids == ("call_DAZJ",)
    assert [f.index for f in locate(error, report)] == [2]


def test_the_provider_index_is_its_own_numbering() -> None:
    error = read_error(
        "messages.33: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b. Each `tool_use` block must have a "
        "corresponding `tool_result` block in the next message."
    )
    assert error is not None
    assert error.provider_index == 33
    assert error.call_ids == ("toolu_vrtx_01KKMxh6V7Kx6g5tZbQBfQ9b",)
    assert "messages.33 (its own request's numbering" in error.explain()


def test_an_unrelated_error_is_not_recognised() -> None:
    assert read_error("429 Too Many Requests: rate limit exceeded") is None
    assert read_error("") is None
