"""A bounded fuzz of the CLI and the library's entry points.

The sample files are mutated (a value replaced by any JSON value or a hostile
string, a key deleted, text cut or spliced with ``NaN``, a lone surrogate or
deep nesting) and fed to every subcommand, in-process, and to the library's
public readers. What must hold for every input:

- the CLI returns 0, 1 or 2, prints no traceback, and an error names the file;
  its JSON output is strict JSON (no ``NaN`` / ``Infinity``);
- each entry point raises only its documented error type.

Runs are derandomized (the same inputs on every machine and run), a few
hundred examples in all, well under a minute.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowdrop_core._ids import read_id, usable_id
from flowdrop_core.cli import INTERNAL_ERROR, main
from flowdrop_core.context import ScopeResolution, resolve_scope
from flowdrop_core.importers import ConversationFormatError, parse_conversation
from flowdrop_core.importers.paste import InputProblem, parse_pasted
from flowdrop_core.scenario import SCOPES, Scenario, ScenarioError, parse_scenario
from flowdrop_core.text import text_to_message

ROOT = Path(__file__).resolve().parents[2]
SCENARIO_FILES = sorted((ROOT / "sample_data").glob("*.json"))
RECORDING_FILES = sorted(
    path
    for path in (ROOT / "sample_data" / "imports").glob("*")
    if path.suffix in (".json", ".jsonl")
)
TEXTS = {path.name: path.read_text(encoding="utf-8") for path in SCENARIO_FILES + RECORDING_FILES}

FUZZ = settings(
    max_examples=120,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Strings hostile-input testing found trouble with: invisible ids, number spellings, markup, roles.
HOSTILE = [
    "\u200b",
    "\ufeff",
    "\x00",
    "-1",
    "00",
    "0.0",
    "\uff10",
    "0",
    "",
    " ",
    "7",
    "user",
    "tool",
    "assistant",
    "system",
    "c1",
    "call_1",
    "\n\n![x](http://127.0.0.1:9/p.png)",
    "x" * 2_000,
]
KEYS = [
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "id",
    "type",
    "text",
    "function",
    "name",
    "arguments",
    "input",
    "metadata",
    "healed",
    "messages",
    "steps",
    "append",
    "context",
    "user_id",
    "session_id",
    "session_owner_id",
    "buffer",
    "config",
    "scope",
    "key",
    "max_messages",
    "storage",
    "expect",
    "count",
    "tool_use_id",
    "data",
    "kwargs",
]
#: Raw fragments spliced into a file's text: strict JSON must refuse each with a place.
SPLICES = ["NaN", "-Infinity", "1e309", '"\\ud800"', "[" * 150 + "]" * 150, "[" * 3_000, "{", '"']

scalars: st.SearchStrategy[Any] = (
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.sampled_from(HOSTILE)
)
scalars = scalars | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every JSON path in ``value`` (the top level is ``()``)."""
    out = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            out.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out.extend(_paths(item, (*path, index)))
    return out


def _mutated(data: st.DataObject, text: str) -> str:
    """``text`` with one structural or textual mutation drawn from ``data``."""
    kind = data.draw(
        st.sampled_from(["replace", "wrap", "wrap", "delete", "splice", "cut"]), label="mutation"
    )
    if kind == "cut":
        return text[: data.draw(st.integers(0, len(text)), label="cut at")]
    if kind == "splice":
        at = data.draw(st.integers(0, len(text)), label="splice at")
        return text[:at] + data.draw(st.sampled_from(SPLICES), label="splice") + text[at:]
    try:
        document = json.loads(text)
    except ValueError:  # JSONL: mutate one line as a document
        lines = text.splitlines() or [""]
        line = data.draw(st.integers(0, len(lines) - 1), label="line")
        try:
            lines[line] = _mutated_document(data, json.loads(lines[line]), kind)
        except ValueError:  # not a JSON line either: a text mutation instead
            lines[line] = lines[line][: data.draw(st.integers(0, len(lines[line])))]
        return "\n".join(lines) + "\n"
    return _mutated_document(data, document, kind)


def _mutated_document(data: st.DataObject, document: Any, kind: str) -> str:
    paths = _paths(document)
    path = paths[data.draw(st.integers(0, len(paths) - 1), label="path")]
    value = data.draw(json_values, label="value")
    if not path:
        document = [document] if kind == "wrap" else value
    else:
        parent = document
        for part in path[:-1]:
            parent = parent[part]
        if kind == "delete":
            del parent[path[-1]]
        elif kind == "wrap":  # the same value as a list or an object: the wrong JSON type
            old = parent[path[-1]]
            parent[path[-1]] = data.draw(st.sampled_from([[old], {"x": old}]), label="wrapped")
        else:
            parent[path[-1]] = value
    return json.dumps(document, ensure_ascii=data.draw(st.booleans(), label="ascii"))


def _strict(line: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in JSON output: {line[:200]}")

    return json.loads(line, parse_constant=refuse)


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def _check_cli(argv: list[str], path: Path) -> None:
    code, out, err = _run_cli(argv)
    assert code in (0, 1, 2), (argv, code, err)
    assert "Traceback" not in err, err
    assert INTERNAL_ERROR not in err, err
    if code == 2 and err.startswith("flowdrop-buffer: error:"):
        assert str(path) in err, err
    if code == 0 and "--json" in argv:  # strict JSON out: one object per line, or one object
        documents = out.splitlines() if argv[0] == "replay" else [out]
        for document in documents:
            _strict(document)


@st.composite
def _replay_options(draw: st.DrawFn, save: Path) -> list[str]:
    options: list[str] = []
    if draw(st.booleans()):
        options.append("--json")
    if draw(st.booleans()):
        options += ["--scope", draw(st.sampled_from(SCOPES))]
    for option in ("--user-id", "--session-id", "--session-owner-id"):
        if draw(st.integers(0, 3)) == 0:
            options += [option, draw(st.sampled_from([h for h in HOSTILE if len(h) < 50]))]
    if draw(st.booleans()):
        options += ["--refire", draw(st.sampled_from(["none", "steps", "results"]))]
    if draw(st.integers(0, 3)) == 0:
        options += ["--max-messages", str(draw(st.integers(0, 4)))]
    if draw(st.integers(0, 3)) == 0:
        options += ["--save", str(save)]
    return options


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_cli_on_mutated_scenarios(fuzz_dir: Path, data: st.DataObject) -> None:
    """Scenario files, read as scenarios (``--format scenario``, and ``check``)."""
    name = data.draw(st.sampled_from([p.name for p in SCENARIO_FILES]), label="file")
    path = fuzz_dir / name
    path.write_text(_mutated(data, TEXTS[name]), encoding="utf-8")
    command = data.draw(st.sampled_from(["replay", "check", "normalize", "lint"]), label="cmd")
    argv = [command, str(path)]
    if command != "check":
        argv += ["--format", "scenario"]
    if command == "replay":
        argv += data.draw(_replay_options(fuzz_dir / "saved.json"), label="options")
    elif command == "normalize" and data.draw(st.booleans()):
        argv.append("--json")
    _check_cli(argv, path)


@FUZZ
@given(data=st.data())
def test_cli_on_mutated_recordings(fuzz_dir: Path, data: st.DataObject) -> None:
    """Every sample, format detected: recordings go through the importers."""
    name = data.draw(st.sampled_from(sorted(TEXTS)), label="file")
    path = fuzz_dir / ("rec-" + name)
    path.write_text(_mutated(data, TEXTS[name]), encoding="utf-8")
    command = data.draw(st.sampled_from(["replay", "normalize", "lint"]), label="cmd")
    argv = [command, str(path)]
    if command == "replay":
        argv += data.draw(st.sampled_from([[], ["--per", "turn"]]), label="per")
        argv += data.draw(_replay_options(fuzz_dir / "saved.json"), label="options")
    _check_cli(argv, path)


@FUZZ
@given(data=st.data())
def test_parse_scenario_raises_only_scenario_error(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from([p.name for p in SCENARIO_FILES]), label="file")
    text = _mutated(data, TEXTS[name])
    try:
        scenario = parse_scenario(text, source=name)
    except ScenarioError as exc:
        assert str(exc).startswith(f"{name}: ")
    else:
        assert isinstance(scenario, Scenario)


@FUZZ
@given(text=json_values, role=json_values, call_id=json_values)
def test_text_to_message_raises_only_value_error(text: Any, role: Any, call_id: Any) -> None:
    try:
        message = text_to_message(text, role, call_id)
    except ValueError:
        assert not isinstance(text, str | None)
        return
    assert message is None or message["role"] in ("user", "assistant", "system", "tool")


@FUZZ
@given(value=json_values | st.text(), scope=st.sampled_from(SCOPES), field=st.sampled_from(KEYS))
def test_ids_and_scopes_never_raise_and_ids_are_canonical(
    value: Any, scope: str, field: str
) -> None:
    """GR-MEM's usable-id rule: total, idempotent, and a usable id has no invisible edge."""
    ident = usable_id(value)
    reading = read_id(value)
    assert reading.id == ident and (ident is None) == (reading.problem is not None)
    if ident is not None:
        assert ident == ident.strip() and usable_id(ident) == ident
    assert isinstance(resolve_scope(scope, {field: value}), ScopeResolution)


@FUZZ
@given(data=st.data())
def test_importers_and_paste_raise_only_their_errors(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(TEXTS)), label="file")
    text = _mutated(data, TEXTS[name])
    with contextlib.suppress(ConversationFormatError):
        parse_conversation(text, source_name=name)
    with contextlib.suppress(InputProblem):
        parse_pasted(text)


def test_otel_span_without_attributes_is_read_as_carrying_no_messages() -> None:
    """Found by this fuzz: a span without ``attributes`` raised ``KeyError``."""
    document = json.loads(TEXTS["otel_genai_otlp.json"])
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    del spans[0]["attributes"]
    try:
        parse_conversation(json.dumps(document), source_name="otel.json")
    except ConversationFormatError as err:  # only when no other span carries messages
        assert len(spans) == 1 and "no span carries" in str(err)
    spans[0]["attributes"] = "oops"
    with pytest.raises(ConversationFormatError, match=r"attributes: expected a list or object"):
        parse_conversation(json.dumps(document), source_name="otel.json")
