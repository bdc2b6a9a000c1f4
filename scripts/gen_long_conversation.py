"""Generate sample_data/long_conversation.jsonl: a long, seeded agent-loop recording.

The inspector needs one long conversation to exercise
windowing (``max_messages``) and to time a full replay. It is a travel agent
loop in OpenAI Chat shape, one message per line: user questions, assistant
turns calling ``get_weather`` / ``web_search`` / ``convert_currency``, their
results, and the faults a real orchestrator produces:

- re-fired results (MEM-1, MEM-14): a result delivered a second time, either
  right away or late, after the assistant already answered;
- dangling calls (MEM-3): the agent crashed after declaring calls, and the
  next user turn arrives with no result, so a replay heals them;
- a retried model step (MEM-2): the same assistant tool-call turn sent twice.

The output depends only on ``--seed`` and ``--messages``; the committed file
is what the defaults produce (tests/importers/test_base.py checks it).

    .venv/bin/python scripts/gen_long_conversation.py [--messages 5000] [--seed 14]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

TARGET = Path(__file__).resolve().parent.parent / "sample_data" / "long_conversation.jsonl"
DEFAULT_MESSAGES = 5000
DEFAULT_SEED = 14

SYSTEM = (
    "You are Wayfarer, a travel assistant. Use get_weather for forecasts, web_search "
    "for anything else and convert_currency for prices. Answer briefly."
)
CITIES = (
    "Lisbon", "Porto", "Madrid", "Seville", "Paris", "Lyon", "Rome", "Naples", "Berlin",
    "Vienna", "Prague", "Krakow", "Oslo", "Reykjavik", "Dublin", "Edinburgh", "Athens", "Split",
)  # fmt: skip
FORECASTS = ("sunny", "partly cloudy", "overcast", "light rain", "showers", "windy", "fog")
DAYS = ("today", "tomorrow", "Saturday", "Sunday", "Monday")
TOPICS = (
    "museum opening hours",
    "airport train",
    "late-night pharmacy",
    "vegetarian restaurants",
    "public holidays this month",
    "day trips",
    "bike rental",
)
CURRENCIES = (("EUR", "USD", 1.08), ("EUR", "GBP", 0.85), ("EUR", "CZK", 25.1), ("EUR", "PLN", 4.3))
NUDGES = ("Are you still there?", "Hello? Did that work?", "Any luck?", "Never mind, try again.")


class _Recorder:
    """Builds the message list and hands out unique call ids."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
        self.calls = 0

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A new tool call in OpenAI Chat shape with a fresh deterministic id."""
        self.calls += 1
        return {
            "id": f"call_{self.calls:05d}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }

    def result(self, call: dict[str, Any]) -> dict[str, Any]:
        """A plausible tool result for a call."""
        rng = self.rng
        name = call["function"]["name"]
        args = json.loads(call["function"]["arguments"])
        if name == "get_weather":
            low = rng.randint(-5, 20)
            body: dict[str, Any] = {
                "city": args["city"],
                "day": args["day"],
                "forecast": rng.choice(FORECASTS),
                "low_c": low,
                "high_c": low + rng.randint(3, 12),
            }
        elif name == "web_search":
            body = {
                "results": [
                    {"title": f"{args['query']} - guide #{rng.randint(1, 40)}", "rank": rank}
                    for rank in range(1, rng.randint(2, 3) + 1)
                ]
            }
        else:
            amount = args["amount"]
            body = {"amount": amount, "to": args["to"], "value": round(amount * args["rate"], 2)}
        return {"role": "tool", "tool_call_id": call["id"], "content": json.dumps(body)}

    def exchange(self) -> None:
        """One user question, the agent's tool loop and its answer, with occasional faults."""
        rng, out = self.rng, self.messages
        city = rng.choice(CITIES)
        kind = rng.random()
        if kind < 0.5:
            day = rng.choice(DAYS)
            out.append({"role": "user", "content": f"What's the weather in {city} {day}?"})
            calls = [self.call("get_weather", {"city": city, "day": day})]
        elif kind < 0.8:
            topic = rng.choice(TOPICS)
            out.append({"role": "user", "content": f"{city}: {topic}, and the weather tomorrow?"})
            calls = [
                self.call("web_search", {"query": f"{city} {topic}"}),
                self.call("get_weather", {"city": city, "day": "tomorrow"}),
            ]
        else:
            src, dst, rate = rng.choice(CURRENCIES)
            amount = rng.choice((20, 50, 120, 300))
            out.append({"role": "user", "content": f"How much is {amount} {src} in {dst}?"})
            calls = [
                self.call(
                    "convert_currency", {"amount": amount, "from": src, "to": dst, "rate": rate}
                )
            ]
        turn = {"role": "assistant", "content": None, "tool_calls": calls}
        out.append(turn)
        if rng.random() < 0.01:  # the agent crashed: calls declared, no result ever came
            out.append({"role": "user", "content": rng.choice(NUDGES)})
            return
        if rng.random() < 0.006:  # the orchestrator retried the model step (MEM-2)
            out.append(json.loads(json.dumps(turn)))
        results = [self.result(call) for call in calls]
        out.extend(results)
        if rng.random() < 0.04:  # re-fired right away
            out.append(dict(rng.choice(results)))
        out.append({"role": "assistant", "content": self.answer(results)})
        if rng.random() < 0.02:  # re-fired late, after the answer
            out.append(dict(rng.choice(results)))

    def answer(self, results: list[dict[str, Any]]) -> str:
        """The assistant's short answer from its tool results."""
        parts = []
        for result in results:
            body = json.loads(result["content"])
            if "forecast" in body:
                parts.append(
                    f"{body['city']} {body['day']}: {body['forecast']}, "
                    f"{body['low_c']}-{body['high_c']} °C."
                )
            elif "results" in body:
                parts.append(f"Top result: {body['results'][0]['title']}.")
            else:
                parts.append(f"That is about {body['value']} {body['to']}.")
        return " ".join(parts)


def generate(messages: int = DEFAULT_MESSAGES, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """At least ``messages`` messages (whole exchanges only), deterministic for a seed."""
    recorder = _Recorder(random.Random(seed))
    while len(recorder.messages) < messages:
        recorder.exchange()
    return recorder.messages


def render(messages: list[dict[str, Any]]) -> str:
    """JSONL text: one compact message per line."""
    return "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages)


def main(argv: list[str] | None = None) -> int:
    """Write the file and say how big it is."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=DEFAULT_MESSAGES)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, default=TARGET)
    args = parser.parse_args(argv)
    text = render(generate(args.messages, args.seed))
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {text.count(chr(10))} messages, {len(text.encode()):,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
