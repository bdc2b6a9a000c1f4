"""Glaive function-calling rows: the data set's text format, turn by turn."""

from __future__ import annotations

import json

from import_helpers import SAMPLES, load

from flowdrop_core.importers import parse_conversation, parse_conversations


def test_glaive_v2_row_with_two_calls_in_single_quoted_arguments() -> None:
    got = load("glaive_v2_news_headlines.json", "glaive")
    assert [m["role"] for m in got.messages] == [
        "system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"
    ]  # fmt: skip
    assert got.messages[2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "chat[1]",
                "type": "function",
                "function": {
                    "name": "get_news_headlines",
                    "arguments": '{"country": "United States"}',
                },
            }
        ],
    }
    assert got.messages[3]["tool_call_id"] == "chat[1]"
    assert got.messages[7]["tool_call_id"] == "chat[5]"
    assert got.messages[4]["content"].startswith(
        "Here are the latest news headlines for the United"
    )
    assert "<|endoftext|>" not in json.dumps(got.messages)
    assert got.origins[:3] == ["system", "chat[0]", "chat[1]"]
    assert got.notes == []


def test_glaive_rows_one_per_line_are_one_conversation_each() -> None:
    """The data set as JSON Lines (``{"system", "chat"}`` per line): one conversation each."""
    row = json.loads((SAMPLES / "glaive_v2_news_headlines.json").read_text(encoding="utf-8"))
    plain = {"system": "SYSTEM: You are a helpful assistant with no access to external functions.",
             "chat": "USER: Hi, how are you?\n\n\nASSISTANT: I'm well, thank you! <|endoftext|>\n\n\n"}  # fmt: skip
    got = parse_conversations(json.dumps(row) + "\n" + json.dumps(plain) + "\n")
    assert [c.label for c in got] == ["line 1", "line 2"]
    assert [len(c.messages) for c in got] == [9, 3]
    assert got[1].origins == ["line 2: system", "line 2: chat[0]", "line 2: chat[1]"]


def test_glaive_unreadable_function_call_is_kept_as_text_with_a_note() -> None:
    row = {
        "system": "SYSTEM: f",
        "chat": "USER: go\n\n\nASSISTANT: <functioncall> {name: f} <|endoftext|>",
    }
    got = parse_conversation(json.dumps(row))
    assert got.messages[-1] == {"role": "assistant", "content": "<functioncall> {name: f}"}
    assert [(n.where, n.what) for n in got.notes] == [("chat[1]", "unreadable function call")]


def test_glaive_v2_row_with_prose_then_a_call() -> None:
    """Row 25475: the assistant first answers in prose, then calls in a later turn."""
    got = load("glaive_v2_detect_language.json", "glaive")
    assert [(m["role"], m["content"]) for m in got.messages] == [
        ("system", got.messages[0]["content"]),
        (
            "user",
            "I have a text here and I am not sure what language it is. Can you help me identify it?",
        ),
        ("assistant", "Of course, I can help with that. Please provide me with the text."),
        ("user", 'Here it is - "Je suis un étudiant"'),
        ("assistant", None),
        ("tool", '{"language": "French"}'),
        ("assistant", "The text you provided is in French."),
    ]
    assert got.messages[0]["content"].startswith("You are a helpful assistant with access")
    assert got.messages[4]["tool_calls"][0]["function"] == {
        "name": "detect_language",
        "arguments": '{"text": "Je suis un étudiant"}',
    }
    assert got.messages[5]["tool_call_id"] == "chat[3]"
