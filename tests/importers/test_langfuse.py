"""The langfuse importer: what it claims, the messages and notes it reads, its located errors."""

from __future__ import annotations

import json
import sys
import threading
from typing import Any

import pytest
from import_helpers import (
    QUESTION,
    call_sample,
    encoded,
    error_edge,
    generation,
    imported_edge,
    imported_fmt,
    imported_langfuse,
    load,
    notes_edge,
    raw,
    rows_edge,
)

from flowdrop_core.importers import (
    ConversationFormatError,
    parse_conversation,
)
from flowdrop_core.importers import (
    _langfuse as langfuse,
)
from flowdrop_core.importers._claims import Miss


def test_langfuse_trace_holding_its_own_observations() -> None:
    got = imported_edge(
        {
            "trace": {
                "id": "t",
                "observations": [
                    generation(input=[{"role": "user", "content": "hi"}], output=""),
                ],
            }
        },
        "langfuse",
    )
    assert rows_edge(got) == [("user", "hi", None, None)]  # an empty output adds no message
    assert notes_edge(got) == []


def test_langfuse_trace_observations_not_a_list_is_a_located_error() -> None:
    assert error_edge({"trace": {"id": "t", "observations": "nope"}}, "langfuse") == (
        "<text> is not valid langfuse: trace.observations: expected a list of observations"
    )


def test_langfuse_generations_without_messages_fall_back_to_the_trace_output() -> None:
    got = imported_edge(
        {
            "trace": {
                "id": "t",
                "output": {
                    "messages": [
                        {"role": "user", "content": "q"},
                        {"role": "assistant", "content": "a"},
                    ]
                },
            },
            "observations": [generation(), {"id": "s", "type": "SPAN"}],
        },
        "langfuse",
    )
    assert rows_edge(got) == [("user", "q", None, None), ("assistant", "a", None, None)]


def test_langfuse_trace_output_no_format_reads_falls_back_to_its_input() -> None:
    got = imported_edge(
        {
            "trace": {"id": "t", "output": 5, "input": [{"role": "user", "content": "only in"}]},
            "observations": [generation()],
        },
        "langfuse",
    )
    assert rows_edge(got) == [("user", "only in", None, None)]


def test_langfuse_nothing_readable_anywhere_is_an_error() -> None:
    document = {"trace": {"id": "t", "output": {"weird": 1}}, "observations": [generation()]}
    assert error_edge(document, "langfuse") == (
        "<text> is not valid langfuse: observations: "
        "no GENERATION observation with input or output messages"
    )


def test_langfuse_text_that_only_looks_like_json_stays_text() -> None:
    got = imported_edge([generation(input="{not json", output="answer")], "langfuse")
    assert rows_edge(got) == [
        ("user", "{not json", None, None),
        ("assistant", "answer", None, None),
    ]


def test_langfuse_output_no_format_reads_is_a_note_not_a_failure() -> None:
    got = imported_edge([generation(input="q", output={"choices": 1})], "langfuse")
    assert rows_edge(got) == [("user", "q", None, None)]
    assert [(where, what) for where, what, _ in notes_edge(got)] == [
        ("[0].output", "generation output in no known format")
    ]


def test_langfuse_gemini_candidate_output_is_unwrapped() -> None:
    output = {"content": {"role": "model", "parts": [{"text": "gem"}]}}
    got = imported_edge([generation(input="hello", output=output)], "langfuse")
    assert rows_edge(got) == [("user", "hello", None, None), ("assistant", "gem", None, None)]


def test_sharegpt_observation_with_no_open_call_is_kept_with_a_note() -> None:
    got = imported_edge(
        {"conversations": [{"from": "human", "value": "q"}, {"from": "observation", "value": "r"}]},
        "sharegpt",
    )
    assert rows_edge(got) == [("user", "q", None, None), ("tool", "r", None, None)]
    assert notes_edge(got) == [
        (
            "conversations[1]",
            "observation without a call",
            "no earlier function_call is open; imported with no tool_call_id",
        )
    ]


def test_sharegpt_call_in_a_langfuse_trace_matches_across_generations_despite_made_up_ids() -> None:
    """The source has no call ids, so each generation makes up its own from origins;
    the same call seen by an earlier generation is not reported as lost."""
    human = {"from": "human", "value": "area?"}
    asked = {"from": "function_call", "value": json.dumps({"name": "area", "arguments": {"r": 2}})}
    answer = {"from": "observation", "value": "12.6"}
    first = generation(
        name="plan",
        startTime="1",
        input={"conversations": [human]},
        output={"conversations": [asked]},
    )
    last = generation(name="answer", startTime="2", input={"conversations": [human, asked, answer]})
    got = imported_edge([first, last], "langfuse")
    made_up = "conversations[1]"
    assert rows_edge(got) == [
        ("user", "area?", None, None),
        (
            "assistant",
            None,
            [
                {
                    "id": made_up,
                    "type": "function",
                    "function": {"name": "area", "arguments": '{"r": 2}'},
                }
            ],
            None,
        ),
        ("tool", "12.6", None, made_up),
    ]
    assert notes_edge(got) == []


def test_trace_export_notes_what_an_earlier_call_saw_but_the_last_did_not() -> None:
    """A trace whose last generation does not hold an earlier one's reply: that reply is a note."""
    trace = {
        "id": "t",
        "observations": [
            {"id": "g2", "type": "GENERATION", "startTime": "2024-01-01T00:00:02Z",
             "input": [{"role": "user", "content": "second"}], "output": "answer two"},
            {"id": "g1", "type": "GENERATION", "startTime": "2024-01-01T00:00:01Z",
             "input": [{"role": "user", "content": "first"}], "output": "answer one"},
        ],
    }  # fmt: skip
    got = imported_fmt(trace)
    assert got.format == "langfuse"
    assert got.messages == [
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "answer two"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("observations[1].input[0]", "message of generation 'observations[1]'", '{"role": "user", "content": "first"}'),
        ("observations[1].output", "message of generation 'observations[1]'", '{"role": "assistant", "content": "answer one"}'),
    ]  # fmt: skip


def test_trace_nested_past_the_stack_keeps_the_unread_part_in_a_note_never_a_half_read() -> None:
    """Traces nest traces (a generation's input may be a trace); a caller with little
    stack left (here a thread with a low recursion limit) must get the part no
    reader could finish as a note, not a reader's half-done output taken as read."""
    value: Any = [{"role": "user", "content": "hi"}]
    for level in range(45):  # 90 JSON levels: the parser needs ~100 frames, the readers ~180
        value = [generation(id=f"g{level}", input=value)]
    text = json.dumps(value)
    got: list[Any] = []

    def run() -> None:
        try:
            parse_conversation(text)
        except ConversationFormatError as exc:
            got.append(exc)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(140)
    try:
        worker = threading.Thread(target=run)
        worker.start()
        worker.join()
    finally:
        sys.setrecursionlimit(old)
    (error,) = got
    assert error.problems["langfuse"] == (
        "no message: all 1 items read are notes "
        "(the first: [0].input: generation input in no known format)"
    )


def test_otel_otlp_trace_export_is_what_the_last_call_saw() -> None:
    got = load("otel_genai_otlp.json", "otel-genai")
    at = "resourceSpans[0].scopeSpans[0].spans[0].attributes"
    assert got.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call_sample("call_VSPygqKTWdrhaFErNvMV18Yl", "get_weather", '{"location": "Paris"}')
            ],
        },
        {"role": "tool", "content": "rainy, 57°F", "tool_call_id": "call_VSPygqKTWdrhaFErNvMV18Yl"},
        {
            "role": "assistant",
            "content": "The weather in Paris is currently rainy with a temperature of 57°F.",
        },
    ]
    assert got.origins == [
        f"{at}['gen_ai.input.messages'][0]",
        f"{at}['gen_ai.input.messages'][1]",
        f"{at}['gen_ai.input.messages'][2].parts[0]",
        f"{at}['gen_ai.output.messages'][0]",
    ]
    # The first call's input and output are both held by the last call: nothing left out.
    assert got.notes == []


def test_langfuse_trace_export_is_the_last_generation() -> None:
    """A real Langfuse export: observations keep input/output as JSON text; the last
    generation's input (Responses items) and output (a response object) are the chat."""
    got = load("langfuse_openai_agents_trace.json", "langfuse")
    tool_call = call_sample("call_Kud0j0DxWSmLzv9W5m6qVqXn", "get_weather", '{"city":"Tokyo"}')
    assert got.messages == [
        {"role": "system", "content": "You are a helpful agent."},
        {"role": "user", "content": "What's the weather in Tokyo?"},
        {"role": "assistant", "content": None, "tool_calls": [tool_call]},
        {
            "role": "tool",
            "content": "The weather in Tokyo is sunny.",
            "tool_call_id": "call_Kud0j0DxWSmLzv9W5m6qVqXn",
        },
        {
            "role": "assistant",
            "content": "The weather in Tokyo is currently sunny. If you need more details like "
            "temperature or forecast for the upcoming days, just let me know!",
        },
    ]
    assert got.origins == [
        "observations[2].output.instructions",
        "observations[2].input[0]",
        "observations[2].input[1]",
        "observations[2].input[2]",
        "observations[2].output.output[0]",
    ]
    # The first generation's call is held by the last one's input: nothing left out.
    assert got.notes == []


def test_langfuse_trace_of_google_adk_reads_the_gemini_request() -> None:
    """The last generation's input is an ADK request (config.system_instruction, contents);
    the earlier generation's call, with no id in either, is the same call: no note."""
    got = load("langfuse_google_adk_trace.json", "langfuse")
    at = "observations[0].input"
    assert got.messages == [
        {
            "role": "system",
            "content": 'Always greet using the say_hello tool.\n\nYou are an agent. Your internal '
            'name is "hello_agent".',
        },
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call_sample("contents[1].parts[0]", "say_hello", "{}")]},
        {"role": "tool", "content": '{"greeting": "Hello Langfuse 👋"}', "tool_call_id": "contents[1].parts[0]"},
        {"role": "assistant", "content": "Hello Langfuse 👋!\n"},
    ]  # fmt: skip
    assert got.origins == [
        f"{at}.config.system_instruction",
        f"{at}.contents[0]",
        f"{at}.contents[1]",
        f"{at}.contents[2].parts[0]",
        "observations[0].output[0]",
    ]
    assert got.notes == []


def test_langfuse_trace_of_langgraph_js_pairs_a_tool_result_named_by_its_tool() -> None:
    """LangChain-JS tool results as Langfuse's JS handler writes them: role = tool name."""
    got = load("langfuse_langgraph_js_trace.json", "langfuse")
    call_id = "call_VEZJgIQLgzcb80IIyQJm7JCi"
    assert got.messages == [
        {"role": "user", "content": "What's the weather in San Francisco?"},
        {"role": "assistant", "content": None, "tool_calls": [call_sample(call_id, "get_weather", '{"city":"San Francisco"}')]},
        {"role": "tool", "content": "It's always sunny in San Francisco!", "tool_call_id": call_id},
        {
            "role": "assistant",
            "content": "It's always sunny in San Francisco! \n\nWould you like more details "
            "(current temperature, hourly forecast, or a multi-day outlook)?",
        },
    ]  # fmt: skip
    assert got.origins == [
        "observations[0].input[0]",
        "observations[0].input[1]",
        "observations[0].input[2]",
        "observations[0].output[0]",
    ]
    # The first generation's reply ("" there, null here) is the same message: no note.
    assert got.notes == []


def test_langfuse_trace_with_shapes_no_format_reads_keeps_them_as_notes() -> None:
    got = load("langfuse_vercel_aisdk_trace.json", "langfuse")
    assert got.messages == [
        {"role": "user", "content": "What is the weather like today in San Francisco?"}
    ]
    assert [(n.where, n.what, n.unknown) for n in got.notes] == [
        ("observations[1].output", "generation output in no known format", True),
        ("observations[0].input", "generation input in no known format", True),
        # the tool's result answers a call no reader could read: kept as a note, not dropped
        ("observations[2].output", "TOOL observation without a call", False),
    ]
    assert got.notes[0].content == (
        '[{"toolCallId": "call_DgKARp7a7IhJPDczfifMp6Ra", "toolName": "getWeather", '
        '"input": "{\\"location\\":\\"San Francisco\\"}"}]'
    )


def test_sharegpt_function_call_and_observation_pairs() -> None:
    got = load("sharegpt_glaive.json", "sharegpt")
    turns = raw("sharegpt_glaive.json")[0]["conversations"]
    at = [f"[0].conversations[{k}]" for k in range(8)]
    assert got.messages == [
        {"role": "user", "content": turns[0]["value"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_sample(at[1], "calculate_area", '{"shape": "rectangle", "dimensions": [5, 3]}')],
        },
        {"role": "tool", "content": '{"area": 15}', "tool_call_id": at[1]},
        {"role": "assistant", "content": turns[3]["value"]},
        {"role": "user", "content": turns[4]["value"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call_sample(at[5], "calculate_area", '{"shape": "circle", "dimensions": [4]}')],
        },
        {"role": "tool", "content": '{"area": 50.24}', "tool_call_id": at[5]},
        {"role": "assistant", "content": turns[7]["value"]},
    ]  # fmt: skip
    assert got.origins == at
    assert got.notes == []


def test_input_kept_as_json_text_three_times_is_read_and_a_fourth_level_stays_text() -> None:
    """Exports keep input/output as JSON text, sometimes nested: up to three levels are read."""
    messages = [{"role": "user", "content": "hi"}]
    three = imported_langfuse([generation(input=encoded(messages, 3), output="yo")])
    assert three.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    four = imported_langfuse([generation(input=encoded(messages, 4), output="yo")])
    assert four.messages == [
        {"role": "user", "content": encoded(messages, 1)},
        {"role": "assistant", "content": "yo"},
    ]


def test_observations_page_is_read_with_origins_under_data() -> None:
    got = imported_langfuse(
        {"data": [generation(input=[{"role": "user", "content": "hi"}], output="yo")]}
    )
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert got.origins == ["data[0].input[0]", "data[0].output"]


def test_generation_with_only_an_output_still_gives_the_reply() -> None:
    cases: tuple[dict[str, Any], ...] = ({}, {"input": None}, {"input": []}, {"input": {}})
    for missing in cases:
        got = imported_langfuse([generation(**missing, output="only out")])
        assert got.messages == [{"role": "assistant", "content": "only out"}]
        assert got.origins == ["[0].output"]


def test_earlier_generation_is_named_in_the_notes_of_what_it_alone_held() -> None:
    got = imported_langfuse(
        [
            generation(name="first", startTime="2024-01-01T00:00:01Z", input="a", output="b"),
            generation(name="second", startTime="2024-01-01T00:00:02Z", input="c", output="d"),
        ]
    )
    assert got.messages == [
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": "d"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].input", "message of generation 'first'", '{"role": "user", "content": "a"}'),
        ("[0].output", "message of generation 'first'", '{"role": "assistant", "content": "b"}'),
    ]


def test_trace_fallback_origins_say_whether_the_trace_is_the_document_or_inside_it() -> None:
    own = imported_langfuse({"id": "t", "output": QUESTION, "observations": [generation()]})
    assert own.messages == [{"role": "user", "content": "q"}]
    assert own.origins == ["output.messages[0]"]
    export = imported_langfuse(
        {"trace": {"id": "t", "output": QUESTION}, "observations": [generation()]}
    )
    assert export.messages == [{"role": "user", "content": "q"}]
    assert export.origins == ["trace.output.messages[0]"]


def test_trace_output_object_no_format_reads_falls_back_to_the_trace_input() -> None:
    got = imported_langfuse(
        {
            "trace": {"id": "t", "output": {"weird": 1}, "input": QUESTION},
            "observations": [generation()],
        }
    )
    assert got.messages == [{"role": "user", "content": "q"}]
    assert got.origins == ["trace.input.messages[0]"]
    assert got.notes == []


def test_trace_fallback_is_only_for_a_trace_whose_generations_hold_nothing() -> None:
    got = imported_langfuse(
        {
            "id": "t",
            "output": {"messages": [{"role": "user", "content": "framework state"}]},
            "observations": [generation(input="asked", output="answered")],
        }
    )
    assert got.messages == [
        {"role": "user", "content": "asked"},
        {"role": "assistant", "content": "answered"},
    ]
    # the trace's own output is not read as the conversation, but its text is not dropped
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        (
            "output",
            "the trace output",
            '{"messages": [{"role": "user", "content": "framework state"}]}',
        )
    ]


def test_a_list_or_page_whose_generations_hold_nothing_is_a_clear_error() -> None:
    empty = generation()
    for document, where in (([empty], ""), ({"data": [empty]}, "data: ")):
        with pytest.raises(ConversationFormatError) as info:
            imported_langfuse(document)
        assert str(info.value) == (
            f"<text> is not valid langfuse: {where}"
            "no GENERATION observation with input or output messages"
        )


def test_a_trace_with_no_generation_at_all_says_so() -> None:
    """Spans and events are the application's steps: with no GENERATION there is no chat."""
    document = {"id": "t", "output": QUESTION, "observations": [{"id": "s", "type": "SPAN"}]}
    with pytest.raises(ConversationFormatError) as info:
        imported_langfuse(document)
    assert str(info.value) == (
        "<text> is not valid langfuse: observations: no GENERATION observation"
    )


def test_input_no_format_reads_is_a_note_and_the_output_is_still_read() -> None:
    got = imported_langfuse([generation(input={"weird": 1}, output="answer")])
    assert got.messages == [{"role": "assistant", "content": "answer"}]
    assert [(n.where, n.what, n.content, n.unknown) for n in got.notes] == [
        ("[0].input", "generation input in no known format", '{"weird": 1}', True)
    ]


def test_output_that_is_one_response_choice_is_its_message() -> None:
    choice = {"index": 0, "message": {"role": "assistant", "content": "a"}, "finish_reason": "stop"}
    got = imported_langfuse([generation(input=[{"role": "user", "content": "q"}], output=choice)])
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "a"},
    ]
    assert got.notes == []


def test_notes_of_the_reader_inside_a_generation_are_kept_with_their_place() -> None:
    part = {"type": "widget", "text": "w"}
    got = imported_langfuse([generation(input=[{"role": "user", "content": [part]}], output="a")])
    assert got.messages == [
        {"role": "user", "content": "w"},
        {"role": "assistant", "content": "a"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("[0].input[0].content[0]", "unknown content part type 'widget'", json.dumps(part))
    ]


# --------------------------------------------------------------------------- real recordings


def test_claude_agent_sdk_trace_keeps_the_tool_results_of_its_tool_observations() -> None:
    """Claude Agent SDK traces record each turn's own input only and the tool runs as TOOL
    observations: both results were lost, with no note."""
    got = load("langfuse_claude_agent_sdk_trace.json", "langfuse")
    berlin, new_york = "toolu_01TKoqQLvY2UWuC49qnD48y7", "toolu_01NtVat4vJLFfVd5TqdLHcA7"

    def asks(call_id: str, city: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "mcp__weather__get_weather", "arguments": json.dumps({"city": city})}}
        ]}  # fmt: skip

    assert got.messages[:6] == [
        {"role": "user", "content": "What's the weather like in Berlin and New York?"},
        {"role": "assistant", "content": "I'll check the weather in both Berlin and New York for you."},
        asks(berlin, "Berlin"),
        asks(new_york, "New York"),
        {"role": "tool", "content": "Weather in Berlin: Cloudy, 59°F", "tool_call_id": berlin},
        {"role": "tool", "content": "Weather in New York: Sunny, 75°F", "tool_call_id": new_york},
    ]  # fmt: skip
    assert got.messages[6]["content"].startswith("Great! Here's the current weather")
    assert len(got.messages) == 7
    assert got.origins[4:6] == ["observations[6].output", "observations[4].output"]
    # the later turns' inputs ({"content": "role"}) are no messages: notes, not dropped
    assert [(n.where, n.what) for n in got.notes] == [
        (f"observations[{k}].input", "generation input in no known format") for k in (3, 1, 0)
    ]


def _weather_calls() -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "get_weather", "arguments": json.dumps({"city": "Oslo"})}},
        {"id": "c2", "type": "function",
         "function": {"name": "get_weather", "arguments": json.dumps({"city": "Bergen"})}}]}  # fmt: skip


def test_a_tool_observation_answering_a_call_the_history_leaves_open_is_its_result() -> None:
    """The last generation's history answers one call of two; the TOOL observation of the
    other is its result, placed after the results the history holds (it was dropped with
    no note). The observation of the answered call adds nothing."""
    user = {"role": "user", "content": "weather in Oslo and Bergen?"}
    rain = {"role": "tool", "tool_call_id": "c1", "content": "rain"}
    trace = {"id": "t", "observations": [
        {"id": "g1", "type": "GENERATION", "startTime": "2025-01-01T00:00:01Z",
         "input": [user], "output": _weather_calls()},
        {"id": "k1", "type": "TOOL", "name": "get_weather", "startTime": "2025-01-01T00:00:02Z",
         "input": {"city": "Oslo"}, "output": "rain"},
        {"id": "k2", "type": "TOOL", "name": "get_weather", "startTime": "2025-01-01T00:00:02Z",
         "input": {"city": "Bergen"}, "output": {"content": [{"type": "text", "text": "sun"}]}},
        {"id": "g2", "type": "GENERATION", "startTime": "2025-01-01T00:00:03Z",
         "input": [user, _weather_calls(), rain],
         "output": {"role": "assistant", "content": "Rain in Oslo, sun in Bergen."}},
    ]}  # fmt: skip
    got = imported_langfuse(trace)
    assert got.messages == [
        user,
        _weather_calls(),
        {"role": "tool", "content": "rain", "tool_call_id": "c1"},
        {"role": "tool", "content": "sun", "tool_call_id": "c2"},
        {"role": "assistant", "content": "Rain in Oslo, sun in Bergen."},
    ]
    assert got.origins == [
        "observations[3].input[0]",
        "observations[3].input[1]",
        "observations[3].input[2]",
        "observations[2].output",
        "observations[3].output[0]",
    ]
    assert got.notes == []


def test_turns_with_their_own_input_take_tool_results_in_time_order() -> None:
    """Generations that each record only their own turn (the last does not repeat the first
    one's user message): the turns and the TOOL results in start order, a system prompt both
    repeat once, a text result as it is, an object result as JSON, and a TOOL observation
    whose name is no call's a note."""
    system = {"role": "system", "content": "Be brief."}
    trace = {"id": "t", "observations": [
        {"id": "g1", "type": "GENERATION", "startTime": "t1",
         "input": [system, {"role": "user", "content": "weather?"}], "output": _weather_calls()},
        {"id": "k1", "type": "TOOL", "name": "get_weather", "startTime": "t2",
         "input": {"city": "Oslo"}, "output": "rain"},
        {"id": "k2", "type": "TOOL", "name": "get_weather", "startTime": "t2",
         "input": {"city": "Bergen"}, "output": {"temp": 3}},
        {"id": "k3", "type": "TOOL", "name": 7, "startTime": "t2", "input": {}, "output": {"x": 1}},
        {"id": "g2", "type": "GENERATION", "startTime": "t3",
         "input": [system, {"role": "user", "content": "thanks"}],
         "output": {"role": "assistant", "content": "Rain, and 3 degrees."}},
    ]}  # fmt: skip
    got = imported_langfuse(trace)
    assert got.messages == [
        system,
        {"role": "user", "content": "weather?"},
        _weather_calls(),
        {"role": "tool", "content": "rain", "tool_call_id": "c1"},
        {"role": "tool", "content": '{"temp": 3}', "tool_call_id": "c2"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "Rain, and 3 degrees."},
    ]
    assert got.origins == [
        "observations[0].input[0]",
        "observations[0].input[1]",
        "observations[0].output[0]",
        "observations[1].output",
        "observations[2].output",
        "observations[4].input[1]",
        "observations[4].output[0]",
    ]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("observations[3].output", "TOOL observation without a call",
         "no call of this tool in the conversation is left to answer", '{"x": 1}'),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("answer", "held"),
    [
        ("{'role': 'assistant', 'text': '  '}", []),  # a blank answer adds nothing
        ("{'role': 'assistant', 'text': 'hello there'}", [{"role": "assistant", "content": "hello there"}]),
    ],
)  # fmt: skip
def test_a_final_answer_on_the_trace_that_is_blank_or_held_adds_nothing(
    answer: str, held: list[dict[str, Any]]
) -> None:
    """BeeAI-style final answer (a Python repr on the trace): blank, or already the last
    message of the conversation, it adds no message and no note."""
    question = {"role": "user", "content": "question?"}
    got = imported_langfuse(
        {"id": "t", "output": answer,
         "observations": [{"id": "g", "type": "GENERATION", "input": [question, *held]}]}
    )  # fmt: skip
    assert got.messages == [question, *held]
    assert got.notes == []


def test_an_input_of_tool_definitions_only_is_no_message() -> None:
    definition = {"role": "tool", "content": {"type": "function", "function": {"name": "f"}}}
    got = imported_langfuse(
        [{"id": "g", "type": "GENERATION", "input": [definition], "output": "hi"}]
    )
    assert got.messages == [{"role": "assistant", "content": "hi"}]
    assert got.origins == ["[0].output"]
    assert got.notes == []


def test_a_result_without_an_id_and_no_open_call_stays_without_one() -> None:
    got = imported_langfuse(
        [{"id": "g", "type": "GENERATION", "output": "a",
          "input": [{"role": "user", "content": "q"}, {"role": "tool", "content": "r"}]}]
    )  # fmt: skip
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "tool", "content": "r"},
        {"role": "assistant", "content": "a"},
    ]


def test_observations_without_a_generation_are_missed() -> None:
    assert langfuse.claims([{"id": "s", "type": "SPAN"}]) == Miss(
        "", "no GENERATION observation", 1
    )


def test_one_generation_takes_its_tool_observations_as_the_results_of_its_calls() -> None:
    """One generation whose output calls two tools, and the TOOL observations that ran them:
    each result follows the calls in start order; an MCP error result is marked, and one
    whose blocks are not all text is kept as its JSON."""
    user = {"role": "user", "content": "weather?"}
    image = {"content": [{"type": "image", "data": "AAAA"}]}
    got = imported_langfuse(
        {"id": "t", "observations": [
            {"id": "g", "type": "GENERATION", "startTime": "t1", "input": [user],
             "output": _weather_calls()},
            {"id": "k1", "type": "TOOL", "name": "get_weather", "startTime": "t2",
             "input": {"city": "Oslo"},
             "output": {"content": [{"type": "text", "text": "no data"}], "isError": True}},
            {"id": "k2", "type": "TOOL", "name": "execute_tool get_weather", "startTime": "t3",
             "input": {"input": {"city": "Bergen"}}, "output": image},
        ]}
    )  # fmt: skip
    assert got.messages == [
        user,
        _weather_calls(),
        {"role": "tool", "content": "[error] no data", "tool_call_id": "c1"},
        {"role": "tool", "content": json.dumps(image), "tool_call_id": "c2"},
    ]
    assert got.origins == [
        "observations[0].input[0]",
        "observations[0].output[0]",
        "observations[1].output",
        "observations[2].output",
    ]
    assert got.notes == []


def test_a_trace_answer_is_not_taken_when_an_earlier_generation_read_an_output() -> None:
    """The last generation by start recorded nothing, but the call read before it has an
    output: the trace's answer is then no message of its own, only a note (it holds text
    the conversation lacks)."""
    got = imported_langfuse(
        {"id": "t", "output": "{'role': 'assistant', 'text': 'a different answer'}",
         "observations": [
             {"id": "g1", "type": "GENERATION", "startTime": "t1",
              "input": [{"role": "user", "content": "q"}], "output": "the answer"},
             {"id": "g2", "type": "GENERATION", "startTime": "t2"}]}
    )  # fmt: skip
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "the answer"},
    ]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("output", "the trace output", "{'role': 'assistant', 'text': 'a different answer'}")
    ]


def test_one_generation_with_tool_observations_still_ends_with_the_trace_answer() -> None:
    """A single generation (no output of its own) whose input holds the calls, the TOOL
    observations that answer them, and the final answer only the trace holds."""
    user = {"role": "user", "content": "weather?"}
    got = imported_langfuse(
        {"id": "t", "output": "{'role': 'assistant', 'text': 'Rain and sun.'}",
         "observations": [
             {"id": "g", "type": "GENERATION", "startTime": "t1", "input": [user, _weather_calls()]},
             {"id": "k1", "type": "TOOL", "name": "get_weather", "startTime": "t2",
              "input": {"city": "Oslo"}, "output": "rain"},
             {"id": "k2", "type": "TOOL", "name": "get_weather", "startTime": "t3",
              "input": {"city": "Bergen"}, "output": "sun"}]}
    )  # fmt: skip
    assert got.messages == [
        user,
        _weather_calls(),
        {"role": "tool", "content": "rain", "tool_call_id": "c1"},
        {"role": "tool", "content": "sun", "tool_call_id": "c2"},
        {"role": "assistant", "content": "Rain and sun."},
    ]
    assert got.origins[2:] == ["observations[1].output", "observations[2].output", "output"]
    assert got.notes == []


_HELD = "the held answer text is here"


def _nested(kind: str, levels: tuple[int, ...]) -> Any:
    """``levels`` nested objects (or lists), the innermost of each run JSON text of the next
    run (each run under the parser's depth limit), ending in the text ``_HELD``."""
    value: Any = {"text": _HELD} if kind == "object" else _HELD
    for k, n in enumerate(reversed(levels)):
        for _ in range(n):
            value = {"a": value} if kind == "object" else [value]
        if k < len(levels) - 1:
            value = json.dumps(value)
    return value


@pytest.mark.parametrize(
    ("kind", "levels", "noted"),
    [
        ("object", (90, 59), False),  # about 150 levels: every text is walked and found held
        ("list", (90, 59), False),
        ("list", (90, 90, 90), True),  # past 200 levels: the rest is one text, not held
        ("object", (90, 90, 90), True),
    ],
)
def test_a_step_output_is_walked_to_a_depth_of_200_then_compared_whole(
    kind: str, levels: tuple[int, ...], noted: bool
) -> None:
    """A SPAN's output whose only text the conversation holds adds no note, however it is
    nested, up to 200 levels (JSON text inside strings counts); deeper, the rest is compared
    as one text, which the conversation does not hold: a note with the whole output."""
    output = _nested(kind, levels)
    got = imported_langfuse(
        {"id": "t", "observations": [
            {"id": "g", "type": "GENERATION", "input": [{"role": "user", "content": "q"}],
             "output": _HELD},
            {"id": "s", "type": "SPAN", "name": "step", "output": output}]}
    )  # fmt: skip
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": _HELD},
    ]
    expected = [("observations[1].output", "SPAN 'step' output", json.dumps(output))]
    assert [(n.where, n.what, n.content) for n in got.notes] == (expected if noted else [])


def test_a_trace_holding_more_messages_but_not_the_generations_is_no_framework_view() -> None:
    """The trace's input has more messages than the generation, but not the generation's:
    the conversation stays the generation's, and the trace input is a note."""
    other = [{"role": "user", "content": text}
             for text in ("an unrelated request", "another one here", "and a third one")]  # fmt: skip
    got = imported_langfuse(
        {"id": "t", "input": other, "observations": [
            {"id": "g", "type": "GENERATION", "input": [{"role": "user", "content": "q"}],
             "output": "the answer"}]}
    )  # fmt: skip
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "the answer"},
    ]
    assert got.origins == ["observations[0].input[0]", "observations[0].output"]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("input", "the trace input", json.dumps(other))
    ]
