"""xLAM function-calling rows (Salesforce ``xlam-function-calling-60k`` and its kin).

A row is ``{"query", "tools", "answers"}`` (maybe ``id``): the user's query,
the tool definitions (not conversation content) and the calls that answer
it, each ``{"name", "arguments"}``. ``tools`` and ``answers`` are JSON text
in the published data set and lists in its card. A row becomes a user
message and one assistant message with the calls; the source has no call
ids, so a call's id is its origin (``answers[1]``). A list of rows is read
one after another.
"""

from __future__ import annotations

from typing import Any

from flowdrop_core.importers._base import Out, Problem, arguments_text, json_type
from flowdrop_core.importers._claims import Claim, Miss, Verdict, each
from flowdrop_core.scenario import JSONProblem, parse_json

NAME = "xlam"
EXPECTS = "xLAM rows {'query', 'tools', 'answers': [{'name', 'arguments'}]} or a list of them"

KNOWN = frozenset({"id", "query", "tools", "answers"})


def _is_row(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("query"), str) and "answers" in value


def claims(document: Any) -> Verdict:
    """The signature: a row with a string ``query`` and ``answers``, or a list of rows."""
    if isinstance(document, list):
        return each(document, "", _row_miss, "a list of rows", score=0)
    return _row_miss(document, "") or Claim("a row")


def _row_miss(item: Any, where: str) -> Miss | None:
    return None if _is_row(item) else Miss(where, "not a row {'query': str, 'answers'}")


def read(document: Any, out: Out) -> None:
    """Read one row or a list of rows."""
    if not isinstance(claims(document), Claim):
        raise Problem("", f"expected an xLAM row {{'query', 'answers'}}, got {json_type(document)}")
    rows = document if isinstance(document, list) else [document]
    for i, row in enumerate(rows):
        _row(row, f"[{i}]" if isinstance(document, list) else "", out)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _row(row: dict[str, Any], prefix: str, out: Out) -> None:
    for key, value in row.items():
        if key not in KNOWN and value not in (None, "", [], {}):
            out.note(
                _join(prefix, key),
                f"field {key!r}",
                f"{NAME} does not read it",
                value,
                unknown=True,
            )
    out.add({"role": "user", "content": row["query"]}, _join(prefix, "query"))
    at = _join(prefix, "answers")
    answers = row["answers"]
    if isinstance(answers, str):
        try:
            answers = parse_json(answers)
        except JSONProblem as exc:
            raise Problem(at, f"answers is not JSON: {exc}") from None
    if not isinstance(answers, list):
        raise Problem(at, f"expected a list of calls, got {json_type(answers)}")
    calls = []
    for k, answer in enumerate(answers):
        where = f"{at}[{k}]"
        if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
            raise Problem(where, "expected a call {'name', 'arguments'}")
        out.synthetic.add(where)
        calls.append(
            {
                "id": where,
                "type": "function",
                "function": {
                    "name": answer["name"],
                    "arguments": arguments_text(answer.get("arguments")),
                },
            }
        )
    if calls:
        out.add({"role": "assistant", "content": None, "tool_calls": calls}, at)
    else:
        out.note(at, "no answers", "the row's query calls no tool", answers)
