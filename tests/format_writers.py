"""Writers for the formats added with the fresh corpus, for the nothing-is-lost property.

Each takes the abstract recording of ``test_importers_properties`` (events
``("system", text)``, ``("user", [texts])``, ``("assistant", texts, calls,
extra, extra_text)``, ``("results", [(call_id, name, text)])``) and writes it
as that format's text. ``extra`` is ``"reasoning"`` (written as the format's
reasoning construct) or ``"unknown"`` (a part type the format does not have).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Event = tuple[Any, ...]


def _results_after(events: list[Event], k: int) -> dict[str, str]:
    following = events[k + 1] if k + 1 < len(events) else None
    if following is not None and following[0] == "results":
        return {cid: text for cid, _, text in following[1]}
    return {}


def pydantic_ai(events: list[Event]) -> str:
    messages: list[dict[str, Any]] = []
    for event in events:
        if event[0] == "system":
            messages.append(
                {"kind": "request", "parts": [{"part_kind": "system-prompt", "content": event[1]}]}
            )
        elif event[0] == "user":
            messages.append(
                {
                    "kind": "request",
                    "parts": [{"part_kind": "user-prompt", "content": list(event[1])}],
                }
            )
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            parts: list[dict[str, Any]] = []
            if extra == "reasoning":
                parts.append({"part_kind": "thinking", "content": extra_text})
            parts += [{"part_kind": "text", "content": t} for t in texts]
            if extra == "unknown":
                parts.append({"part_kind": "code", "content": extra_text})
            parts += [
                {"part_kind": "tool-call", "tool_name": n, "args": a, "tool_call_id": c}
                for c, n, a in calls
            ]
            messages.append({"kind": "response", "parts": parts})
        else:
            messages.append(
                {
                    "kind": "request",
                    "parts": [
                        {
                            "part_kind": "tool-return",
                            "tool_name": n,
                            "content": r,
                            "tool_call_id": c,
                        }
                        for c, n, r in event[1]
                    ],
                }
            )
    return json.dumps(messages)  # fmt: skip


def vercel_ui(events: list[Event]) -> str:
    messages: list[dict[str, Any]] = []
    for k, event in enumerate(events):
        if event[0] == "system":
            messages.append({"role": "system", "parts": [{"type": "text", "text": event[1]}]})
        elif event[0] == "user":
            messages.append(
                {
                    "id": f"u{k}",
                    "role": "user",
                    "parts": [{"type": "text", "text": t} for t in event[1]],
                }
            )
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            results = _results_after(events, k)
            parts: list[dict[str, Any]] = [{"type": "step-start"}]
            if extra == "reasoning":
                parts.append({"type": "reasoning", "text": extra_text})
            parts += [{"type": "text", "text": t} for t in texts]
            if extra == "unknown":
                parts.append({"type": "code", "text": extra_text})
            parts += [
                {
                    "type": f"tool-{n}",
                    "toolCallId": c,
                    "state": "output-available",
                    "input": a,
                    "output": results.get(c),
                }
                for c, n, a in calls
            ]
            messages.append({"id": f"a{k}", "role": "assistant", "parts": parts})
    return json.dumps(messages)  # fmt: skip


def openinference(events: list[Event]) -> str:
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM"}
    n = 0

    def put(key: str, value: Any) -> None:
        attributes[f"llm.input_messages.{n}.message.{key}"] = value

    for event in events:
        if event[0] == "system":
            put("role", "system")
            put("content", event[1])
        elif event[0] == "user":
            put("role", "user")
            for k, text in enumerate(event[1]):
                put(f"contents.{k}.message_content.type", "text")
                put(f"contents.{k}.message_content.text", text)
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            put("role", "assistant")
            contents = [("text", t) for t in texts]
            if extra:
                contents.append(("reasoning" if extra == "reasoning" else "code", extra_text))
            for k, (kind, text) in enumerate(contents):
                put(f"contents.{k}.message_content.type", kind)
                put(f"contents.{k}.message_content.text", text)
            for k, (cid, name, args) in enumerate(calls):
                put(f"tool_calls.{k}.tool_call.id", cid)
                put(f"tool_calls.{k}.tool_call.function.name", name)
                put(
                    f"tool_calls.{k}.tool_call.function.arguments",
                    json.dumps(args, ensure_ascii=False),
                )
        else:
            for cid, _, text in event[1]:
                put("role", "tool")
                put("content", text)
                put("tool_call_id", cid)
                n += 1
            continue
        n += 1
    return json.dumps({"name": "llm", "attributes": attributes})


def otel_legacy(events: list[Event]) -> str:
    """OpenLLMetry's indexed attributes: every message a ``gen_ai.prompt.N``; reasoning has
    no attribute, so it is written as an extra field (a note); unknown likewise."""
    attributes: dict[str, Any] = {}
    n = 0
    for event in events:
        if event[0] == "results":
            for cid, _, text in event[1]:
                attributes |= {
                    f"gen_ai.prompt.{n}.role": "tool",
                    f"gen_ai.prompt.{n}.content": text,
                    f"gen_ai.prompt.{n}.tool_call_id": cid,
                }
                n += 1
            continue
        key = f"gen_ai.prompt.{n}"
        if event[0] in ("system", "user"):
            text = event[1] if event[0] == "system" else "\n".join(event[1])
            attributes |= {f"{key}.role": event[0], f"{key}.content": text}
        else:
            _, texts, calls, extra, extra_text = event
            attributes[f"{key}.role"] = "assistant"
            if texts:
                attributes[f"{key}.content"] = "\n".join(texts)
            if extra:
                attributes[f"{key}.{extra}"] = extra_text
            for k, (cid, name, args) in enumerate(calls):
                attributes |= {
                    f"{key}.tool_calls.{k}.id": cid,
                    f"{key}.tool_calls.{k}.name": name,
                    f"{key}.tool_calls.{k}.arguments": json.dumps(args, ensure_ascii=False),
                }
        n += 1
    return json.dumps({"name": "openai.chat", "attributes": attributes})  # fmt: skip


def responses_log(events: list[Event], responses: Callable[[list[Event]], Any]) -> str:
    """The same history sent twice without state (the second call repeats the first)."""
    items = responses(events)["input"]
    half = max(1, len(items) // 2)
    return json.dumps([
        {"model": "m", "input": items[:half]},
        {"object": "response", "id": "resp_1", "output": []},
        {"model": "m", "input": items},
        {"object": "response", "id": "resp_2", "output": []},
    ])  # fmt: skip


def codex(events: list[Event], responses: Callable[[list[Event]], Any]) -> str:
    system = [e[1] for e in events if e[0] == "system"]
    meta: dict[str, Any] = {"id": "s1", "cwd": "/w"}
    if system:
        meta["instructions"] = system[0]
    lines: list[dict[str, Any]] = [{"type": "session_meta", "payload": meta}]
    for item in responses([e for e in events if e[0] != "system"])["input"]:
        lines.append({"type": "response_item", "payload": item})
        if item.get("type") == "message" and item.get("role") == "user":
            text = "\n".join(p["text"] for p in item["content"])
            lines.append(
                {"type": "event_msg", "payload": {"type": "user_message", "message": text}}
            )
    lines.append({"type": "event_msg", "payload": {"type": "token_count", "info": None}})
    return "\n".join(json.dumps(line) for line in lines) + "\n"  # fmt: skip


def cohere(events: list[Event]) -> str:
    messages: list[dict[str, Any]] = []
    for event in events:
        if event[0] == "system":
            messages.append({"role": "system", "content": event[1]})
        elif event[0] == "user":
            messages.append(
                {"role": "user", "content": [{"type": "text", "text": t} for t in event[1]]}
            )
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            parts: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
            if extra == "reasoning":
                parts.insert(0, {"type": "thinking", "thinking": extra_text})
            elif extra == "unknown":
                parts.append({"type": "code", "text": extra_text})
            message: dict[str, Any] = {"role": "assistant", "content": parts}
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c,
                        "type": "function",
                        "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)},
                    }
                    for c, n, a in calls
                ]
            messages.append(message)
        else:
            messages.extend(
                {"role": "tool", "tool_call_id": c, "content": r} for c, _, r in event[1]
            )
    response = {
        "id": "r1",
        "finish_reason": "COMPLETE",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "end"}]},
    }
    return json.dumps([{"model": "command", "messages": messages}, response])  # fmt: skip


def _hermes_turns(events: list[Event]) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    for event in events:
        if event[0] == "system":
            turns.append(("system", event[1]))
        elif event[0] == "user":
            turns.append(("user", "\n".join(event[1])))
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            pieces = list(texts)
            if extra:
                pieces.append(f"<think>{extra_text}</think>")
            pieces += [
                "<tool_call>\n"
                + json.dumps({"name": n, "arguments": a}, ensure_ascii=False)
                + "\n</tool_call>"
                for _, n, a in calls
            ]
            turns.append(("assistant", "\n".join(pieces)))
        else:
            turns.append(("tool", "\n".join(
                "<tool_response>\n" + json.dumps({"name": n, "content": r}, ensure_ascii=False) + "\n</tool_response>"
                for _, n, r in event[1])))  # fmt: skip
    return turns


def hermes(events: list[Event]) -> str:
    """ShareGPT turns with tags; a recording without calls ends with an empty
    ``<tool_response>`` turn, since a Hermes record is claimed by its tags."""
    speakers = {"system": "system", "user": "human", "assistant": "gpt", "tool": "tool"}
    turns = [{"from": speakers[role], "value": value} for role, value in _hermes_turns(events)]
    if not any("<tool_" in turn["value"] for turn in turns):
        turns.append({"from": "tool", "value": "<tool_response>\n</tool_response>"})
    return json.dumps({"conversations": turns})


def chatml(events: list[Event]) -> str:
    return "".join(
        f"<|im_start|>{role}\n{value}<|im_end|>\n" for role, value in _hermes_turns(events)
    )


def _gemini_cli_records(events: list[Event]) -> list[dict[str, Any]]:
    """Gemini CLI message records: a system prompt is what the CLI printed (``info``), a
    call's result sits in its ``toolCalls`` entry, reasoning is ``thoughts``."""
    records: list[dict[str, Any]] = []
    for k, event in enumerate(events):
        rid = f"r{k}"
        if event[0] == "system":
            records.append({"id": rid, "type": "info", "content": event[1]})
        elif event[0] == "user":
            records.append({"id": rid, "type": "user", "content": [{"text": t} for t in event[1]]})
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            results = _results_after(events, k)
            parts: list[Any] = [{"text": t} for t in texts]
            record: dict[str, Any] = {"id": rid, "type": "gemini", "content": parts}
            if extra == "reasoning":
                record["thoughts"] = [{"subject": "", "description": extra_text}]
            elif extra == "unknown":
                parts.append({"widget": extra_text})
            if calls:
                record["toolCalls"] = [
                    {"id": c, "name": n, "args": a, "status": "success", "result": [
                        {"functionResponse": {"id": c, "name": n,
                                              "response": {"output": results.get(c)}}}]}
                    for c, n, a in calls
                ]  # fmt: skip
            records.append(record)
    return records


def gemini_cli(events: list[Event]) -> str:
    return json.dumps(
        {"sessionId": "s", "projectHash": "h", "messages": _gemini_cli_records(events)}
    )


def gemini_cli_jsonl(events: list[Event]) -> str:
    """The JSON Lines recording; a model message is written twice (without its calls, then
    rewritten in full), as the CLI does when its tool calls finish."""
    lines: list[dict[str, Any]] = [{"sessionId": "s", "projectHash": "h", "startTime": "t"}]
    for record in _gemini_cli_records(events):
        if record.get("toolCalls"):
            lines.append({k: v for k, v in record.items() if k != "toolCalls"})
        lines.append(record)
        lines.append({"$set": {"lastUpdated": "t"}})
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"


def _chat_messages(events: list[Event]) -> list[dict[str, Any]]:
    """OpenAI Chat messages (what agent trajectories hold); reasoning as ``reasoning_content``,
    an unknown part as a part type Chat does not have."""
    out: list[dict[str, Any]] = []
    for event in events:
        if event[0] == "system":
            out.append({"role": "system", "content": event[1]})
        elif event[0] == "user":
            out.append({"role": "user", "content": [{"type": "text", "text": t} for t in event[1]]})
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            parts: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
            message: dict[str, Any] = {"role": "assistant", "content": parts or None}
            if extra == "reasoning":
                message["reasoning_content"] = extra_text
            elif extra == "unknown":
                parts.append({"type": "widget", "text": extra_text})
                message["content"] = parts
            if calls:
                message["tool_calls"] = [
                    {"id": c, "type": "function",
                     "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                    for c, n, a in calls
                ]  # fmt: skip
            out.append(message)
        else:
            out.extend({"role": "tool", "tool_call_id": c, "content": r} for c, _, r in event[1])
    return out


def swe_agent(events: list[Event]) -> str:
    """A SWE-agent trajectory: results name their call in ``tool_call_ids``."""
    history = []
    for message in _chat_messages(events):
        if message["role"] == "tool":
            message = {"role": "tool", "content": message["content"],
                       "tool_call_ids": [message["tool_call_id"]], "message_type": "observation"}  # fmt: skip
        history.append({**message, "agent": "main"})
    return json.dumps({"environment": "e", "trajectory": [], "history": history, "info": {}})


def mini_swe_agent(events: list[Event]) -> str:
    """A mini-SWE-agent 2 trajectory: ``extra`` on each message, an ``exit`` message last."""
    messages = [{**m, "extra": {"timestamp": 1.0}} for m in _chat_messages(events)]
    messages.append({"role": "exit", "content": "Submitted", "extra": {"exit_status": "Submitted"}})
    info = {"mini_version": "2.0.0", "exit_status": "Submitted", "submission": ""}
    return json.dumps(
        {"info": info, "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}
    )


def pi(events: list[Event]) -> str:
    """A pi session (version 3: each entry names its parent); a system prompt is a
    ``custom_message`` entry (pi keeps its system prompt out of the file)."""
    lines: list[dict[str, Any]] = [{"type": "session", "version": 3, "id": "s", "cwd": "/w"}]

    def add(entry: dict[str, Any]) -> None:
        parent = lines[-1].get("id") if len(lines) > 1 else None
        lines.append({**entry, "id": f"e{len(lines)}", "parentId": parent})

    for event in events:
        if event[0] == "system":
            add({"type": "custom_message", "customType": "system", "content": event[1]})
        elif event[0] == "user":
            blocks = [{"type": "text", "text": t} for t in event[1]]
            add({"type": "message", "message": {"role": "user", "content": blocks}})
        elif event[0] == "assistant":
            _, texts, calls, extra, extra_text = event
            content: list[dict[str, Any]] = [{"type": "text", "text": t} for t in texts]
            if extra == "reasoning":
                content.insert(0, {"type": "thinking", "thinking": extra_text})
            elif extra == "unknown":
                content.append({"type": "widget", "text": extra_text})
            content += [
                {"type": "toolCall", "id": c, "name": n, "arguments": a} for c, n, a in calls
            ]
            add({"type": "message", "message": {"role": "assistant", "content": content}})
        else:
            for c, n, r in event[1]:
                result = {"role": "toolResult", "toolCallId": c, "toolName": n,
                          "content": [{"type": "text", "text": r}], "isError": False}  # fmt: skip
                add({"type": "message", "message": result})
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"


def writers(
    responses: Callable[[list[Event]], Any],
) -> dict[str, tuple[Callable[[list[Event]], str], dict[str, bool]]]:
    """The writers by format name, with the options of ``sources`` (ids kept, extras kept)."""
    return {
        "pydantic-ai": (pydantic_ai, {}),
        "vercel-ai": (vercel_ui, {}),
        "openinference": (openinference, {}),
        "otel-legacy": (otel_legacy, {}),
        "responses-log": (lambda e: responses_log(e, responses), {}),
        "codex": (lambda e: codex(e, responses), {}),
        "cohere": (cohere, {}),
        "hermes": (hermes, {"ids": False, "edges": False}),
        "chatml": (chatml, {"ids": False, "edges": False}),
        "gemini-cli": (gemini_cli, {}),
        "gemini-cli-jsonl": (gemini_cli_jsonl, {}),
        "swe-agent": (swe_agent, {}),
        "mini-swe-agent": (mini_swe_agent, {}),
        "pi": (pi, {}),
    }


#: Formats with no writer: an xLAM row is one query and its calls, not a conversation
#: (no assistant text, no results); its readers are pinned by example tests instead.
#: A Glaive row is text with in-band turn markers: a generated text holding " USER: " is a
#: turn boundary there, as in the data set; its reader is pinned by example tests too.
NO_WRITER = frozenset({"xlam", "glaive"})
