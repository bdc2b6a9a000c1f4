"""A pasted error is checked against the recording: each id it names is looked up.

Every text is a provider's own, quoted from the public issue thread cited next
to it, with or without the SDK's wrapper around it. Its id is swapped for one
of the recording below (an unanswered call, an answered call, an orphan
result) or for one the recording does not hold, so each text is tried with an
id that is at fault, answered, and absent. Gemini's texts name no id; they
are located by the kinds of finding that cause them.
"""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core.inspect.health import HealthReport, health
from flowdrop_core.inspect.provider_errors import diagnose
from flowdrop_core.replay import new_timeline

OPEN = "call_open7Q"  # called, never answered (GR-MEM heals it)
OTHER = "call_other3Z"  # called in the same turn, never answered either
ANSWERED = "call_done5x"  # called and answered
ORPHAN = "call_orph9K"  # a result whose call is not in the recording
ABSENT = "call_doesnotexist42"  # in no message of the recording


def _recording() -> HealthReport:
    def call(*ids: str) -> dict[str, Any]:
        calls = [{"id": cid, "function": {"name": "f", "arguments": "{}"}} for cid in ids]
        return {"role": "assistant", "content": "", "tool_calls": calls}

    def result(cid: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": cid, "content": "ok"}

    timeline = new_timeline(context={"session_id": "s"})
    for message in [
        {"role": "user", "content": "hi"},
        call(ANSWERED),
        result(ANSWERED),
        call(OPEN, OTHER),
        {"role": "user", "content": "go on"},
        result(ORPHAN),
    ]:
        timeline.append_step(message)
    return health(timeline)


REPORT = _recording()

# (provider, the text as quoted, the id it names there, the kind it is about)
CALL_SIDE = [
    (
        "OpenAI",
        # https://github.com/RamiAwar/dataline/issues/172 (the Python SDK's repr)
        "BadRequestError('Error code: 400 - {\\'error\\': {\\'message\\': \"An assistant message "
        "with \\'tool_calls\\' must be followed by tool messages responding to each "
        "\\'tool_call_id\\'. The following tool_call_ids did not have response messages: "
        "call_i8vT76kQ8XOpe9ErYaTYRRxV\", \\'type\\': \\'invalid_request_error\\', \\'param\\': "
        "\\'messages.[14].role\\', \\'code\\': None}}')",
        "call_i8vT76kQ8XOpe9ErYaTYRRxV",
    ),
    (
        "OpenAI",
        # https://github.com/BerriAI/litellm/issues/10083 (the provider's sentence alone)
        "An assistant message with 'tool_calls' must be followed by tool messages responding to "
        "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
        "call_DAZJkqyYW8JTJdkO76E5MoPH",
        "call_DAZJkqyYW8JTJdkO76E5MoPH",
    ),
    (
        "OpenAI",
        # https://github.com/router-for-me/CLIProxyAPI/issues/2368 (Responses API)
        '{"type": "error", "status": 400, "error": {"message": "No tool output found for '
        'function call call_uK3eDRSXx9p45csFRjvXDNPq.", "type": "invalid_request_error", '
        '"param": "input", "code": null}}',
        "call_uK3eDRSXx9p45csFRjvXDNPq",
    ),
    (
        "Anthropic",
        # https://github.com/anthropics/claude-code/issues/8210
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
        '"messages.167: `tool_use` ids were found without `tool_result` blocks immediately '
        "after: toolu_019P95AL5DFCUyhtgQDcWJ3x. Each `tool_use` block must have a "
        'corresponding `tool_result` block in the next message."},"request_id":'
        '"req_011CTWFpbkpKZzpBJezq7xnK"}',
        "toolu_019P95AL5DFCUyhtgQDcWJ3x",
    ),
    (
        "Bedrock",
        # https://github.com/agno-agi/agno/issues/6698 (the first of its eight ids)
        "ERROR Unexpected error calling Bedrock API: An error occurred (ValidationException) "
        "when calling the ConverseStream operation: Expected toolResult blocks at "
        "messages.2.content for the following Ids: tooluse_jQ912rboYgzgLULQpRxWot",
        "tooluse_jQ912rboYgzgLULQpRxWot",
    ),
]
RESULT_SIDE = [
    (
        "OpenAI",
        # https://github.com/continuedev/continue/issues/10092 (Responses API)
        '{"message":"No tool call found for function call output with call_id '
        'call_uelfkqtHfJDC4Btqeoozq82e.","type":"invalid_request_error","param":"input",'
        '"code":null}',
        "call_uelfkqtHfJDC4Btqeoozq82e",
    ),
    (
        "Anthropic",
        # https://github.com/anthropics/claude-code/issues/18947
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
        '"messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: '
        "toolu_01FfCGddPyWsq3gCLqXtsJki. Each `tool_result` block must have a corresponding "
        '`tool_use` block in the previous message."},"request_id":"req_011CsEAChdg349Hd5d4z3fBo"}',
        "toolu_01FfCGddPyWsq3gCLqXtsJki",
    ),
]


def _ids(cases: list[tuple[str, str, str]]) -> list[str]:
    return [f"{provider}-{k}" for k, (provider, _, _) in enumerate(cases)]


@pytest.mark.parametrize(("provider", "text", "named"), CALL_SIDE, ids=_ids(CALL_SIDE))
def test_an_unanswered_id_is_located_and_only_it(provider: str, text: str, named: str) -> None:
    found = diagnose(text.replace(named, OPEN), REPORT)
    assert found is not None and found.error.pattern.provider == provider
    assert found.error.call_ids == (OPEN,)
    assert [(f.kind, f.call_id) for f in found.findings] == [("unanswered_call", OPEN)]
    assert [c.status for c in found.checks] == ["at fault"]
    assert OTHER not in found.explain()  # the other unanswered call is not blamed


@pytest.mark.parametrize(
    ("provider", "text", "named"), CALL_SIDE + RESULT_SIDE, ids=_ids(CALL_SIDE + RESULT_SIDE)
)
def test_an_answered_id_is_said_so_and_blames_no_other_call(
    provider: str, text: str, named: str
) -> None:
    found = diagnose(text.replace(named, ANSWERED), REPORT)
    assert found is not None and found.error.pattern.provider == provider
    assert found.findings == []
    assert [c.status for c in found.checks] == ["answered"]
    said = found.explain()
    assert f"{ANSWERED} is answered in this recording (called at step 2, answered at step 3)" in (
        said
    )
    assert "Caused by" not in said
    if found.others:  # the recording's own findings of those kinds are offered as other calls
        assert all(f.call_id != ANSWERED for f in found.others)
        assert "are about other calls" in said


@pytest.mark.parametrize(
    ("provider", "text", "named"), CALL_SIDE + RESULT_SIDE, ids=_ids(CALL_SIDE + RESULT_SIDE)
)
def test_an_absent_id_is_said_so_and_blames_no_other_call(
    provider: str, text: str, named: str
) -> None:
    found = diagnose(text.replace(named, ABSENT), REPORT)
    assert found is not None and found.error.pattern.provider == provider
    assert found.findings == []
    assert [c.status for c in found.checks] == ["absent"]
    assert (
        f"{ABSENT} is not in this recording: is this the error of another request?"
        in found.explain()
    )
    assert "Caused by" not in found.explain()


@pytest.mark.parametrize(("provider", "text", "named"), RESULT_SIDE, ids=_ids(RESULT_SIDE))
def test_a_result_side_error_finds_the_orphan_or_says_the_call_is_another_kind(
    provider: str, text: str, named: str
) -> None:
    orphan = diagnose(text.replace(named, ORPHAN), REPORT)
    assert orphan is not None and orphan.error.pattern.provider == provider
    assert [(f.kind, f.call_id) for f in orphan.findings] == [("orphan_result", ORPHAN)]
    unanswered = diagnose(text.replace(named, OPEN), REPORT)
    assert unanswered is not None
    assert [f.call_id for f in unanswered.findings] == [OPEN]  # the same call, said why
    assert "not a kind that causes this error" in unanswered.explain()


def test_gemini_names_no_id_so_every_finding_of_its_kinds_is_the_cause() -> None:
    # https://github.com/google-gemini/gemini-cli/issues/16987 (as the CLI printed it)
    text = """[API Error: [{
    "error": {
      "code": 400,
      "message": "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
      "status": "INVALID_ARGUMENT"
    }
  }
  ]]"""
    found = diagnose(text, REPORT)
    assert found is not None and found.error.pattern.provider == "Gemini"
    assert found.error.call_ids == () and found.checks == ()
    assert {f.call_id for f in found.findings} == {OPEN, OTHER, ORPHAN}
    assert "names no call id" in found.explain()


def test_an_anthropic_body_and_its_error_share_one_numbering() -> None:
    """The system prompt is no message of an Anthropic body: messages.N is the file's messages[N]."""
    from flowdrop_core.importers import load_conversation
    from flowdrop_core.replay import replay_conversation

    body = {
        "system": "You are terse.",
        "messages": [
            {"role": "user", "content": "weather?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_01A", "name": "w", "input": {}}],
            },
            {"role": "user", "content": "and tomorrow?"},
        ],
    }
    import json

    conv = load_conversation(json.dumps(body).encode(), name="body.json")
    report = health(replay_conversation(conv))
    (cause,) = report.of_kind("unanswered_call")
    assert cause.where.startswith("messages[1]") and "message index" not in cause.where
    text = (
        CALL_SIDE[3][1].replace("messages.167", "messages.1").replace(CALL_SIDE[3][2], "toolu_01A")
    )
    found = diagnose(text, report)
    assert found is not None and found.findings == [cause]
    assert "The provider counts it as its messages.1, this file's messages[1]." in found.explain()
