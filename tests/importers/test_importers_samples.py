"""Issue 13: each new format imports a real public example (sample_data/imports/SOURCES.md).

Every test asserts the exact messages: roles, texts, call ids, names and
arguments, paired with their results, plus the import notes for what was left
out. Long texts are compared with the text read straight from the sample file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flowdrop_core.importers import ImportedConversation, load_conversation

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data" / "imports"


def call(call_id: Any, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def load(name: str, fmt: str) -> ImportedConversation:
    """Import a sample, check it is detected as ``fmt`` and that forcing ``fmt`` agrees."""
    got = load_conversation(SAMPLES / name)
    assert got.format == fmt
    assert load_conversation(SAMPLES / name, format=fmt).messages == got.messages
    assert len(got.messages) == len(got.origins)
    return got


def raw(name: str) -> Any:
    return json.loads((SAMPLES / name).read_text(encoding="utf-8"))


def notes(got: ImportedConversation) -> list[tuple[str, str]]:
    return [(n.where, n.what) for n in got.notes]


def test_every_sample_is_cited() -> None:
    sources = (SAMPLES / "SOURCES.md").read_text(encoding="utf-8")
    own = {"openai_chat.json", "openai_responses.json", "anthropic_messages.json",
           "langchain_messages.json", "conversation.jsonl", "SOURCES.md"}  # fmt: skip
    for path in SAMPLES.iterdir():
        if path.name not in own:
            assert f"`{path.name}`" in sources, f"{path.name} has no source in SOURCES.md"
            assert path.stat().st_size < 16_000, f"{path.name} is not small"


def test_openai_chat_completion_response_object() -> None:
    got = load("openai_chat_completion.json", "openai-chat")
    assert got.messages == [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("call_abc123", "get_current_weather", '{\n"location": "Boston, MA"\n}')
            ],
        }
    ]
    assert got.origins == ["choices[0]"]
    assert got.notes == []


def test_openai_chat_message_with_several_content_parts() -> None:
    got = load("openai_chat_image_input.json", "openai-chat")
    assert got.messages == [{"role": "user", "content": "What is in this image?\n[image_url]"}]
    assert got.origins == ["messages[0]"]


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


def test_anthropic_server_tool_blocks_and_a_client_call() -> None:
    got = load("anthropic_server_tools.json", "anthropic")
    result = (
        '[web_search_tool_result srvtoolu_01ABC123] {"content": [{"type": "web_search_result", '
        '"url": "https://example.com/elephants", "title": "African Elephant Facts", '
        '"page_age": "2024-01-15", "snippet": "Adult African elephants weigh between '
        '4,000-6,000 kg..."}]}'
    )
    assert got.messages == [
        {
            "role": "assistant",
            "content": "\n".join(
                [
                    '[server_tool_use web_search srvtoolu_01ABC123] {"query": "average weight '
                    'african elephant kg"}',
                    result,
                    "Based on my search, African elephants weigh around 5,000 kg.",
                ]
            ),
            "tool_calls": [call("toolu_01XYZ789", "add_numbers", '{"a": 5000, "b": 100}')],
        }
    ]
    assert got.origins == ["(top level)"]
    # The encrypted page content is opaque: left out of the marker, kept in a note.
    assert notes(got) == [("content[1]", "web_search_tool_result opaque fields")]
    assert got.notes[0].content == '["encrypted_data_here"]'


def test_otel_genai_attributes_with_provider_side_tool_parts() -> None:
    got = load("otel_genai_builtin_tools.json", "otel-genai")
    parts = raw("otel_genai_builtin_tools.json")["gen_ai.output.messages"][0]["parts"]
    server_call = json.dumps(parts[0]["server_tool_call"], ensure_ascii=False)
    server_result = json.dumps(parts[1]["server_tool_call_response"], ensure_ascii=False)
    assert got.messages == [
        {"role": "system", "content": "You are a helpful bot"},
        {
            "role": "user",
            "content": "Write Python code that generates a random number, executes it, and "
            "returns the result.",
        },
        {
            "role": "assistant",
            "content": f"[server_tool_call code_interpreter call_VSPygqKTWdrhaFErNvMV18Yl] "
            f"{server_call}\n[server_tool_call_response call_VSPygqKTWdrhaFErNvMV18Yl] "
            f"{server_result}\nThe generated random number is **89**, and the result of "
            "squaring it is **7921**",
        },
    ]
    assert got.origins == [
        "gen_ai.input.messages[0]",
        "gen_ai.input.messages[1]",
        "gen_ai.output.messages[0]",
    ]


def test_otel_otlp_trace_export_is_what_the_last_call_saw() -> None:
    got = load("otel_genai_otlp.json", "otel-genai")
    at = "resourceSpans[0].scopeSpans[0].spans[0].attributes"
    assert got.messages == [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call("call_VSPygqKTWdrhaFErNvMV18Yl", "get_weather", '{"location": "Paris"}')
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
    tool_call = call("call_Kud0j0DxWSmLzv9W5m6qVqXn", "get_weather", '{"city":"Tokyo"}')
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
        {"role": "assistant", "content": None, "tool_calls": [call("contents[1].parts[0]", "say_hello", "{}")]},
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
        {"role": "assistant", "content": None, "tool_calls": [call(call_id, "get_weather", '{"city":"San Francisco"}')]},
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
    ]
    assert got.notes[0].content == (
        '[{"toolCallId": "call_DgKARp7a7IhJPDczfifMp6Ra", "toolName": "getWeather", '
        '"input": "{\\"location\\":\\"San Francisco\\"}"}]'
    )


def test_langchain_dumpd_constructor_json() -> None:
    got = load("langchain_dumpd.json", "langchain")
    assert got.messages == [
        {
            "role": "assistant",
            "content": "blah",
            "tool_calls": [call("baz", "foo", '{"bar": 1}'), call("booz", "foobad", "blah")],
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
                call("call_lxFuvuhpu9gvtx04WrmXZF9h", "get_weather", '{"city": "Tokyo", "units": "celsius"}'),
                call("call_U3RijXRN09TXMyKWFZwqWjnJ", "get_datetime", '{"timezone": "Asia/Tokyo", "format": "full"}'),
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
    assert notes(got) == [("[3].messages[1].kwargs.additional_kwargs.reasoning", "reasoning")]
    summary = final[1]["kwargs"]["additional_kwargs"]["reasoning"]["summary"][0]["text"]
    assert got.notes[0].content == summary


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
                call("contents[1].parts[0]", "find_theaters", '{"location": "Mountain View, CA", "movie": "Barbie"}')
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


def test_bedrock_converse_text_tool_use_and_result() -> None:
    got = load("bedrock_converse.json", "bedrock")
    assert got.messages == [
        {"role": "user", "content": "What are the coordinates for both Paris and in Berlin??"},
        {
            "role": "assistant",
            "content": "Here are the coordinates for Paris and Berlin obtained using the "
            "`get_lat_long` tool:",
            "tool_calls": [call("tooluse_77EBAFMeS92g3zHisyE2UA", "get_lat_long", '{"place": "Paris"}')],
        },
        {
            "role": "tool",
            "content": '{"latitude": "48.8534951", "longitude": "2.3483915"}',
            "tool_call_id": "tooluse_77EBAFMeS92g3zHisyE2UA",
        },
    ]  # fmt: skip
    assert got.origins == ["messages[0]", "messages[1]", "messages[2].content[0]"]


def test_sharegpt_function_call_and_observation_pairs() -> None:
    got = load("sharegpt_glaive.json", "sharegpt")
    turns = raw("sharegpt_glaive.json")[0]["conversations"]
    at = [f"[0].conversations[{k}]" for k in range(8)]
    assert got.messages == [
        {"role": "user", "content": turns[0]["value"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(at[1], "calculate_area", '{"shape": "rectangle", "dimensions": [5, 3]}')],
        },
        {"role": "tool", "content": '{"area": 15}', "tool_call_id": at[1]},
        {"role": "assistant", "content": turns[3]["value"]},
        {"role": "user", "content": turns[4]["value"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call(at[5], "calculate_area", '{"shape": "circle", "dimensions": [4]}')],
        },
        {"role": "tool", "content": '{"area": 50.24}', "tool_call_id": at[5]},
        {"role": "assistant", "content": turns[7]["value"]},
    ]  # fmt: skip
    assert got.origins == at
    assert got.notes == []


def test_claude_code_session_jsonl() -> None:
    got = load("claude_code_session.jsonl", "claude-code")
    lines = [
        json.loads(line)
        for line in (SAMPLES / "claude_code_session.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    edit = lines[3]["message"]["content"][0]
    assert got.messages == [
        {"role": "user", "content": lines[0]["message"]["content"][0]["text"]},
        {"role": "assistant", "content": lines[1]["message"]["content"][0]["text"]},
        {"role": "user", "content": lines[2]["message"]["content"][0]["text"]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("tool_001", "Edit", json.dumps(edit["input"], ensure_ascii=False))],
        },
        {
            "role": "tool",
            "content": "File created successfully at: /tmp/decorator_example.py",
            "tool_call_id": "tool_001",
        },
        {"role": "assistant", "content": lines[5]["message"]["content"][0]["text"]},
    ]
    assert got.origins == [
        "line 1: message",
        "line 2: message",
        "line 3: message",
        "line 4: message",
        "line 5: message.content[0]",
        "line 6: message",
    ]
    assert notes(got) == [("line 7", "summary event")]
    assert got.notes[0].content == lines[6]["summary"]
