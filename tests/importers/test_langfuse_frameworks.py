"""Langfuse traces of agent frameworks, as Langfuse's own test fixtures hold them.

The files are in ``sample_data/fresh/`` (sources in its ``SOURCES.md``: langfuse/langfuse
``worker/src/__tests__/chatml/framework-traces/``, commit ``62751446``). Each test is a
shape the ``langfuse`` reader did not take, so some text of the trace ended in neither
the messages nor a note.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from flowdrop_core.importers import ImportedConversation, load_conversation, parse_conversation

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def fresh(name: str) -> ImportedConversation:
    """A fresh-corpus file, detected as a Langfuse trace (forcing the format agrees)."""
    got = load_conversation(FRESH / name)
    assert got.format == "langfuse"
    assert load_conversation(FRESH / name, format="langfuse").messages == got.messages
    assert len(got.messages) == len(got.origins)
    return got


def trace_of(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FRESH / name).read_text(encoding="utf-8"))
    return document


def test_microsoft_agent_framework_run_is_its_invoke_agent_span() -> None:
    """Each model call records only its new messages; the system instructions are only on
    the ``invoke_agent`` span (AGENT observation), which holds the whole run: it was lost."""
    got = fresh("langfuse_microsoft_agent_2025_12_17.json")
    call_id = "call_CwaJHuXTm9dmHFQPlVbqyzJ0"
    result = {
        "type": "function_result",
        "call_id": call_id,
        "result": "The weather in Tokyo, Japan is stormy with a high of 23°C.",
    }
    assert got.messages == [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What's the weather in Tokyo?"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "get_weather", "arguments": '{"location":"Tokyo, Japan"}'}}
        ]},
        {"role": "tool", "content": json.dumps(result), "tool_call_id": call_id},
        {"role": "assistant", "content": "Current conditions in Tokyo, Japan: stormy, high around 23°C."},
    ]  # fmt: skip
    assert got.origins[0] == "observations[0].input[0]"
    assert got.origins[-1] == "observations[0].output[2]"
    assert got.notes == []  # the TOOL observation's result is the one the view holds


def test_beeai_final_answer_recorded_only_on_the_trace_is_the_last_message() -> None:
    """BeeAI records each model call's input, never its output; the final answer is on the
    trace as a Python repr of its AssistantMessage. It was in neither messages nor notes."""
    got = fresh("langfuse_beeai_2025_08_01.json")
    answer = ast.literal_eval(
        json.loads(trace_of("langfuse_beeai_2025_08_01.json")["trace"]["output"])
    )
    assert answer["role"] == "assistant"
    assert [m["role"] for m in got.messages] == [
        "system",
        "user",
        "assistant",
        "assistant",
        "assistant",
    ]
    assert got.messages[-1] == {"role": "assistant", "content": answer["text"]}
    assert got.messages[-1]["content"].startswith("Barcelona is a vibrant city")
    assert got.origins[-1] == "trace.output"
    assert got.notes == []


def test_a_repr_that_is_not_a_plain_literal_is_never_evaluated() -> None:
    """Only literals are read from a trace's repr: an expression stays text (a note)."""
    trace = {
        "trace": {"id": "t", "output": "{'role': 'assistant', 'text': __import__('os').getcwd()}"},
        "observations": [
            {"id": "g", "type": "GENERATION", "startTime": "1",
             "input": [{"role": "user", "content": "hello there"}], "output": None},
        ],
    }  # fmt: skip
    got = parse_conversation(json.dumps(trace))
    assert got.messages == [{"role": "user", "content": "hello there"}]
    assert [(n.where, n.what) for n in got.notes] == [("trace.output", "the trace output")]


def test_langgraph_tool_definitions_are_not_tool_messages_and_a_routing_step_is_a_note() -> None:
    """Langfuse's LangChain handler lists the tools given to the model as ``role: tool``
    messages holding a function definition: that became a tool result answering no call.
    The ``should_continue`` step's output ("continue") was in neither messages nor notes."""
    got = fresh("langfuse_langgraph_python_2025_08_22.json")
    call_id = "call_1oGK863sxQHlPreFhDdEs3yl"
    assert got.messages[:4] == [
        {"role": "user", "content": "Be helpful!"},
        {"role": "user", "content": "Search the web for 'example' and summarize."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "Web-Search", "arguments": '{"query":"example"}'}}
        ]},
        {"role": "tool", "content": '[{"url": "https://example.com", "title": "Example Result", '
                                    '"q": "example"}]', "tool_call_id": call_id},
    ]  # fmt: skip
    assert got.messages[4]["role"] == "assistant"
    assert got.messages[4]["content"].startswith('The search for "example" primarily leads')
    assert len(got.messages) == 5
    assert all(m.get("tool_call_id") for m in got.messages if m["role"] == "tool")
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("observations[8].output", "SPAN 'should_continue' output", "continue")
    ]


def test_crewai_task_summary_only_on_a_span_is_a_located_note() -> None:
    """CrewAI's crew output holds each task's ``summary`` (a cut description, "...")
    that no model message holds: it was dropped silently."""
    got = fresh("langfuse_crewai_2025_07_11.json")
    assert [m["role"] for m in got.messages] == ["system", "user", "assistant"]
    [note] = got.notes
    assert (note.where, note.what) == ("observations[1].output", "SPAN 'Crew.kickoff' output")
    assert "Define the HTML for making a simple website with heading-..." in note.content


def test_llamaindex_completion_prompt_only_on_the_trace_is_the_user_message() -> None:
    """A LlamaIndex ``complete`` call records its arguments (``{"args": [...]}``), not a
    message; the trace holds the prompt and the answer, so the trace is the conversation
    and the argument list stays a note."""
    got = fresh("langfuse_llamaindex_2025_06_05.json")
    assert got.messages[0] == {"role": "user", "content": "What is Langfuse?"}
    assert got.messages[1]["role"] == "assistant"
    assert got.messages[1]["content"].startswith("Langfuse is a tool designed to help developers")
    assert got.origins == ["trace.input", "trace.output"]
    assert [(n.where, n.what) for n in got.notes] == [
        ("observations[1].input", "generation input in no known format")
    ]


def test_google_genai_contents_given_as_text_is_the_user_turn() -> None:
    """The Gemini SDK trace records ``generate_content(model=..., contents="What is
    Langfuse?")`` as its input: contents as a string, which google-genai makes one user
    turn. No format read it, so the question was only a note."""
    got = fresh("langfuse_google_gemini_2025_08_01.json")
    assert got.messages[0] == {"role": "user", "content": "What is Langfuse?"}
    assert got.messages[1]["role"] == "assistant"
    assert got.messages[1]["content"].startswith("**Langfuse** is an **open-source")
    assert got.origins == [
        "observations[0].input.contents",
        "observations[0].output.candidates[0].content",
    ]
    assert got.notes == []


def test_a_gemini_request_with_text_contents_alone_is_read_as_gemini() -> None:
    got = parse_conversation(json.dumps({"model": "gemini-2.5-flash", "contents": "Hi there"}))
    assert got.format == "gemini"
    assert got.messages == [{"role": "user", "content": "Hi there"}]
    assert got.origins == ["contents"]


def test_koog_calls_written_as_content_are_calls_and_its_results_answer_them() -> None:
    """Koog (JetBrains) writes a message's tool calls as JSON text in its ``content``
    (``role: tool`` in the next call's input) and its results without ``tool_call_id``:
    they were four tool messages answering nothing, and the first call's reply two notes."""
    got = fresh("langfuse_koog_2025_08_26.json")
    hello, bye = "call_n2HaWg9KFP0BZDqXv6G4b3nJ", "call_dOeEHJDI0liHrCdFWTpkTsuO"

    def asks(call_id: str, name: str) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": name, "arguments": '{"name": "Bob"}'}}
        ]}  # fmt: skip

    assert got.messages[2:] == [
        asks(hello, "HelloTool"),
        {"role": "tool", "content": "Hello my darling Bob!", "tool_call_id": hello},
        asks(bye, "ByeTool"),
        {"role": "tool", "content": "Bye my dear Bob!", "tool_call_id": bye},
        {"role": "assistant", "content": "Hello my darling Bob! And, bye my dear Bob!"},
    ]
    assert [m["role"] for m in got.messages[:2]] == ["system", "user"]
    assert got.notes == []


def test_a_step_value_nested_past_the_walk_is_one_note_not_a_crash() -> None:
    """Literals inside strings inside literals add up past any stack; the walk stops at
    its depth and compares the rest as one text, so the trace still imports."""
    inner = "{'text': " * 150 + "'deep words here'" + "}" * 150
    nested = "{'output': " * 150 + repr(inner) + "}" * 150
    trace = {
        "id": "t",
        "output": nested,
        "observations": [
            {"id": "g", "type": "GENERATION", "startTime": "1",
             "input": [{"role": "user", "content": "hello there"}], "output": "hi back"},
        ],
    }  # fmt: skip
    got = parse_conversation(json.dumps(trace))
    assert [m["content"] for m in got.messages] == ["hello there", "hi back"]
    assert [(n.where, n.what, n.content) for n in got.notes] == [
        ("output", "the trace output", nested)
    ]
