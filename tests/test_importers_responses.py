"""OpenAI Responses import: hosted items' opaque output and structured tool output.

Complements the Responses cases in test_importers_edges.py and
test_importers_formats.py: nothing left out of a message is lost silently.
"""

from __future__ import annotations

from test_importers_edges import imported, notes, rows


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
