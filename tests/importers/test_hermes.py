"""The Hermes / Qwen tool-call tags in ShareGPT records and ChatML text: real public examples imported to their exact messages.

The files are in ``sample_data/fresh/`` (sources in its ``SOURCES.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flowdrop_core.importers import (
    ConversationFormatError,
    ImportedConversation,
    load_conversation,
    parse_conversation,
)
from flowdrop_core.importers import (
    _chatml as chatml,
)
from flowdrop_core.importers import (
    _hermes as hermes,
)
from flowdrop_core.importers._claims import Claim, Miss

FRESH = Path(__file__).resolve().parents[2] / "sample_data" / "fresh"


def imported(name: str) -> ImportedConversation:
    """A corpus file, its format detected."""
    return load_conversation(FRESH / name, name=name)


def test_hermes_sharegpt_flights() -> None:
    got = imported("hermes_sharegpt_flights.json")
    assert got.format == "hermes"

    assert got.messages == [
        {
            "role": "system",
            "content": "You are a function calling AI model. You are provided with function "
            "signatures within <tools> </tools> XML tags. You may call one or more "
            "functions to assist with the user query. Don't make assumptions about what "
            "values to plug into functions.\n"
            "<tools>\n"
            "[{'type': 'function', 'function': {'name': 'search_flights', "
            "'description': 'Searches for flights based on departure and destination "
            "cities, dates, class, and other preferences.', 'parameters': {'type': "
            "'object', 'properties': {'departure_city': {'type': 'string', "
            "'description': 'The city from which the flight will depart.'}, "
            "'destination_city': {'type': 'string', 'description': 'The destination "
            "city for the flight.'}, 'departure_date': {'type': 'string', "
            "'description': 'The departure date for the flight.', 'format': 'date'}, "
            "'return_date': {'type': 'string', 'description': 'The return date for the "
            "flight.', 'format': 'date'}, 'class': {'type': 'string', 'description': "
            "'The class of the flight ticket.', 'enum': ['economy', 'business', "
            "'first']}, 'flexible_cancellation': {'type': 'boolean', 'description': "
            "'Indicates if the search should filter for flights with flexible "
            "cancellation policies.'}}, 'required': ['departure_city', "
            "'destination_city', 'departure_date', 'return_date', 'class']}}}]\n"
            "</tools>\n"
            "For each function call return a json object with function name and "
            "arguments within <tool_call> </tool_call> tags with the following schema:\n"
            "<tool_call>\n"
            "{'arguments': <args-dict>, 'name': <function-name>}\n"
            "</tool_call>\n",
        },
        {
            "role": "user",
            "content": "I'm planning a kayaking trip and looking to book flights from Los Angeles "
            "to Auckland. My departure is scheduled for July 10th, 2023, and I intend "
            "to return on July 24th, 2023. I would prefer to travel in economy class "
            "and would also like the option to have flexible cancellation policies for "
            "the tickets due to the uncertain nature of outdoor activities. Could you "
            "please search for flights that meet these criteria and provide me with the "
            "available options?",
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "conversations[2].tool_call[0]",
                    "type": "function",
                    "function": {
                        "name": "search_flights",
                        "arguments": '{"departure_city": "Los Angeles", '
                        '"destination_city": "Auckland", '
                        '"departure_date": "2023-07-10", '
                        '"return_date": "2023-07-24", "class": '
                        '"economy", "flexible_cancellation": '
                        "true}",
                    },
                }
            ],
        },
        {
            "role": "tool",
            "content": '{"name": "search_flights", "content": {"flights": [{"flight_number": '
            '"AA118", "airline": "American Airlines", "departure_airport": "LAX", '
            '"departure_city": "Los Angeles", "departure_date": "2023-07-10T08:00:00Z", '
            '"departure_terminal": "4", "arrival_airport": "AKL", "arrival_city": '
            '"Auckland", "arrival_date": "2023-07-11T14:25:00Z", "arrival_terminal": '
            '"I", "duration": "17h 25m", "class": "Economy", "price": "$950", '
            '"flexible_cancellation": true}, {"flight_number": "UA796", "airline": '
            '"United Airlines", "departure_airport": "LAX", "departure_city": "Los '
            'Angeles", "departure_date": "2023-07-10T11:30:00Z", "departure_terminal": '
            '"7", "arrival_airport": "AKL", "arrival_city": "Auckland", "arrival_date": '
            '"2023-07-11T18:30:00Z", "arrival_terminal": "I", "duration": "16h 0m", '
            '"class": "Economy", "price": "$975", "flexible_cancellation": true}, '
            '{"flight_number": "NZ6", "airline": "Air New Zealand", '
            '"departure_airport": "LAX", "departure_city": "Los Angeles", '
            '"departure_date": "2023-07-10T21:00:00Z", "departure_terminal": "B", '
            '"arrival_airport": "AKL", "arrival_city": "Auckland", "arrival_date": '
            '"2023-07-12T05:20:00Z", "arrival_terminal": "I", "duration": "13h 20m", '
            '"class": "Economy", "price": "$1020", "flexible_cancellation": true}], '
            '"return_flights": [{"flight_number": "AA117", "airline": "American '
            'Airlines", "departure_airport": "AKL", "departure_city": "Auckland", '
            '"departure_date": "2023-07-24T14:10:00Z", "departure_terminal": "I", '
            '"arrival_airport": "LAX", "arrival_city": "Los Angeles", "arrival_date": '
            '"2023-07-24T06:00:00Z", "arrival_terminal": "4", "duration": "12h 50m", '
            '"class": "Economy", "price": "$950", "flexible_cancellation": true}, '
            '{"flight_number": "UA797", "airline": "United Airlines", '
            '"departure_airport": "AKL", "departure_city": "Auckland", '
            '"departure_date": "2023-07-24T19:15:00Z", "departure_terminal": "I", '
            '"arrival_airport": "LAX", "arrival_city": "Los Angeles", "arrival_date": '
            '"2023-07-24T10:15:00Z", "arrival_terminal": "7", "duration": "11h 0m", '
            '"class": "Economy", "price": "$975", "flexible_cancellation": true}, '
            '{"flight_number": "NZ5", "airline": "Air New Zealand", '
            '"departure_airport": "AKL", "departure_city": "Auckland", '
            '"departure_date": "2023-07-24T19:30:00Z", "departure_terminal": "I", '
            '"arrival_airport": "LAX", "arrival_city": "Los Angeles", "arrival_date": '
            '"2023-07-24T10:30:00Z", "arrival_terminal": "B", "duration": "12h 0m", '
            '"class": "Economy", "price": "$1020", "flexible_cancellation": true}]}}',
            "tool_call_id": "conversations[2].tool_call[0]",
        },
        {
            "role": "assistant",
            "content": "Here are the available flight options with flexible cancellation policies "
            "for your kayaking trip from Los Angeles to Auckland:\n"
            "\n"
            "**Outbound Flights (Los Angeles to Auckland):**\n"
            "1. **American Airlines AA118**\n"
            "   - Departure: July 10, 2023, 8:00 AM from LAX Terminal 4\n"
            "   - Arrival: July 11, 2023, 2:25 PM at AKL Terminal I\n"
            "   - Duration: 17h 25m\n"
            "   - Price: $950\n"
            "\n"
            "2. **United Airlines UA796**\n"
            "   - Departure: July 10, 2023, 11:30 AM from LAX Terminal 7\n"
            "   - Arrival: July 11, 2023, 6:30 PM at AKL Terminal I\n"
            "   - Duration: 16h 0m\n"
            "   - Price: $975\n"
            "\n"
            "3. **Air New Zealand NZ6**\n"
            "   - Departure: July 10, 2023, 9:00 PM from LAX Terminal B\n"
            "   - Arrival: July 12, 2023, 5:20 AM at AKL Terminal I\n"
            "   - Duration: 13h 20m\n"
            "   - Price: $1020\n"
            "\n"
            "**Return Flights (Auckland to Los Angeles):**\n"
            "1. **American Airlines AA117**\n"
            "   - Departure: July 24, 2023, 2:10 PM from AKL Terminal I\n"
            "   - Arrival: July 24, 2023, 6:00 AM at LAX Terminal 4\n"
            "   - Duration: 12h 50m\n"
            "   - Price: $950\n"
            "\n"
            "2. **United Airlines UA797**\n"
            "   - Departure: July 24, 2023, 7:15 PM from AKL Terminal I\n"
            "   - Arrival: July 24, 2023, 10:15 AM at LAX Terminal 7\n"
            "   - Duration: 11h 0m\n"
            "   - Price: $975\n"
            "\n"
            "3. **Air New Zealand NZ5**\n"
            "   - Departure: July 24, 2023, 7:30 PM from AKL Terminal I\n"
            "   - Arrival: July 24, 2023, 10:30 AM at LAX Terminal B\n"
            "   - Duration: 12h 0m\n"
            "   - Price: $1020\n"
            "\n"
            "All the listed prices are in economy class with flexible cancellation "
            "policies. Please review the options and let me know if you would like to "
            "proceed with booking any of these flights or if you need further "
            "assistance.",
        },
    ]

    assert got.origins == [
        "conversations[0]",
        "conversations[1]",
        "conversations[2]",
        "conversations[3]",
        "conversations[4]",
    ]

    assert [(n.where, n.what) for n in got.notes] == []


def test_hermes_chatml_stock() -> None:
    got = imported("hermes_chatml_stock.txt")
    assert got.format == "chatml"

    assert got.messages == [
        {"role": "user", "content": "Fetch the stock fundamentals data for Tesla (TSLA)"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "line 3.tool_call[0]",
                    "type": "function",
                    "function": {
                        "name": "get_stock_fundamentals",
                        "arguments": '{"symbol": "TSLA"}',
                    },
                }
            ],
        },
        {
            "role": "tool",
            "content": '{"name": "get_stock_fundamentals", "content": {\'symbol\': \'TSLA\', '
            "'company_name': 'Tesla, Inc.', 'sector': 'Consumer Cyclical', 'industry': "
            "'Auto Manufacturers', 'market_cap': 611384164352, 'pe_ratio': 49.604652, "
            "'pb_ratio': 9.762013, 'dividend_yield': None, 'eps': 4.3, 'beta': 2.427, "
            "'52_week_high': 299.29, '52_week_low': 152.37}}",
            "tool_call_id": "line 3.tool_call[0]",
        },
        {
            "role": "assistant",
            "content": "The stock fundamentals data for Tesla (TSLA) are as follows:\n"
            "- **Symbol**: TSLA\n"
            "- **Company Name**: Tesla, Inc.\n"
            "- **Sector**: Consumer Cyclical\n"
            "- **Industry**: Auto Manufacturers\n"
            "- **Market Capitalization**: $566,160,130,480\n"
            "- **Forward Price-to-Earnings Ratio (PE Ratio)**: 42.73\n"
            "- **Price-to-Book Ratio (PB Ratio)**: 9.04\n"
            "- **Dividend Yield**: N/A\n"
            "- **Trailing Earnings Per Share (EPS)**: $4.3\n"
            "- **Beta Value of the Stock**: 2.42\n"
            "- **52-Week High Price of the Stock**: $299.29\n"
            "- **52-Week Low Price of the Stock**: $152.37\n"
            "This information provides a snapshot of Tesla's financial position and "
            "performance based on the fundamental data obtained from the yfinance API. "
            "It shows that Tesla has a substantial market capitalization and a "
            "relatively high P/E and P/B ratio compared to other stocks in its "
            "industry. The company does not pay a dividend at the moment, which is "
            "reflected by a 'Dividend Yield' of 'None'. The Beta value indicates that "
            "Tesla's stock has a moderate level of volatility relative to the market. "
            "The 52-week high and low prices give an idea of the stock's range over the "
            "past year. This data can be useful when assessing investment opportunities "
            "and making investment decisions.",
        },
    ]

    assert got.origins == ["line 1", "line 3", "line 7", "line 12"]

    assert [(n.where, n.what) for n in got.notes] == []


def test_calls_get_ids_from_their_origin_and_responses_answer_by_name() -> None:
    """Two calls in one turn (a Python literal and JSON); their responses, given in the
    other order, answer by the name they carry; a response with no open call is noted."""
    record = {"conversations": [
        {"from": "human", "value": "both"},
        {"from": "gpt", "value": "Sure.\n<tool_call>\n{'name': 'a', 'arguments': {'x': True}}\n"
                                 "</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>"},
        {"from": "tool", "value": "<tool_response>{\"name\": \"b\", \"content\": 2}</tool_response>\n"
                                  "<tool_response>{\"name\": \"a\", \"content\": 1}</tool_response>"},
        {"from": "tool", "value": "<tool_response>late</tool_response>"},
    ]}  # fmt: skip
    got = parse_conversation(json.dumps(record), source_name="h.json")
    assert got.format == "hermes"
    a, b = "conversations[1].tool_call[0]", "conversations[1].tool_call[1]"
    assert got.messages == [
        {"role": "user", "content": "both"},
        {"role": "assistant", "content": "Sure.", "tool_calls": [
            {"id": a, "type": "function", "function": {"name": "a", "arguments": '{"x": true}'}},
            {"id": b, "type": "function", "function": {"name": "b", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"name": "b", "content": 2}', "tool_call_id": b},
        {"role": "tool", "content": '{"name": "a", "content": 1}', "tool_call_id": a},
        {"role": "tool", "content": "late", "tool_call_id": None},
    ]  # fmt: skip
    assert [(n.where, n.what) for n in got.notes] == [
        ("conversations[3]", "tool response without a call")
    ]


def test_a_call_that_is_not_name_and_arguments_stays_text_with_a_note() -> None:
    turns = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": "<tool_call>oops</tool_call>"}]  # fmt: skip
    got = parse_conversation(json.dumps(turns), format="hermes", source_name="h.json")
    assert got.messages == [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "oops"},
    ]
    assert [(n.where, n.what) for n in got.notes] == [
        ("[1].tool_call[0]", "tool_call that is not {name, arguments}")
    ]


def test_chatml_text_outside_blocks_is_noted_and_an_unknown_role_located() -> None:
    got = parse_conversation(
        "preamble\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\nyo<|im_end|>\n",
        source_name="c.txt",
    )
    assert got.format == "chatml"
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "yo"},
    ]
    assert [(n.where, n.content) for n in got.notes] == [("line 2", "preamble")]
    with pytest.raises(ConversationFormatError) as info:
        parse_conversation("<|im_start|>robot\nx<|im_end|>", format="chatml", source_name="c.txt")
    assert str(info.value) == "c.txt is not valid chatml: line 1: unknown ChatML role 'robot'"


def test_the_signature_needs_a_tag_in_json() -> None:
    assert isinstance(hermes.claims([{"from": "gpt", "value": "<tool_call>{}</tool_call>"}]), Claim)
    assert isinstance(hermes.claims([{"from": "gpt", "value": "plain"}]), Miss)  # plain ShareGPT
    assert isinstance(
        hermes.claims([{"from": "alien", "value": "<tool_call>{}</tool_call>"}]), Miss
    )
    assert isinstance(chatml.claims_text("<|im_start|>user\nhi<|im_end|>"), Claim)
    assert isinstance(chatml.claims_text("user: hi"), Miss)


def test_a_call_keeps_its_own_id_and_tool_turns_with_and_without_tags() -> None:
    """A call with an ``id`` keeps it, and the response naming its tool answers it; text
    beside a tool turn's tags is a note; a tool turn without tags is its whole text as the
    result, with no note claiming it lies outside tags (only that no call is open)."""
    record = {"conversations": [
        {"from": "human", "value": "hi"},
        {"from": "gpt", "value": '<tool_call>{"name": "f", "arguments": {}, "id": "c7"}</tool_call>'},
        {"from": "tool", "value": '<tool_response>{"name": "f", "content": 1}</tool_response> trailing words'},
        {"from": "tool", "value": "plain result"},
        {"from": "gpt", "value": "ok"},
    ]}  # fmt: skip
    got = parse_conversation(json.dumps(record), format="hermes", source_name="h.json")
    assert got.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c7", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"name": "f", "content": 1}', "tool_call_id": "c7"},
        {"role": "tool", "content": "plain result", "tool_call_id": None},
        {"role": "assistant", "content": "ok"},
    ]  # fmt: skip
    assert got.origins == [f"conversations[{i}]" for i in range(5)]
    assert [(n.where, n.what, n.why, n.content) for n in got.notes] == [
        ("conversations[2]", "text outside <tool_response>", "kept as a note", "trailing words"),
        ("conversations[3]", "tool response without a call", "no earlier tool call is open", ""),
    ]


def test_a_user_turn_holding_a_tool_response_and_text_is_a_result_then_the_user_text() -> None:
    record = {"conversations": [
        {"from": "gpt", "value": '<tool_call>{"name": "f", "arguments": {}}</tool_call>'},
        {"from": "human", "value": '<tool_response>{"name": "f"}</tool_response> then a question'},
    ]}  # fmt: skip
    got = parse_conversation(json.dumps(record), format="hermes", source_name="h.json")
    call_id = "conversations[0].tool_call[0]"
    assert got.messages == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "content": '{"name": "f"}', "tool_call_id": call_id},
        {"role": "user", "content": "then a question"},
    ]  # fmt: skip
    assert got.origins == ["conversations[0]", "conversations[1]", "conversations[1]"]
    assert got.notes == []


def test_two_responses_in_one_turn_are_located_each_and_json_booleans_are_read() -> None:
    record = {"conversations": [
        {"from": "human", "value": "both"},
        {"from": "gpt", "value": '<tool_call>{"name": "a", "arguments": {"x": true}}</tool_call>'
                                 '<tool_call>{"name": "b", "arguments": {}}</tool_call>'},
        {"from": "tool", "value": '<tool_response>{"name": "b", "content": 2}</tool_response>'
                                  '<tool_response>{"name": "a", "content": 1}</tool_response>'},
    ]}  # fmt: skip
    got = parse_conversation(json.dumps(record), format="hermes", source_name="h.json")
    assert got.messages[1]["tool_calls"][0]["function"] == {"name": "a", "arguments": '{"x": true}'}
    assert got.origins == [
        "conversations[0]",
        "conversations[1]",
        "conversations[2].tool_response[0]",
        "conversations[2].tool_response[1]",
    ]
