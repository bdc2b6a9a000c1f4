"""The gemini importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    GEMINI_ERRORS,
    GEMINI_USER,
    SAMPLES,
    USER_GEMINI,
    call_fmt,
    call_gemini,
    call_sample,
    error_edge,
    imported_edge,
    imported_fmt,
    imported_gemini,
    load,
    notes_edge,
    notes_gemini,
    raw,
    rows_edge,
)

from flowdrop_core.importers import (
    FORMATS,
    REGISTRY,
    ConversationFormatError,
    Miss,
    load_conversation,
)
from flowdrop_core.importers import (
    _gemini as gemini,
)


@pytest.mark.parametrize(("document", "problem"), GEMINI_ERRORS)
def test_gemini_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "gemini") == f"<text> is not valid gemini: {problem}"


def test_gemini_system_instruction_as_plain_text() -> None:
    got = imported_edge({"systemInstruction": "be brief", "contents": [GEMINI_USER]}, "gemini")
    assert rows_edge(got) == [("system", "be brief", None, None), ("user", "hi", None, None)]


def test_gemini_only_the_first_candidate_is_imported_the_others_are_notes() -> None:
    candidates = [
        {"content": {"role": "model", "parts": [{"text": "a"}]}},
        {"content": {"role": "model", "parts": [{"text": "b"}]}},
    ]
    got = imported_edge({"contents": [GEMINI_USER], "candidates": candidates}, "gemini")
    assert rows_edge(got) == [("user", "hi", None, None), ("assistant", "a", None, None)]
    assert notes_edge(got) == [
        (
            "candidates[1].content",
            "another candidate",
            "alternative completions are not one conversation; candidates[0] is imported",
        )
    ]


def test_gemini_response_without_a_call_is_kept_with_a_note() -> None:
    response = {"functionResponse": {"name": "f", "response": {"r": 1}}}
    got = imported_edge(
        {"contents": [GEMINI_USER, {"role": "user", "parts": [response]}]}, "gemini"
    )
    assert rows_edge(got) == [("user", "hi", None, None), ("tool", '{"r": 1}', None, None)]
    assert notes_edge(got) == [
        (
            "contents[1].parts[0]",
            "function response without a call",
            "no earlier functionCall of that name is open",
        )
    ]


def test_gemini_media_and_code_parts_are_visible_markers() -> None:
    parts = [
        {"inlineData": {"mimeType": "image/png", "data": "x"}},
        {"executableCode": {"code": "print(1)"}},
    ]
    got = imported_edge({"contents": [{"role": "user", "parts": parts}]}, "gemini")
    assert rows_edge(got) == [
        ("user", '[inlineData image/png]\n[executableCode] {"code": "print(1)"}', None, None)
    ]


def test_gemini_snake_case_with_ids_system_and_thoughts() -> None:
    got = imported_fmt(
        {
            "system_instruction": {"parts": [{"text": "be brief"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "weather?"}]},
                {
                    "role": "model",
                    "parts": [
                        {"text": "let me think", "thought": True},
                        {"function_call": {"id": "fc1", "name": "w", "args": {"c": "Oslo"}}},
                        {"function_call": {"name": "w", "args": {"c": "Rome"}}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {"function_response": {"name": "w", "response": {"t": 1}}},
                        {"function_response": {"id": "fc1", "name": "w", "response": {"t": 2}}},
                    ],
                },
            ],
        }
    )
    assert got.format == "gemini"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_fmt("fc1", "w", '{"c": "Oslo"}'), call_fmt("contents[1].parts[2]", "w", '{"c": "Rome"}')],
        },
        # Without an id, a response answers the oldest open call of its name (fc1 here is
        # still open, so the id-less response takes it; the one with id fc1 keeps its id).
        {"role": "tool", "content": '{"t": 1}', "tool_call_id": "fc1"},
        {"role": "tool", "content": '{"t": 2}', "tool_call_id": "fc1"},
    ]  # fmt: skip
    assert [(n.where, n.what) for n in got.notes] == [("contents[1].parts[0]", "thought part")]


def test_gemini_unknown_part_is_a_marker_and_a_note() -> None:
    got = imported_fmt({"contents": [{"role": "model", "parts": [{"newKind": {"x": 1}}]}]})
    assert got.messages == [{"role": "assistant", "content": "[newKind]"}]
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("contents[0].parts[0]", "unknown part", True)
    ]


def test_gemini_contents_and_candidate() -> None:
    got = load("gemini_function_calling.json", "gemini")
    response = raw("gemini_function_calling.json")["contents"][2]["parts"][0]["functionResponse"]
    assert got.messages == [
        {"role": "user", "content": "Which theaters in Mountain View show Barbie movie?"},
        {
            "role": "assistant",
            "content": None,
            # The source has no call id: the call's origin is its id, and the response
            # (same function name) answers it.
            "tool_calls": [
                call_sample("contents[1].parts[0]", "find_theaters", '{"location": "Mountain View, CA", "movie": "Barbie"}')
            ],
        },
        {
            "role": "tool",
            "content": json.dumps(response["response"], ensure_ascii=False),
            "tool_call_id": "contents[1].parts[0]",
        },
        {
            "role": "assistant",
            "content": "OK. I found two theaters in Mountain View that are showing the Barbie "
            "movie: AMC Mountain View 16 and Regal Edwards 14.",
        },
    ]  # fmt: skip
    assert got.origins == [
        "contents[0]",
        "contents[1]",
        "contents[2].parts[0]",
        "candidates[0].content",
    ]


def test_a_content_field_gemini_does_not_read_is_an_unknown_note() -> None:
    got = imported_gemini(
        {"contents": [{"role": "user", "parts": [{"text": "hi"}], "text": "also"}]}
    )
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert notes_gemini(got) == [("contents[0].text", "field 'text'", "also", True)]


def test_a_content_with_no_parts_is_an_empty_turn_not_dropped() -> None:
    got = imported_gemini({"contents": [{"role": "user", "parts": []}]})
    assert got.messages == [{"role": "user", "content": ""}]
    assert got.origins == ["contents[0]"]


def test_model_text_beside_a_call_is_the_content_of_the_call_message() -> None:
    got = imported_gemini(
        {
            "contents": [
                USER_GEMINI,
                {
                    "role": "model",
                    "parts": [{"text": "Checking."}, {"functionCall": {"name": "f"}}],
                },
            ]
        }
    )
    assert got.messages[1] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [call_gemini("contents[1].parts[1]")],
    }


def test_an_empty_or_non_text_call_id_is_replaced_by_the_call_origin_and_answered_by_name() -> None:
    """An id that is no usable text does not name the call: its origin does, and a response
    with an empty id answers the oldest open call of its name."""
    got = imported_gemini(
        {
            "contents": [
                USER_GEMINI,
                {
                    "role": "model",
                    "parts": [
                        {"functionCall": {"id": "", "name": "f"}},
                        {"functionCall": {"id": 7, "name": "g"}},
                    ],
                },
                {
                    "role": "user",
                    "parts": [
                        {"functionResponse": {"id": "", "name": "g", "response": "sunny"}},
                        {"functionResponse": {"id": "", "name": "f", "response": "cold"}},
                    ],
                },
            ]
        }
    )
    assert got.messages[1:] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call_gemini("contents[1].parts[0]", "f"),
                call_gemini("contents[1].parts[1]", "g"),
            ],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "contents[1].parts[1]"},
        {"role": "tool", "content": "cold", "tool_call_id": "contents[1].parts[0]"},
    ]
    assert got.notes == []


def test_a_response_without_a_call_notes_the_function_name() -> None:
    response = {"functionResponse": {"name": "lookup", "response": {"r": 1}}}
    got = imported_gemini({"contents": [USER_GEMINI, {"role": "user", "parts": [response]}]})
    assert got.messages[1] == {"role": "tool", "content": '{"r": 1}', "tool_call_id": None}
    assert notes_gemini(got) == [
        ("contents[1].parts[0]", "function response without a call", "lookup", False)
    ]


# --------------------------------------------------------------------------- real recordings


def test_pydantic_ai_message_history_is_not_claimed_by_gemini() -> None:
    """pydantic-ai's ModelMessagesTypeAdapter JSON (kind, parts with part_kind) was read as
    Gemini: three user messages '[content]', '[tool_name]', '[tool_name]', the model's tool
    call among them, exit 0. Gemini does not claim it; without a pydantic-ai reader it is a
    clear error, never a Gemini reading."""
    document = raw("pydantic_ai_message_history.json")
    verdict = REGISTRY[FORMATS.index("gemini")].claims(document)
    assert isinstance(verdict, Miss)
    assert str(verdict) == "[0]: a message with 'kind' (pydantic-ai's, not a Gemini content)"
    if "pydantic-ai" in FORMATS:
        assert (
            load_conversation(SAMPLES / "pydantic_ai_message_history.json").format == "pydantic-ai"
        )
        return
    with pytest.raises(ConversationFormatError) as info:
        load_conversation(SAMPLES / "pydantic_ai_message_history.json")
    assert info.value.problems["gemini"] == (
        "[0]: a message with 'kind' (pydantic-ai's, not a Gemini content)"
    )
    assert str(info.value).startswith("no known format matched ")


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (5, "expected a list of contents or a request object, got number"),
        ([5], "[0]: expected a content object, got number"),
        ([{"role": "user"}], "[0]: missing 'parts'"),
        ([{"role": 3, "parts": []}], "[0]: unknown role 3 (expected user or model)"),
        ([{"parts": "x"}], "[0].parts: expected a list, got string"),
        ([{"parts": [5]}], "[0].parts[0]: expected a part object, got number"),
        (
            [{"parts": [{"type": "text", "text": "x"}]}],
            "[0].parts[0]: a part with 'type' is not a Gemini part",
        ),
    ],
)
def test_gemini_named_on_contents_detection_refuses_is_a_located_error(
    document: Any, problem: str
) -> None:
    """Detection refuses these shapes; naming the format reads them and locates the fault."""
    assert error_edge(document, "gemini") == f"<text> is not valid gemini: {problem}"


def test_gemini_a_part_of_only_quiet_keys_adds_no_note() -> None:
    got = imported_edge([{"parts": [{"thoughtSignature": "abc"}]}], "gemini")
    assert got.messages == [{"role": "user", "content": ""}]
    assert got.notes == []


@pytest.mark.parametrize(
    ("document", "where", "what", "score"),
    [
        ({"candidates": []}, "candidates", "expected a non-empty list of candidates", 1),
        ({"candidates": [{"content": {"role": "model"}}]}, "candidates[0].content", "missing 'parts'", 2),
        ([{"parts": [5]}], "[0].parts[0]", "expected a part object", 1),
        ([{"role": "user", "parts": [{"foo": 1}]}], "",
         "no part carries any of codeExecutionResult, code_execution_result, executableCode, "
         "executable_code, fileData, file_data, functionCall, functionResponse, function_call, "
         "function_response, inlineData, inline_data, text", 1),
    ],
)  # fmt: skip
def test_gemini_claims_says_what_a_near_document_lacks(
    document: Any, where: str, what: str, score: int
) -> None:
    assert gemini.claims(document) == Miss(where, what, score)


def test_gemini_a_request_needs_no_part_with_a_gemini_key() -> None:
    """A bare list needs a part carrying a Gemini key; a request's ``contents`` do not."""
    from flowdrop_core.importers._claims import Claim

    contents = [{"role": "user", "parts": [{"foo": 1}]}]
    assert isinstance(gemini.claims(contents), Miss)
    assert gemini.claims({"contents": contents}) == Claim("a request")
