"""OpenAI Responses import: what a user sees for each kind of item and each bad field.

Complements the Responses cases in test_importers.py, test_importers_edges.py
and test_importers_formats.py: nothing left out of a message is lost
silently, and every bad field is an exact located error.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_importers_edges import error, imported, notes, rows

from flowdrop_core.importers import ConversationFormatError, openai_responses
from flowdrop_core.importers.base import Out


def test_responses_hosted_item_opaque_output_is_a_note_not_part_of_the_marker() -> None:
    got = imported(
        {
            "output": [
                {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "iVBOR"},
                {"type": "web_search_call", "id": "ws_1", "status": "completed", "encrypted_content": "gAAA"},
                {"type": "file_search_call", "id": "fs_1", "status": "completed", "result": ""},
            ]
        },
        "openai-responses",
    )  # fmt: skip
    assert rows(got) == [
        ("assistant", '[image_generation_call ig_1] {"status": "completed"}', None, None),
        ("assistant", '[web_search_call ws_1] {"status": "completed"}', None, None),
        ("assistant", '[file_search_call fs_1] {"status": "completed"}', None, None),
    ]
    why = "encrypted or binary output is not shown in the marker"
    assert notes(got) == [
        ("output[0]", "image_generation_call opaque fields", why),
        ("output[1]", "web_search_call opaque fields", why),
    ]
    assert [n.content for n in got.notes] == [
        '{"result": "iVBOR"}',
        '{"encrypted_content": "gAAA"}',
    ]


def test_responses_tool_output_as_content_parts_is_their_text_and_media_markers() -> None:
    got = imported(
        [
            {"type": "function_call", "call_id": "c1", "name": "look", "arguments": "{}"},
            {
                "type": "function_call_output",
                "call_id": "c1",
                "output": [
                    {"type": "input_text", "text": "a cat"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AA"},
                ],
            },
        ],
        "openai-responses",
    )
    assert rows(got)[1] == ("tool", "a cat\n[input_image]", None, "c1")
    assert got.origins == ["[0]", "[1]"]
    assert notes(got) == []


def test_responses_empty_instructions_add_nothing_and_a_string_input_is_the_user_turn() -> None:
    got = imported({"instructions": "", "input": "hi"}, "openai-responses")
    assert rows(got) == [("user", "hi", None, None)]
    assert got.origins == ["input"]


def test_responses_instructions_as_a_list_of_items_come_first_each_located() -> None:
    """The API takes ``instructions`` as input items too: they are read, not dropped."""
    got = imported(
        {
            "instructions": [
                {"role": "developer", "content": "Be brief."},
                {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Cite."}]},
            ],
            "input": "hi",
        },
        "openai-responses",
    )  # fmt: skip
    assert rows(got) == [
        ("system", "Be brief.", None, None),
        ("system", "Cite.", None, None),
        ("user", "hi", None, None),
    ]
    assert got.origins == ["instructions[0]", "instructions[1]", "input"]


def test_responses_reasoning_note_keeps_its_summary_text_else_the_item_without_ciphertext() -> None:
    summary = [{"type": "summary_text", "text": "a"}, 5, {"text": 7}, {"text": "b"}]
    document = {
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": summary},
            {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAA"},
        ]
    }
    got = Out()
    openai_responses.read(document, got)
    assert got.messages == []
    why = "model reasoning is not a conversation message"
    assert notes(got) == [
        ("output[0]", "reasoning item", why),
        ("output[1]", "reasoning item", why),
    ]
    assert [n.content for n in got.notes] == [
        "a\nb",
        '{"type": "reasoning", "id": "rs_2", "summary": []}',
    ]
    # Reasoning alone is no conversation: importing it is an error, not an empty success.
    with pytest.raises(ConversationFormatError, match="no message: all 2 items read are notes"):
        imported(document, "openai-responses")


def test_responses_client_calls_named_by_their_type_fold_until_another_item() -> None:
    got = imported(
        [
            {"type": "local_shell_call", "call_id": "s1", "action": {"command": ["ls"]}},
            {"type": "apply_patch_call", "call_id": "p1", "input": "*** Begin"},
            {"type": "local_shell_call_output", "call_id": "s1", "output": "a.txt"},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "message", "role": "assistant", "content": "between"},
            {"type": "function_call", "call_id": "c2", "name": "g", "arguments": "{}"},
        ],
        "openai-responses",
    )
    assert rows(got) == [
        (
            "assistant",
            None,
            [
                call("s1", "local_shell", '{"command": ["ls"]}'),
                call("p1", "apply_patch", "*** Begin"),
            ],
            None,
        ),
        ("tool", "a.txt", None, "s1"),
        ("assistant", None, [call("c1", "f")], None),
        ("assistant", "between", None, None),
        ("assistant", None, [call("c2", "g")], None),
    ]
    assert got.origins == ["[0]+[1]", "[2]", "[3]", "[4]", "[5]"]


def test_responses_call_without_call_id_is_a_marker_and_an_output_without_one_a_note() -> None:
    got = imported(
        [
            {"type": "shell_call", "id": "sh_1", "action": {"commands": ["ls"]}},
            {"type": "function_call_output", "output": "x"},
        ],
        "openai-responses",
    )
    assert rows(got) == [
        ("assistant", '[shell_call sh_1] {"action": {"commands": ["ls"]}}', None, None)
    ]
    assert notes(got) == [
        (
            "[1]",
            "unknown item type 'function_call_output'",
            "openai-responses has no such item type",
        )
    ]
    assert got.notes[0].unknown


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ("x", "expected a list of items or an object with 'input', got string"),
        ({"model": "m"}, "no 'input' or 'output' list at the top level"),
        ({"input": 5}, "input: expected a list of items, got number"),
        (
            {"instructions": 5, "input": "q"},
            "instructions: expected a string or a list of items, got number",
        ),
        (
            {"instructions": [7], "input": "q"},
            "instructions[0]: expected an item object, got number",
        ),
        ({"input": "q", "output": "a"}, "output: expected a list of items, got string"),
        (
            {"input": [{"role": "user", "content": 5}]},
            "input[0].content: expected a string or a list of content parts, got number",
        ),
        ([5], "[0]: expected an item object, got number"),
        ([{"id": "x"}], "[0]: missing 'type'"),
    ],
)
def test_responses_bad_document_is_a_located_error(document: Any, problem: str) -> None:
    assert error(document, "openai-responses") == f"<text> is not valid openai-responses: {problem}"


def call(call_id: str, name: str, arguments: str = "{}") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_responses_message_field_responses_does_not_read_is_a_note_with_its_content() -> None:
    item = {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": "a",
        "tool_calls": [{"id": "c1"}],
    }
    got = imported([item], "openai-responses")
    assert rows(got) == [("assistant", "a", None, None)]
    assert notes(got) == [
        ("[0].tool_calls", "field 'tool_calls'", "openai-responses does not read it")
    ]
    assert got.notes[0].content == '[{"id": "c1"}]'
    assert got.notes[0].unknown
