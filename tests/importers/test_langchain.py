"""The langchain importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
from typing import Any

import pytest
from import_helpers import (
    LANGCHAIN_ERRORS,
    call_fmt,
    call_main,
    call_sample,
    error_edge,
    error_langchain,
    imported_edge,
    imported_fmt,
    imported_langchain,
    legacy_call,
    legacy_id,
    load,
    notes_edge,
    notes_sample,
    raw,
    rows_edge,
)

from flowdrop_core.importers import (
    FORMATS,
    REGISTRY,
    Claim,
    Miss,
    parse_conversation,
)
from flowdrop_core.importers import (
    _langchain as langchain,
)


def test_langchain_messages_to_dict() -> None:
    text = json.dumps(
        [
            {"type": "system", "data": {"content": "be brief", "type": "system"}},
            {"type": "human", "data": {"content": "weather?", "type": "human", "id": "h1"}},
            {
                "type": "ai",
                "data": {
                    "content": "",
                    "tool_calls": [
                        {"name": "weather", "args": {"c": "Oslo"}, "id": "c1", "type": "tool_call"}
                    ],
                },
            },
            {
                "type": "tool",
                "data": {"content": "boom", "tool_call_id": "c1", "status": "error"},
            },
            {
                "type": "ai",
                "data": {
                    "content": "retrying",
                    "additional_kwargs": {
                        "tool_calls": [
                            {
                                "id": "c2",
                                "type": "function",
                                "function": {"name": "weather", "arguments": '{"c":"Oslo"}'},
                            }
                        ]
                    },
                },
            },
            {"type": "tool", "data": {"content": "cold", "tool_call_id": "c2"}},
        ]
    )
    got = parse_conversation(text)
    assert got.format == "langchain"
    assert got.messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_main("c1", "weather", '{"c": "Oslo"}')],
        },
        {"role": "tool", "content": "[error] boom", "tool_call_id": "c1"},
        {
            "role": "assistant",
            "content": "retrying",
            "tool_calls": [call_main("c2", "weather", '{"c":"Oslo"}')],
        },
        {"role": "tool", "content": "cold", "tool_call_id": "c2"},
    ]
    assert got.origins == ["[0]", "[1]", "[2]", "[3]", "[4]", "[5]"]


@pytest.mark.parametrize(("document", "problem"), LANGCHAIN_ERRORS)
def test_langchain_bad_field_is_a_located_error(document: Any, problem: str) -> None:
    assert error_edge(document, "langchain") == f"<text> is not valid langchain: {problem}"


def test_langchain_chat_message_class_and_chat_type_take_their_role() -> None:
    got = imported_edge(
        [
            {
                "lc": 1,
                "type": "constructor",
                "id": ["langchain", "schema", "messages", "ChatMessage"],
                "kwargs": {"role": "user", "content": "hi"},
            },
            {"type": "chat", "role": "assistant", "content": "a"},
        ],
        "langchain",
    )
    assert rows_edge(got) == [("user", "hi", None, None), ("assistant", "a", None, None)]


def test_langchain_reasoning_summary_is_a_note_with_its_text() -> None:
    extra = {"reasoning": {"summary": [{"text": "thought"}, 5]}}
    got = imported_edge([{"type": "ai", "content": "a", "additional_kwargs": extra}], "langchain")
    assert rows_edge(got) == [("assistant", "a", None, None)]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].additional_kwargs.reasoning", "reasoning", "thought")
    ]


def test_langchain_invalid_tool_calls_are_kept_as_calls() -> None:
    """A call the model botched is still a call: its result must find it (MEM-5 needs it)."""
    invalid = [{"id": "c2", "name": "f", "args": "{bad"}]
    got = imported_edge([{"type": "ai", "content": "", "invalid_tool_calls": invalid}], "langchain")
    call = {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{bad"}}
    assert rows_edge(got) == [("assistant", None, [call], None)]


def test_langchain_call_block_missing_from_tool_calls_is_a_note() -> None:
    document = [
        {
            "type": "ai",
            "content": [{"type": "tool_use", "id": "zz", "name": "f", "input": {}}],
            "tool_calls": [{"id": "c1", "name": "f", "args": {}}],
        }
    ]
    got = imported_edge(document, "langchain")
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    assert rows_edge(got) == [("assistant", None, [call], None)]
    assert notes_edge(got) == [
        (
            "[0].content[0]",
            "tool_use block not in tool_calls",
            "LangChain reads calls from tool_calls; this block declares one it lacks",
        )
    ]


def test_role_based_langchain_dicts_keep_calls_from_additional_kwargs() -> None:
    """Calls under additional_kwargs.tool_calls were lost and their results orphaned."""
    document = [
        {"role": "user", "content": "weather?"},
        {
            "role": "assistant",
            "content": "",
            "additional_kwargs": {
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}
                ]
            },
        },
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]
    got = imported_fmt(document)
    assert got.format == "langchain"
    assert got.messages == [
        {"role": "user", "content": "weather?"},
        {"role": "assistant", "content": None, "tool_calls": [call_fmt("c1", "w")]},
        {"role": "tool", "content": "sunny", "tool_call_id": "c1"},
    ]
    assert got.notes == []


def test_langgraph_flat_model_dump_state_and_updates() -> None:
    messages = [
        {"type": "human", "content": "hi", "id": "1"},
        {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "f", "args": {}, "id": "c1"}],
            "id": "2",
        },
        {"type": "tool", "content": "r", "tool_call_id": "c1", "status": "error", "id": "3"},
    ]
    expected = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call_fmt("c1", "f")]},
        {"role": "tool", "content": "[error] r", "tool_call_id": "c1"},
    ]
    state = imported_fmt({"messages": messages})
    assert (state.format, state.messages) == ("langchain", expected)
    updates = imported_fmt(
        [{"agent": {"messages": messages[:2]}}, {"tools": {"messages": messages[2:]}}]
    )
    assert updates.messages == expected
    assert updates.origins == [
        "[0].agent.messages[0]",
        "[0].agent.messages[1]",
        "[1].tools.messages[0]",
    ]


def test_langgraph_values_note_a_message_the_last_state_dropped() -> None:
    first = {"type": "human", "content": "gone", "id": "1"}
    kept = {"type": "human", "content": "kept", "id": "2"}
    got = imported_fmt([{"messages": [first]}, {"messages": [kept]}])
    assert got.messages == [{"role": "user", "content": "kept"}]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[0].messages[0]", "message missing from the last state")
    ]


def test_langchain_tool_message_without_an_id_and_with_object_content() -> None:
    """Importers read, they do not judge: an id-less result stays id-less (MEM-1 judges it);
    structured content a tracing integration logged is shown as its JSON, with a note."""
    got = imported_fmt(
        [
            {"type": "tool", "data": {"content": "x"}},
            {"role": "tool", "content": {"k": 1}, "additional_kwargs": {}},
        ]
    )
    assert got.format == "langchain"
    assert got.messages == [
        {"role": "tool", "content": "x"},
        {"role": "tool", "content": '{"k": 1}'},
    ]
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("[1].content", "content that is an object", True)
    ]


def test_langchain_legacy_function_call_in_additional_kwargs() -> None:
    got = imported_fmt(
        [
            {"type": "ai", "data": {"content": "", "additional_kwargs": {"function_call": {"name": "f", "arguments": "{}"}}}},
            {"type": "function", "data": {"content": "r", "name": "f"}},
        ]
    )  # fmt: skip
    where = "[0].data.additional_kwargs.function_call"
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [call_fmt(where, "f")]},
        {"role": "tool", "content": "r", "tool_call_id": where},
    ]


def test_a_plain_role_list_is_not_claimed_by_langchain() -> None:
    """Plain role dicts are Chat's; LangChain claims a list only with a LangChain-typed message."""
    plain = [{"role": "user", "content": "hi"}]
    verdicts = {spec.name: spec.claims(plain) for spec in REGISTRY if spec.read is not None}
    assert isinstance(verdicts["langchain"], Miss)
    assert isinstance(verdicts["openai-chat"], Claim)
    typed = [*plain, {"type": "ai", "content": "yo"}]
    assert isinstance(REGISTRY[FORMATS.index("langchain")].claims(typed), Claim)


def test_langchain_dumpd_constructor_json() -> None:
    got = load("langchain_dumpd.json", "langchain")
    assert got.messages == [
        {
            "role": "assistant",
            "content": "blah",
            "tool_calls": [
                call_sample("baz", "foo", '{"bar": 1}'),
                call_sample("booz", "foobad", "blah"),
            ],
        }
    ]
    assert got.origins == ["[0]"]


def test_langgraph_stream_values_with_langchain_js_tool_results() -> None:
    got = load("langgraph_stream_values.json", "langchain")
    states = raw("langgraph_stream_values.json")
    final = states[-1]["messages"]
    assert got.messages == [
        {"role": "user", "content": "What's the weather in Tokyo and what time is it there?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call_sample("call_lxFuvuhpu9gvtx04WrmXZF9h", "get_weather", '{"city": "Tokyo", "units": "celsius"}'),
                call_sample("call_U3RijXRN09TXMyKWFZwqWjnJ", "get_datetime", '{"timezone": "Asia/Tokyo", "format": "full"}'),
            ],
        },
        {
            "role": "tool",
            "content": "Weather in Tokyo: 20°C, Clear skies",
            "tool_call_id": "call_lxFuvuhpu9gvtx04WrmXZF9h",
        },
        {
            "role": "tool",
            "content": final[3]["kwargs"]["content"],
            "tool_call_id": "call_U3RijXRN09TXMyKWFZwqWjnJ",
        },
        {"role": "assistant", "content": final[4]["kwargs"]["content"][0]["text"]},
    ]  # fmt: skip
    assert got.origins == [f"[3].messages[{k}]" for k in range(5)]
    # The reasoning summary rides in additional_kwargs: a note with its text, not lost.
    assert notes_sample(got) == [
        ("[3].messages[1].kwargs.additional_kwargs.reasoning", "reasoning")
    ]
    summary = final[1]["kwargs"]["additional_kwargs"]["reasoning"]["summary"][0]["text"]
    assert got.notes[0].content == summary


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"foo": 1}, "expected a list of messages or an object with 'messages', got object"),
        ("hi", "expected a list of messages or an object with 'messages', got string"),
        ({"messages": 5}, "messages: expected a list, got number"),
        ([{"type": 5, "role": "user", "content": "x"}], "[0]: 'type' must be a string, got number"),
        (
            [{"type": ["human"], "data": {"content": "x"}}],
            "[0]: 'type' must be a string, got list",
        ),
        (
            # dumpd's stand-in for an object it cannot serialize is no message
            [
                {
                    "lc": 1,
                    "type": "not_implemented",
                    "id": ["x", "ChatOpenAI"],
                    "repr": "ChatOpenAI()",
                }
            ],
            "[0]: unknown message type 'not_implemented' (expected human, ai, system or tool)",
        ),
    ],
    ids=["object", "string", "messages-not-list", "type-number", "type-list", "not-implemented"],
)
def test_langchain_refusal_names_what_and_where(document: Any, problem: str) -> None:
    assert error_langchain(document) == problem


def test_data_beside_a_flat_typed_message_is_an_unknown_field_note() -> None:
    got = imported_langchain([{"type": "human", "content": "hi", "data": "extra"}])
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert [(n.where, n.what, n.why, n.content, n.unknown) for n in got.notes] == [
        (
            "[0].data",
            "field 'data'",
            "langchain reads 'data' only as the fields of a typed message",
            "extra",
            True,
        )
    ]


def test_function_results_answer_the_open_call_of_their_name() -> None:
    got = imported_langchain(
        [
            legacy_call("f"),
            legacy_call("g"),
            {"type": "function", "name": "g", "content": "G"},
            {"type": "function", "name": "f", "content": "F"},
            {"type": "function", "name": "f", "content": "again"},
        ]
    )
    assert [(m["role"], m["content"], m.get("tool_call_id")) for m in got.messages] == [
        ("assistant", None, None),
        ("assistant", None, None),
        ("tool", "G", legacy_id(1)),
        ("tool", "F", legacy_id(0)),
        ("tool", "again", None),
    ]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("[4]", "function result without a call", "no earlier function_call is open", "f")
    ]


def test_function_result_without_a_name_answers_the_oldest_open_call() -> None:
    got = imported_langchain(
        [legacy_call("f"), legacy_call("g"), {"type": "function", "name": 5, "content": "r"}]
    )
    assert got.messages[2] == {"role": "tool", "content": "r", "tool_call_id": legacy_id(0)}
    assert got.notes == []


def test_trace_generations_with_the_same_legacy_call_at_other_places_are_one_message() -> None:
    """A legacy call's made-up id differs between two readings of the same conversation
    (it is its place); a trace whose last generation holds it notes nothing."""
    call, result = legacy_call("f"), {"type": "function", "name": "f", "content": "r"}
    question = {"type": "human", "content": "q"}
    first = [question, call, result]
    last = [{"type": "system", "content": "s"}, question, call, result]
    got = imported_langchain(
        [
            {"id": "1", "type": "GENERATION", "startTime": "1", "input": first, "output": "done"},
            {"id": "2", "type": "GENERATION", "startTime": "2", "input": last, "output": "done"},
        ],
        "langfuse",
    )
    assert got.messages[2:4] == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": legacy_id(2),
                    "type": "function",
                    "function": {"name": "f", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "content": "r", "tool_call_id": legacy_id(2)},
    ]
    assert got.notes == []


def test_every_kind_of_reasoning_in_additional_kwargs_is_a_note_with_its_text() -> None:
    extra = {"reasoning": "", "reasoning_content": "step one", "thinking": {"summary": []}}
    got = imported_langchain([{"type": "ai", "content": "a", "additional_kwargs": extra}])
    assert got.messages == [{"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].additional_kwargs.reasoning_content", "reasoning", "step one"),
        ("[0].additional_kwargs.thinking", "reasoning", '{"summary": []}'),
    ]


def test_text_after_a_call_block_that_repeats_tool_calls_is_kept() -> None:
    blocks = [
        {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
        {"type": "text", "text": "after"},
    ]
    got = imported_langchain(
        [{"type": "ai", "content": blocks, "tool_calls": [{"id": "c1", "name": "f", "args": {}}]}]
    )
    assert got.messages == [
        {
            "role": "assistant",
            "content": "after",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        }
    ]
    assert got.notes == []


def test_a_left_out_thinking_block_leaves_no_empty_line_in_the_text() -> None:
    thinking = {"type": "thinking", "thinking": "hm"}
    got = imported_langchain([{"type": "ai", "content": [thinking, {"type": "text", "text": "a"}]}])
    assert got.messages == [{"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].content[0]", "thinking part", json.dumps(thinking))
    ]


# --------------------------------------------------------------------------- real recordings


def test_llm_result_generations_are_the_reply() -> None:
    """A LangChain LLMResult (generations of ChatGeneration), as LangSmith shows a model
    run's output, gave 0 steps; its constructor has "id": [] and the type in kwargs."""
    got = load("langchain_llm_result.json", "langchain")
    steps = [
        "Research LangGraph's node configuration capabilities",
        "Investigate how to add a Python code execution node",
        "Find an example or create a sample implementation of a code execution node",
    ]
    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "toolu_01XexPzAVknT3gRmUB5PK5BP",
                    "type": "function",
                    "function": {"name": "Plan", "arguments": json.dumps({"steps": steps})},
                }
            ],
        }
    ]
    assert got.origins == ["generations[0][0].message"]
    assert got.notes == []


def test_llm_result_other_generations_are_notes() -> None:
    document = {"generations": [[{"text": "a"}, {"text": "b"}], [{"text": "c"}]]}
    got = imported_langchain(document)
    assert got.messages == [{"role": "assistant", "content": "a"}]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("generations[0][1]", "another generation", "b"),
        ("generations[1][0]", "another generation", "c"),
    ]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([{"lc": 1, "type": "constructor", "id": ["langchain", "Widget"], "kwargs": {}}],
         "[0]: unknown LangChain class 'Widget'"),
        ([{"type": "human", "content": "x"}, 5], "[1]: expected a message object, got number"),
        ([{"type": "human", "content": ["a", 5]}],
         "[0].content[1]: expected a content part object, got number"),
        ({"generations": [{"text": "a"}]}, "generations: expected a list of lists of generations"),
        ({"generations": []}, "generations: expected a list of lists of generations"),
        ({"generations": [[{"text": "a"}], {"text": "b"}]},
         "generations[1]: expected a list, got object"),
        ({"generations": [["a"]]}, "generations[0][0]: expected a generation object, got string"),
        ({"generations": [[{"info": {}}]]},
         "generations[0][0]: a generation without 'message' or 'text'"),
    ],
)  # fmt: skip
def test_more_langchain_refusals_name_what_and_where(document: Any, problem: str) -> None:
    assert error_langchain(document) == problem


def test_a_call_without_an_id_is_not_open_for_a_function_result() -> None:
    """A call without an id is kept so (its id null), but a function result of its name
    answers the next open call with an id, and one more finds no call and is noted."""
    got = imported_langchain(
        [
            {"type": "ai", "content": "", "tool_calls": [
                {"name": "f", "args": {}}, {"id": "c2", "name": "f", "args": {}}]},
            {"type": "function", "name": "f", "content": "r"},
            {"type": "function", "name": "f", "content": "s"},
        ]
    )  # fmt: skip
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": None, "type": "function", "function": {"name": "f", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": "r", "tool_call_id": "c2"},
        {"role": "tool", "content": "s", "tool_call_id": None},
    ]  # fmt: skip
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("[2]", "function result without a call", "no earlier function_call is open", "f")
    ]


@pytest.mark.parametrize(
    ("document", "verdict"),
    [
        ({"generations": "x"}, "generations: expected a list of lists of generations"),
        ({"generations": [[]]}, "generations[0]: an empty list"),
        ({"generations": [["a"]]}, "generations[0][0]: a generation without 'message' or 'text'"),
        ({"generations": [[{"info": {}}]]},
         "generations[0][0]: a generation without 'message' or 'text'"),
        ({"generations": [[{"message": {"role": "user"}}]]},
         "generations[0][0].message: no LangChain 'type' and no 'role' with 'content'"),
        ([{"agent": {"messages": [{"role": "user", "content": "x"}]}},
          {"tools": {"messages": [{"role": "tool", "content": "y"}]}}],
         "no node update holds a LangChain-typed message"),
    ],
)  # fmt: skip
def test_what_the_signature_misses(document: Any, verdict: str) -> None:
    missed = langchain.claims(document)
    assert isinstance(missed, Miss)
    assert str(missed) == verdict


def test_the_signature_claims_a_text_generation_and_a_later_typed_node_update() -> None:
    assert langchain.claims({"generations": [[{"text": "a"}]]}) == Claim("an LLMResult")
    plain = {"messages": [{"role": "user", "content": "x"}]}
    typed = {"messages": [{"type": "ai", "content": "y"}]}
    assert langchain.claims([{"a": plain, "b": typed}]) == Claim("a list of node updates")
    assert langchain.claims([{"a": plain}, {"b": typed}]) == Claim("a list of node updates")


def test_a_list_of_dumpd_constructors_alone_is_claimed_as_langchain() -> None:
    """A list holding only ``dumpd`` constructor messages is LangChain-typed."""
    constructor = {"lc": 1, "type": "constructor", "id": ["langchain", "HumanMessage"],
                   "kwargs": {"content": "hi"}}  # fmt: skip
    assert langchain.claims([constructor]) == Claim("a list of messages")
    got = parse_conversation(json.dumps([constructor]))
    assert got.format == "langchain"
    assert got.messages == [{"role": "user", "content": "hi"}]
    assert got.origins == ["[0]"]


def test_a_message_with_no_type_role_or_constructor_is_located() -> None:
    assert error_langchain([{"content": "x"}]) == "[0]: missing 'type'"
