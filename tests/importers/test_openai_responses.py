"""The openai_responses importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    RESPONSES_ERRORS,
    call_fmt,
    call_main,
    call_openai_responses,
    error_edge,
    imported_edge,
    imported_fmt,
    load,
    notes_edge,
    raw,
    rows_edge,
)

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportNote,
    parse_conversation,
)
from flowdrop_core.importers import (
    _openai_responses as openai_responses,
)
from flowdrop_core.importers._base import Out


def test_openai_responses_folds_consecutive_calls() -> None:
    text = json.dumps(
        {
            "instructions": "be brief",
            "input": [
                {"role": "user", "content": "weather and news?"},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
                {"type": "function_call", "call_id": "c2", "name": "news", "arguments": {"q": 1}},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "c2", "output": "quiet"},
            ],
            "output": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": "Sunny", "annotations": []},
                        {"type": "output_text", "text": "and quiet."},
                    ],
                }
            ],
        }
    )
    got = parse_conversation(text)
    assert got.format == "openai-responses"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather and news?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_main("c1", "weather"), call_main("c2", "news", '{"q": 1}')],
        },
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
        {"role": "tool", "content": "quiet", "tool_call_id": "c2"},
        {"role": "assistant", "content": "Sunny\nand quiet."},
    ]
    assert got.origins == [
        "instructions",
        "input[0]",
        "input[2]+input[3]",
        "input[4]",
        "input[5]",
        "output[0]",
    ]
    assert got.turns == [[0], [1, 2, 3, 4, 5]]


@pytest.mark.parametrize(("document", "problem"), RESPONSES_ERRORS)
def test_responses_bad_item_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "openai-responses") == (
        f"<text> is not valid openai-responses: {problem}"
    )


@pytest.mark.parametrize(
    ("item", "content"),
    [
        ({"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "q"}},
         '[web_search_call ws_1] {"status": "completed", "action": {"type": "search", "query": "q"}}'),
        ({"type": "file_search_call", "id": "fs_1", "queries": ["a"], "status": "completed"},
         '[file_search_call fs_1] {"queries": ["a"], "status": "completed"}'),
        ({"type": "code_interpreter_call", "id": "ci_1", "code": "1+1", "outputs": [{"type": "logs", "logs": "2"}]},
         '[code_interpreter_call ci_1] {"code": "1+1", "outputs": [{"type": "logs", "logs": "2"}]}'),
        ({"type": "mcp_call", "id": "mcp_1", "server_label": "fs", "name": "read", "arguments": "{}", "output": "x"},
         '[mcp_call mcp_1] {"server_label": "fs", "name": "read", "arguments": "{}", "output": "x"}'),
    ],
)  # fmt: skip
def test_responses_hosted_tool_items_are_visible_and_never_fatal(
    item: dict[str, Any], content: str
) -> None:
    got = imported_fmt(
        {
            "input": "go",
            "output": [item, {"type": "message", "role": "assistant", "content": "done"}],
        }
    )
    assert got.format == "openai-responses"
    assert got.messages == [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": content},
        {"role": "assistant", "content": "done"},
    ]


def test_responses_client_side_calls_of_every_kind() -> None:
    got = imported_fmt(
        [
            {"type": "computer_call", "call_id": "cc1", "action": {"type": "click", "x": 1}},
            {
                "type": "computer_call_output",
                "call_id": "cc1",
                "output": {"type": "computer_screenshot"},
            },
            {"type": "custom_tool_call", "call_id": "ct1", "name": "patch", "input": "*** Begin"},
            {"type": "custom_tool_call_output", "call_id": "ct1", "output": "ok"},
            {
                "type": "reasoning",
                "id": "rs",
                "summary": [{"type": "summary_text", "text": "think"}],
            },
        ]
    )
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [call_fmt("cc1", "computer", '{"type": "click", "x": 1}')]},
        {"role": "tool", "content": '{"type": "computer_screenshot"}', "tool_call_id": "cc1"},
        {"role": "assistant", "content": None, "tool_calls": [call_fmt("ct1", "patch", "*** Begin")]},
        {"role": "tool", "content": "ok", "tool_call_id": "ct1"},
    ]  # fmt: skip
    assert got.notes == [
        ImportNote(
            "[4]", "reasoning item", "model reasoning is not a conversation message", "think"
        )
    ]


def test_openai_responses_provider_side_web_search_is_visible() -> None:
    got = load("openai_responses_web_search.json", "openai-responses")
    text = raw("openai_responses_web_search.json")["output"][1]["content"][0]["text"]
    assert got.messages == [
        {
            "role": "assistant",
            "content": "[web_search_call ws_67ccf18f64008190a39b619f4c8455ef087bb177ab789d5c] "
            '{"status": "completed"}',
        },
        {"role": "assistant", "content": text},
    ]
    assert got.origins == ["output[0]", "output[1]"]


def test_responses_hosted_item_opaque_output_is_a_note_not_part_of_the_marker() -> None:
    got = imported_edge(
        {
            "output": [
                {"type": "image_generation_call", "id": "ig_1", "status": "completed", "result": "iVBOR"},
                {"type": "web_search_call", "id": "ws_1", "status": "completed", "encrypted_content": "gAAA"},
                {"type": "file_search_call", "id": "fs_1", "status": "completed", "result": ""},
            ]
        },
        "openai-responses",
    )  # fmt: skip
    assert rows_edge(got) == [
        ("assistant", '[image_generation_call ig_1] {"status": "completed"}', None, None),
        ("assistant", '[web_search_call ws_1] {"status": "completed"}', None, None),
        ("assistant", '[file_search_call fs_1] {"status": "completed"}', None, None),
    ]
    why = "encrypted or binary output is not shown in the marker"
    assert notes_edge(got) == [
        ("output[0]", "image_generation_call opaque fields", why),
        ("output[1]", "web_search_call opaque fields", why),
    ]
    assert [n.content for n in got.notes] == [
        '{"result": "iVBOR"}',
        '{"encrypted_content": "gAAA"}',
    ]


def test_responses_tool_output_as_content_parts_is_their_text_and_media_markers() -> None:
    got = imported_edge(
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
    assert rows_edge(got)[1] == ("tool", "a cat\n[input_image]", None, "c1")
    assert got.origins == ["[0]", "[1]"]
    assert notes_edge(got) == []


def test_responses_empty_instructions_add_nothing_and_a_string_input_is_the_user_turn() -> None:
    got = imported_edge({"instructions": "", "input": "hi"}, "openai-responses")
    assert rows_edge(got) == [("user", "hi", None, None)]
    assert got.origins == ["input"]


def test_responses_instructions_as_a_list_of_items_come_first_each_located() -> None:
    """The API takes ``instructions`` as input items too: they are read, not dropped."""
    got = imported_edge(
        {
            "instructions": [
                {"role": "developer", "content": "Be brief."},
                {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "Cite."}]},
            ],
            "input": "hi",
        },
        "openai-responses",
    )  # fmt: skip
    assert rows_edge(got) == [
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
    assert [(n.where, n.what, n.why) for n in got.notes] == [
        ("output[0]", "reasoning item", why),
        ("output[1]", "reasoning item", why),
    ]
    assert [n.content for n in got.notes] == [
        "a\nb",
        '{"type": "reasoning", "id": "rs_2", "summary": []}',
    ]
    # Reasoning alone is no conversation: importing it is an error, not an empty success.
    with pytest.raises(ConversationFormatError, match="no message: all 2 items read are notes"):
        imported_edge(document, "openai-responses")


def test_responses_client_calls_named_by_their_type_fold_until_another_item() -> None:
    got = imported_edge(
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
    assert rows_edge(got) == [
        (
            "assistant",
            None,
            [
                call_openai_responses("s1", "local_shell", '{"command": ["ls"]}'),
                call_openai_responses("p1", "apply_patch", "*** Begin"),
            ],
            None,
        ),
        ("tool", "a.txt", None, "s1"),
        ("assistant", None, [call_openai_responses("c1", "f")], None),
        ("assistant", "between", None, None),
        ("assistant", None, [call_openai_responses("c2", "g")], None),
    ]
    assert got.origins == ["[0]+[1]", "[2]", "[3]", "[4]", "[5]"]


def test_responses_call_without_call_id_is_a_marker_and_an_output_without_one_a_note() -> None:
    got = imported_edge(
        [
            {"type": "shell_call", "id": "sh_1", "action": {"commands": ["ls"]}},
            {"type": "function_call_output", "output": "x"},
        ],
        "openai-responses",
    )
    assert rows_edge(got) == [
        ("assistant", '[shell_call sh_1] {"action": {"commands": ["ls"]}}', None, None)
    ]
    assert notes_edge(got) == [
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
    assert (
        error_edge(document, "openai-responses")
        == f"<text> is not valid openai-responses: {problem}"
    )


def test_responses_message_field_responses_does_not_read_is_a_note_with_its_content() -> None:
    item = {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": "a",
        "tool_calls": [{"id": "c1"}],
    }
    got = imported_edge([item], "openai-responses")
    assert rows_edge(got) == [("assistant", "a", None, None)]
    assert notes_edge(got) == [
        ("[0].tool_calls", "field 'tool_calls'", "openai-responses does not read it")
    ]
    assert got.notes[0].content == '[{"id": "c1"}]'
    assert got.notes[0].unknown
