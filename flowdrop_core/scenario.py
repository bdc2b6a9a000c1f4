"""Scenario files: a starting buffer, a node configuration, appends and expectations.

A scenario is the one file format shared by the spec-examples page, the
``check`` command and saved replays. It says "this buffer, this configuration,
these appends, and what each should report". The models here
only check the *shape* of the file: ``buffer`` and each step's ``append`` are
kept verbatim, because judging messages is the engine's job and a scenario must
be able to hold exactly the malformed data a rule is about (MEM-5, MEM-11).

Every model forbids unknown fields, so a typo such as ``apend`` is an error
that names the field and its JSON path instead of a silently ignored key.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from flowdrop_core._errors import FlowdropError
from flowdrop_core.text import text_to_message
from flowdrop_core.verdicts import Verdict

__all__ = [
    "CONTEXT_FIELDS",
    "MAX_JSON_DEPTH",
    "SCOPES",
    "Expectation",
    "JSONProblem",
    "ProviderExpectation",
    "Scenario",
    "ScenarioConfig",
    "ScenarioError",
    "ScenarioStep",
    "TextInput",
    "dump_scenario",
    "json_error_text",
    "load_scenario",
    "parse_json",
    "parse_json_lines",
    "parse_scenario",
    "scenario_schema_json",
    "step_context",
]

#: The scope names GR-MEM defines (MEM-6, MEM-7, MEM-8, MEM-13).
SCOPES: tuple[str, ...] = ("global", "workflow", "pipeline", "execution", "session", "user")

Scope = Literal["global", "workflow", "pipeline", "execution", "session", "user"]
Count = Annotated[int, Field(ge=0, strict=True)]


class ScenarioError(FlowdropError, ValueError):
    """A scenario file that cannot be used: each problem names the file and a JSON path.

    ``problems`` holds the problems without the file name (``"steps[0].apend:
    unknown field"``) so other readers (the importers) can quote them; the
    message is one line per problem, each prefixed with ``source``.
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {problem}" for problem in problems))


class _Strict(BaseModel):
    """Base for every scenario model: unknown fields are errors, not ignored."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")


class ScenarioConfig(_Strict):
    """The buffer node's configuration for every step of the scenario."""

    scope: Scope = Field(default="session", description="Scope the buffer is stored under.")
    key: str = Field(default="chat_history", description="Storage key of the buffer (not blank).")
    max_messages: Count = Field(
        default=0, description="Window size (GR-MEM step 6); 0 means no cap."
    )
    storage: str = Field(default="memory", min_length=1, description="Storage backend name.")

    @field_validator("key")
    @classmethod
    def _key_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError(f"must not be blank, got {json.dumps(value)}")
        return value


#: The fields an execution context may carry (see flowdrop_core.context.ExecutionContext).
CONTEXT_FIELDS: tuple[str, ...] = (
    "session_id",
    "user_id",
    "session_owner_id",
    "workflow_id",
    "pipeline_id",
    "execution_id",
    "node_id",
)


def _check_context(value: dict[str, Any] | None) -> dict[str, Any] | None:
    """A context key outside :data:`CONTEXT_FIELDS` is a typo, not an id to ignore."""
    if value is not None:
        unknown = [k for k in value if k not in CONTEXT_FIELDS]
        if unknown:
            raise ValueError(
                f"unknown context field {unknown[0]!r} (expected one of {', '.join(CONTEXT_FIELDS)})"
            )
    return value


class TextInput(_Strict):
    """Text and a role, as a node receives them (MEM-16)."""

    text: str | None = Field(default=None, description="The text; empty makes no message.")
    role: Any = Field(default="user", description="Any value; outside the four roles it is 'user'.")
    tool_call_id: Any = Field(default=None, description="Kept only on role tool, trimmed.")


class ScenarioStep(_Strict):
    """One append: its incoming message(s) and an optional context override."""

    label: str = Field(default="", description="Short human-readable name of the step.")
    append: dict[str, Any] | list[dict[str, Any]] = Field(
        description="One message object or a list of them, kept verbatim."
    )
    context: dict[str, Any] | None = Field(
        default=None,
        description="Overrides the scenario context key by key for this step only.",
    )
    text: TextInput | None = Field(
        default=None,
        description="MEM-16: text plus a role; the step appends text_to_message(...) "
        "(nothing when the text is empty). Fills append when append is absent.",
    )
    refire: bool = Field(
        default=False,
        description="Marks a step that re-sends earlier messages (MEM-14's re-fire); "
        "informational, the append runs the same.",
    )

    @model_validator(mode="before")
    @classmethod
    def _text_becomes_append(cls, data: Any) -> Any:
        """MEM-16: a ``text`` step appends what :func:`text_to_message` makes of it."""
        if not isinstance(data, dict) or data.get("text") is None:
            return data
        text = data["text"]
        if not isinstance(text, dict) or not isinstance(text.get("text"), str | None):
            # The field's own validation names the problem and its path; a missing
            # append is not a second problem: the text would have made it.
            return data if "append" in data else {**data, "append": []}
        message = text_to_message(text.get("text"), text.get("role"), text.get("tool_call_id"))
        made = [] if message is None else [message]
        if "append" not in data:
            return {**data, "append": made}
        given = data["append"] if isinstance(data["append"], list) else [data["append"]]
        if given != made:
            raise ValueError(
                f"append {_clipped(data['append'])} is not what text makes "
                f"({_clipped(made)}); give one of them"
            )
        return data

    @field_validator("context")
    @classmethod
    def _known_context_fields(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return _check_context(value)

    @field_validator("append", mode="before")
    @classmethod
    def _message_or_list(cls, value: Any) -> Any:
        """Give one clear error instead of pydantic's two union-branch errors."""
        if isinstance(value, dict):
            return value
        if isinstance(value, list):
            for index, item in enumerate(value):
                if not isinstance(item, dict):
                    raise ValueError(
                        f"item [{index}] should be a message object, got {_json_type(item)}"
                    )
            return value
        raise ValueError(
            f"should be a message object or a list of message objects, got {_json_type(value)}"
        )


class ProviderExpectation(_Strict):
    """What the MEM-5 provider view of the buffer after the step should be."""

    messages: list[Any] | None = Field(
        default=None, description="normalize(buffer)[0], compared exactly."
    )
    dropped: Count | None = Field(default=None, description="normalize(buffer)[1].")


class Expectation(_Strict):
    """What step *i* should report: a subset of its result fields (absent = not checked)."""

    count: Count | None = Field(default=None, description="Entries in the buffer after the step.")
    appended: Count | None = Field(
        default=None, description="Incoming messages that became new entries (MEM-14)."
    )
    appended_any: Annotated[bool, Field(strict=True)] | None = Field(
        default=None, description="Whether appended > 0 (MEM-14)."
    )
    refused: Annotated[bool, Field(strict=True)] | None = Field(
        default=None, description="Whether the identity scope refused (MEM-13)."
    )
    resolved_scope_id: Annotated[str, Field(strict=True)] | None = Field(
        default=None, description="The scope id the step resolved to ('' when refused)."
    )
    found: Annotated[bool, Field(strict=True)] | None = Field(
        default=None, description="Whether the step's read found a stored buffer (MEM-13)."
    )
    verdict: Verdict | None = Field(
        default=None,
        description="The specification's word for the step: appended, dropped, replaced, "
        "healed, refused, pure read or unchanged.",
    )
    messages: list[Any] | None = Field(
        default=None, description="The whole buffer after the step, compared exactly."
    )
    provider: ProviderExpectation | None = Field(
        default=None, description="The MEM-5 provider view of the buffer after the step."
    )


class Scenario(_Strict):
    """A starting buffer, a configuration, a list of appends and their expected results."""

    name: str = Field(min_length=1, description="Identifier, usually the file name stem.")
    title: str = Field(default="", description="One-line human-readable title.")
    rules: list[str] = Field(default_factory=list, description="Rule ids, e.g. ['MEM-14'].")
    description: str = Field(default="", description="Longer explanation (free text).")
    config: ScenarioConfig = Field(default_factory=ScenarioConfig)
    context: dict[str, Any] | None = Field(
        default=None, description="Execution context for every step (null: no context)."
    )
    buffer: list[Any] = Field(
        default_factory=list, description="Starting buffer entries, kept verbatim."
    )
    steps: list[ScenarioStep] = Field(description="Appends, run in order.")
    expect: list[Expectation] = Field(
        default_factory=list,
        description="expect[i] is checked against step i's result; {} checks nothing.",
    )

    @field_validator("context")
    @classmethod
    def _known_context_fields(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return _check_context(value)

    @model_validator(mode="after")
    def _expect_fits_steps(self) -> Scenario:
        """An expectation with no step to check would silently never run."""
        if len(self.expect) > len(self.steps):
            raise ValueError(
                f"expect has {len(self.expect)} entries but the scenario has "
                f"{len(self.steps)} step(s); expect[i] is checked against steps[i]"
            )
        return self


def step_context(scenario: Scenario, step: ScenarioStep) -> dict[str, Any] | None:
    """The context a step runs with: the scenario's, overridden key by key by the step's.

    ``None`` only when neither gives a context (an identity scope then refuses
    for lack of context). A step key set to ``null`` overrides too, which is how
    a scenario removes an id for one step.
    """
    if scenario.context is None and step.context is None:
        return None
    return {**(scenario.context or {}), **(step.context or {})}


class JSONProblem(FlowdropError, ValueError):
    """Text that is not JSON this library can read, with the reason and place."""


#: The deepest nesting input may have (objects and lists, the top level counts as 1).
#: Real conversations stay far below it (a message with content parts and a tool
#: call's arguments is about 8 levels inside a scenario); it exists so that no
#: reader, validator, comparison or writer downstream can run out of stack.
MAX_JSON_DEPTH = 100


class _NotANumber:
    """Stands in for ``NaN``, ``Infinity`` or an out-of-range number while parsing."""

    __slots__ = ("spelling",)

    def __init__(self, spelling: str) -> None:
        self.spelling = spelling


def _finite_or_marker(spelling: str) -> float | _NotANumber:
    value = float(spelling)
    return value if math.isfinite(value) else _NotANumber(spelling)


class _Duplicated(dict):  # type: ignore[type-arg]
    """An object that named a key twice (the walk reports it; ``json`` keeps the last)."""

    duplicate: str = ""


_SEEN = threading.local()


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build an object, marking one with a repeated key instead of silently keeping the last."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    marked = _Duplicated(out)
    for key, _ in pairs:
        if key in seen:
            marked.duplicate = key
            break
        seen.add(key)
    _SEEN.duplicate = True
    return marked


#: One decoder for every call (building one per call costs more than a short JSONL line):
#: ``NaN``/``Infinity`` and out-of-range numbers become markers that the walk reports, and
#: an object naming a key twice is marked for it too.
_DECODER = json.JSONDecoder(
    parse_constant=_NotANumber, parse_float=_finite_or_marker, object_pairs_hook=_pairs
)


class _Doubt(ValueError):
    """A value :func:`parse_json` would report: :func:`parse_json_lines` gives up."""


def _doubt(spelling: str) -> float:
    raise _Doubt(spelling)


def _pairs_or_doubt(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, or a doubt when it names a key twice (:func:`parse_json` reports it)."""
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Doubt("a repeated key")
    return out


def _finite_or_doubt(spelling: str) -> float:
    value = float(spelling)
    if not math.isfinite(value):
        raise _Doubt(spelling)
    return value


#: For :func:`parse_json_lines`: the same decoder, raising where ``_DECODER`` makes a marker.
_STRICT_DECODER = json.JSONDecoder(
    parse_constant=_doubt, parse_float=_finite_or_doubt, object_pairs_hook=_pairs_or_doubt
)

#: Text that may have produced a marker: a constant, or a number with a 3-digit exponent
#: or 200 digits in a row. A false hit (inside a string) only costs a walk that finds nothing.
_MAYBE_NOT_A_NUMBER = re.compile(r"NaN|Infinity|[eE]\+?\d{3}|\d{200}")

#: ``\ud800``..``\udfff`` written as an escape (the only way text decoded from UTF-8 gets one).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE_CHAR = re.compile("[\ud800-\udfff]")


def parse_json_lines(lines: Sequence[str]) -> list[Any] | None:
    """:func:`parse_json` of every line, or ``None``: then parse them one by one for the error.

    For JSON Lines files (one value per line, 100,000 lines for a long
    recording), where :func:`parse_json`'s checks per line cost more than the
    parsing: the checks that look at the text (byte order mark, surrogate
    escapes and characters, non-numbers) are made once over all the lines,
    and only when none of them can apply are the lines decoded with the same
    decoder, each checked for depth as :func:`parse_json` does. Any doubt
    (a check that could apply, a line that does not decode) returns ``None``,
    so the caller's line-by-line :func:`parse_json` gives the exact located
    problem; a ``list`` is exactly what :func:`parse_json` would return.
    """
    text = "\n".join(lines)
    if (
        "\ufeff" in text
        or ("\\u" in text and _SURROGATE_ESCAPE.search(text) is not None)
        or (not text.isascii() and _SURROGATE_CHAR.search(text) is not None)
    ):
        return None
    # A non-number raises instead of leaving a marker. The scanner is what
    # ``decode`` runs after skipping leading whitespace; called directly it
    # saves two regex matches and two calls per line, and a line it does not
    # end (whitespace around the value, or more than one value) goes to
    # ``decode``, which accepts or refuses it exactly as ever.
    decode = _STRICT_DECODER.decode
    scan: Callable[[str, int], tuple[Any, int]] = _STRICT_DECODER.scan_once  # type: ignore[attr-defined]
    values: list[Any] = []
    append = values.append
    try:
        for line in lines:
            if line.count("[") + line.count("{") > MAX_JSON_DEPTH:
                return None
            try:
                value, end = scan(line, 0)
                if end != len(line):  # whitespace after the value, or more: decode judges
                    value = decode(line)
            except StopIteration:  # leading whitespace, or not JSON: decode says which
                value = decode(line)
            append(value)
    except (ValueError, RecursionError):  # JSONDecodeError and _Doubt are ValueErrors
        return None
    return values


def parse_json(text: str, *, column_only: bool = False) -> Any:
    """Strict ``json.loads``: every failure is a :class:`JSONProblem` naming the reason and place.

    Refused besides syntax errors, each with the JSON path of the value
    (``not JSON (NaN at steps[0].append.content: ...)``):

    - ``NaN``, ``Infinity``, ``-Infinity`` and numbers too large for a float
      (``1e309``): not JSON (RFC 8259), and written back they would make the
      output not JSON either;
    - lone UTF-16 surrogates (``"\\ud800"`` without its pair): valid escape
      syntax but not text; no store, file or terminal can encode them;
    - nesting deeper than :data:`MAX_JSON_DEPTH`, so nothing downstream can
      hit a ``RecursionError``;
    - integers longer than Python's conversion limit (4,300 digits).

    The message names no file: callers prefix the file or line.
    ``column_only`` is as in :func:`json_error_text`.
    """
    if text.startswith("\ufeff"):  # a byte order mark is an encoding detail, not data
        text = text[1:]
    _SEEN.duplicate = False
    try:
        data = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        raise JSONProblem(json_error_text(exc, column_only=column_only)) from None
    except RecursionError:
        place = _too_deep_at(text)
        raise JSONProblem(_too_deep(place)) from None
    except ValueError as exc:
        if "integer string conversion" in str(exc):
            why = f"integer too long: more than {sys.get_int_max_str_digits()} digits"
        else:
            why = str(exc).split(";", 1)[0]
        raise JSONProblem(f"not JSON ({why})") from None
    strings = _SURROGATE_ESCAPE.search(text) is not None or (
        not text.isascii() and _SURROGATE_CHAR.search(text) is not None
    )
    deep = text.count("[") + text.count("{") > MAX_JSON_DEPTH and _too_deep_value(data)
    bad = _MAYBE_NOT_A_NUMBER.search(text) is not None or _SEEN.duplicate
    if bad or strings or deep:
        problem = _first_problem(data, strings=strings)
        if problem is not None:
            raise JSONProblem(
                problem if problem.startswith("not JSON") else f"not JSON ({problem})"
            )
    return data


def _too_deep(place: str) -> str:
    return f"not JSON (nested too deeply): more than {MAX_JSON_DEPTH} levels at {place}"


_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def _too_deep_at(text: str) -> str:
    """``line L, column C``: where ``text`` first opens more than :data:`MAX_JSON_DEPTH` levels.

    Only used when the parser itself ran out of stack, so the value has no
    path yet; strings are skipped so brackets inside them do not count.
    """
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                offset = match.start()
                line = text.count("\n", 0, offset) + 1
                column = offset - text.rfind("\n", 0, offset)
                return f"line {line}, column {column}"
        elif token in "]}":
            depth -= 1
    return "an unknown place"


def _too_deep_value(data: Any) -> bool:
    """Whether ``data`` nests deeper than :data:`MAX_JSON_DEPTH` (the fast check, no paths).

    Only containers go on the stack; :func:`_first_problem` finds the path
    when this says yes.
    """
    if type(data) is not dict and type(data) is not list:
        return False
    stack: list[tuple[Any, int]] = [(data, 1)]
    push = stack.append
    while stack:
        value, depth = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return True
        for child in value.values() if type(value) is dict else value:
            kind = type(child)
            if kind is dict or kind is list:
                push((child, depth + 1))
    return False


def _first_problem(data: Any, *, strings: bool) -> str | None:
    """The first value, in document order, that strict JSON refuses, with its JSON path.

    Iterative (an explicit stack), so a deep document cannot exhaust the
    interpreter's stack here either. Paths are linked pairs ``(parent, key)``
    so each step costs O(1) whatever the depth.
    """
    stack: list[tuple[Any, Any, int]] = [(data, None, 1)]
    while stack:
        value, path, depth = stack.pop()
        kind = type(value)
        if kind is _Duplicated:
            where = _linked_path((path, value.duplicate))
            return (
                f"not JSON for this reader (duplicate key {value.duplicate!r} at {where}: "
                "an object names it twice, and which value counts is undefined)"
            )
        if kind is dict or kind is list:
            if depth > MAX_JSON_DEPTH:
                return _too_deep(_linked_path(path))
            if kind is dict:
                items = list(value.items())
                if strings:
                    for key, _ in items:
                        if _SURROGATE_CHAR.search(key):
                            where = _linked_path((path, key))
                            return f"a lone surrogate in the key at {where}: {_surrogate(key)}"
            else:
                items = list(enumerate(value))
            for key, item in reversed(items):
                stack.append((item, (path, key), depth + 1))
        elif kind is _NotANumber:
            shown = value.spelling if len(value.spelling) <= 24 else value.spelling[:23] + "…"
            if shown.lstrip("-") in ("NaN", "Infinity"):
                return f"{shown} at {_linked_path(path)}: JSON numbers are finite"
            return (
                f"{shown} at {_linked_path(path)}: the number is too large (it would be infinite)"
            )
        elif strings and kind is str and _SURROGATE_CHAR.search(value):
            return f"a lone surrogate at {_linked_path(path)}: {_surrogate(value)}"
    return None


def _surrogate(text: str) -> str:
    found = _SURROGATE_CHAR.search(text)
    code = ord(found.group()) if found else 0
    return f"\\u{code:04x} is half of a UTF-16 pair, not text"


def _linked_path(path: Any, limit: int = 120) -> str:
    """``((None, 'steps'), 0)`` -> ``steps[0]``; the top level is ``the top level``."""
    parts: list[int | str] = []
    while path is not None:
        path, key = path
        parts.append(key)
    if not parts:
        return "the top level"
    text = _json_path(tuple(reversed(parts)))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_scenario(text: str, source: str = "<text>") -> Scenario:
    """Parse scenario JSON text; ``source`` names the file in error messages."""
    try:
        data = parse_json(text)
    except JSONProblem as exc:
        raise ScenarioError(source, [str(exc)]) from None
    if not isinstance(data, dict):
        raise ScenarioError(source, [f"a scenario is a JSON object, got {_json_type(data)}"])
    try:
        return Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(source, _readable_errors(exc)) from None


def load_scenario(path: str | Path) -> Scenario:
    """Read and parse a scenario file (UTF-8). A missing file raises ``OSError``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError(
            str(path), [f"not UTF-8 text ({exc.reason} at byte {exc.start})"]
        ) from None
    return parse_scenario(text, source=str(path))


def dump_scenario(scenario: Scenario) -> str:
    """Pretty, stable JSON for a scenario (field order of the models, 2-space indent).

    Unset expectation fields, null contexts, ``refire: false`` and the
    ``append`` a ``text`` step derives are left out so a saved file reads like
    a hand-written one; ``buffer`` and ``append`` are written
    verbatim. ``parse_scenario(dump_scenario(s)) == s`` for every scenario; one
    that could not be read back (nested deeper than :data:`MAX_JSON_DEPTH`
    once wrapped in steps, holding ``NaN`` or a lone surrogate given by a
    caller) raises :class:`ScenarioError` instead of writing it.
    """
    data = scenario.model_dump(mode="json")
    if data["context"] is None:
        del data["context"]
    for step in data["steps"]:
        if step["context"] is None:
            del step["context"]
        if not step["refire"]:
            del step["refire"]
        if step["text"] is None:
            del step["text"]
        else:  # the append is what the text makes: write the text only
            step["text"] = {k: v for k, v in step["text"].items() if v is not None}
            del step["append"]
    data["expect"] = [_without_nulls(expectation) for expectation in data["expect"]]
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError as exc:  # NaN or Infinity given by a caller (files cannot hold them)
        raise ScenarioError(scenario.name, [f"cannot be written as JSON: {exc}"]) from None
    try:
        parse_json(text)  # what is written must read back (depth, surrogates)
    except JSONProblem as exc:
        raise ScenarioError(scenario.name, [f"would not read back: {exc}"]) from None
    return text


def _without_nulls(expectation: dict[str, Any]) -> dict[str, Any]:
    """An expectation as written by hand: unset fields (and unset provider fields) left out."""
    out = {field: value for field, value in expectation.items() if value is not None}
    if "provider" in out:
        out["provider"] = {k: v for k, v in out["provider"].items() if v is not None}
    return out


def scenario_schema_json() -> str:
    """The JSON Schema of a scenario file, as committed in ``docs/scenario.schema.json``."""
    schema = Scenario.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "FlowDrop buffer inspector scenario"
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def json_error_text(exc: json.JSONDecodeError, *, column_only: bool = False) -> str:
    """``not JSON (Expecting value at line 3, column 17)``: the parser's reason and its place.

    ``column_only`` leaves the line out, for callers that name the line themselves (JSONL).
    """
    place = f"column {exc.colno}" if column_only else f"line {exc.lineno}, column {exc.colno}"
    reason = exc.msg if exc.msg.endswith(" at") else f"{exc.msg} at"
    return f"not JSON ({reason} {place})"


def _clipped(value: Any, limit: int = 200) -> str:
    """``value`` as JSON for a message, clipped so a huge input cannot flood it."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json_type(value: Any) -> str:
    """The JSON name of a value's type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _json_path(loc: tuple[int | str, ...]) -> str:
    """``('steps', 0, 'apend')`` -> ``steps[0].apend``.

    A key that is not a plain name (spaces, dots, brackets, invisible or
    non-ASCII characters) is written as a quoted, escaped string,
    ``context["user\\u200bid"]``, so a path always reads back unambiguously
    and never carries a control character or a lone surrogate into a message.
    """
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{json.dumps(str(part))}]"
    return out


def _readable_errors(exc: ValidationError) -> list[str]:
    """Turn pydantic errors into ``path: problem`` lines a person can act on."""
    lines: list[str] = []
    for error in exc.errors(include_url=False):
        kind = error["type"]
        if kind == "extra_forbidden":
            problem = "unknown field"
        elif kind == "missing":
            problem = "missing required field"
        else:
            problem = error["msg"]
            if problem.startswith("Value error, "):
                problem = problem.removeprefix("Value error, ")
            else:
                problem = problem.replace("Input should", "should", 1)
                shown = json.dumps(error.get("input"), ensure_ascii=False, default=str)
                if len(shown) > 60:
                    shown = shown[:57] + "..."
                problem = f"{problem}, got {shown}"
        path = _json_path(tuple(error["loc"]))
        lines.append(f"{path}: {problem}" if path else problem)
    return lines
