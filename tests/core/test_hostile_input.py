"""Hostile and careless input (library and CLI parts), each a test that failed on the code before.

Hostile and careless input: every bad value is a clear, located error of a
documented type, never a traceback; nesting is bounded; JSON in and out is
strict; identities cannot be faked by spelling (GR-MEM's usable-id rule,
MEM-6, MEM-11, MEM-13); the CLI's user scope works on a recording.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core import AppendResult, append_messages
from flowdrop_core._ids import read_id, usable_id
from flowdrop_core.cli import INTERNAL_ERROR, main
from flowdrop_core.context import resolve_scope
from flowdrop_core.importers import ConversationFormatError, parse_conversation
from flowdrop_core.importers.paste import InputProblem, parse_pasted
from flowdrop_core.scenario import (
    MAX_JSON_DEPTH,
    JSONProblem,
    ScenarioError,
    dump_scenario,
    parse_json,
    parse_scenario,
)
from flowdrop_core.text import text_to_message


def after(res: AppendResult) -> list[dict[str, Any]]:
    """The buffer after a pure append (``append_messages`` always returns it)."""
    assert res.messages is not None
    return res.messages


ROOT = Path(__file__).resolve().parents[2]
OPENAI_CHAT = ROOT / "sample_data" / "imports" / "openai_chat.json"


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def scenario_text(append: str, context: str = '{"session_id": "s"}') -> str:
    """A one-step scenario whose append is the raw JSON text ``append``."""
    return f'{{"name": "h", "context": {context}, "steps": [{{"append": {append}}}]}}'


def nested(depth: int) -> str:
    """A JSON list nested ``depth`` levels deep around a string."""
    return "[" * depth + '"x"' + "]" * depth


# --------------------------------------------------------------------------- item 2: TypeErrors


@pytest.mark.parametrize("role", [{"x": 1}, ["user"], 7, None, True])
def test_text_to_message_reads_any_json_role_as_a_role_or_user(role: Any) -> None:
    """Was: ``TypeError: unhashable type`` for an object or list role (MEM-16)."""
    assert text_to_message("hi", role) == {"role": "user", "content": "hi"}


@pytest.mark.parametrize("text", [{"x": 1}, ["hi"], 7, True, 1.5])
def test_text_to_message_refuses_non_text_with_a_value_error(text: Any) -> None:
    with pytest.raises(ValueError, match="text must be a string or null"):
        text_to_message(text)


def test_scenario_step_whose_text_role_is_an_object_parses() -> None:
    """Was: ``TypeError`` out of ``parse_scenario`` (a fuzzed input, reduced)."""
    scenario = parse_scenario(
        '{"name": "t", "steps": [{"text": {"text": "hi", "role": {"x": 1}}}]}', "t.json"
    )
    assert scenario.steps[0].append == [{"role": "user", "content": "hi"}]


def test_scenario_step_whose_text_is_an_object_is_a_located_scenario_error() -> None:
    with pytest.raises(ScenarioError) as info:
        parse_scenario('{"name": "t", "steps": [{"text": {"text": {"a": 1}}}]}', "t.json")
    assert str(info.value).startswith("t.json: steps[0].text.text: ")


@pytest.mark.parametrize(
    "text",
    [
        '{"input": [{"type": {"x": 1}}]}',
        '[{"role": "user", "content": [{"type": ["text"], "text": "hi"}]}]',
    ],
    ids=["responses-type-object", "chat-part-type-list"],
)
def test_cli_on_a_type_error_input_exits_2_naming_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    """Was: a traceback and exit 1. Now one line naming the file, exit 2, whatever the layer."""
    path = write(tmp_path, "rec.json", text)
    for command in ("replay", "normalize", "lint"):
        code, out, err = run(capsys, command, path)
        assert (code, out) == (2, "")
        assert err.startswith("flowdrop-buffer: error: ") and str(path) in err


@pytest.mark.parametrize(
    "text",
    [
        '{"input": [{"type": {"x": 1}}]}',
        '[{"role": "user", "content": [{"type": ["text"], "text": "hi"}]}]',
    ],
    ids=["responses-type-object", "chat-part-type-list"],
)
def test_importers_raise_only_their_documented_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str
) -> None:
    """Imported (with notes) or refused with the documented error; never a ``TypeError``."""
    with contextlib.suppress(ConversationFormatError):
        parse_conversation(text, source_name="rec.json")
    with contextlib.suppress(InputProblem):
        parse_pasted(text)
    path = write(tmp_path, "rec.json", text)
    _, _, err = run(capsys, "replay", path)
    assert INTERNAL_ERROR not in err


# --------------------------------------------------------------------------- item 3: depth


@pytest.mark.parametrize("depth", [300, 600, 5000])
def test_deep_scenario_is_a_located_error_not_a_recursion_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: int
) -> None:
    """Was: ``RecursionError`` traceback at ~600 with ``--refire steps``; at 300 ``--save``
    failed with only "Maximum serialization depth exceeded"."""
    path = write(
        tmp_path, "deep.json", scenario_text('{"role": "user", "content": ' + nested(depth) + "}")
    )
    saved = tmp_path / "saved.json"
    code, out, err = run(capsys, "replay", path, "--refire", "steps", "--save", saved, "--json")
    assert (code, out) == (2, "")
    assert err.startswith(f"flowdrop-buffer: error: {path}: not JSON (nested too deeply): ")
    assert f"more than {MAX_JSON_DEPTH} levels at " in err
    assert not saved.exists()


def test_deep_error_names_the_json_path_when_the_parser_got_through(tmp_path: Path) -> None:
    text = scenario_text('{"role": "user", "content": ' + nested(MAX_JSON_DEPTH) + "}")
    with pytest.raises(ScenarioError) as info:
        parse_scenario(text, "deep.json")
    assert str(info.value).startswith(
        "deep.json: not JSON (nested too deeply): more than 100 levels at steps[0].append.content[0]"
    )


def test_input_just_under_the_limit_replays_refires_saves_and_reads_back(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the scenario's own levels (root, steps, step, append) plus the content
    content = nested(MAX_JSON_DEPTH - 5)
    path = write(
        tmp_path, "deep.json", scenario_text('{"role": "user", "content": ' + content + "}")
    )
    saved = tmp_path / "saved.json"
    code, _, err = run(capsys, "replay", path, "--refire", "steps", "--save", saved, "--json")
    assert code == 0, err
    code, out, _ = run(capsys, "check", saved)
    assert (code, out) == (0, "1 passed, 0 failed\n")


def test_save_that_would_not_read_back_is_a_clear_error(tmp_path: Path) -> None:
    """A recording at the limit gains the scenario's levels when saved: refused, not written."""
    deep: Any = "x"
    for _ in range(MAX_JSON_DEPTH - 1):
        deep = [deep]
    scenario = parse_scenario(scenario_text("[]"), "s.json").model_copy()
    steps = [scenario.steps[0].model_copy(update={"append": [{"role": "user", "content": deep}]})]
    with pytest.raises(
        ScenarioError, match="would not read back: not JSON \\(nested too deeply\\)"
    ):
        dump_scenario(scenario.model_copy(update={"steps": steps}))


# --------------------------------------------------------------------------- item 7: strict JSON


@pytest.mark.parametrize(
    ("value", "shown"),
    [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity"), ("1e309", "1e309")],
)
@pytest.mark.parametrize("command", ["replay", "check", "normalize", "lint"])
def test_nan_and_infinity_are_refused_with_file_and_json_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, value: str, shown: str
) -> None:
    """Was: accepted, and written into ``--json`` output as ``NaN`` (then not JSON)."""
    append = '{"role": "user", "content": "hi", "score": ' + value + "}"
    path = write(tmp_path, "nan.json", scenario_text(append))
    code, out, err = run(capsys, command, path)
    assert code == 2
    assert f"{path}: not JSON ({shown} at steps[0].append.score: " in err
    assert "NaN" not in out and "Infinity" not in out


def test_json_output_has_no_nan_even_when_a_caller_passes_one() -> None:
    scenario = parse_scenario(scenario_text('{"role": "user", "content": "x"}'), "s.json")
    step = scenario.steps[0].model_copy(
        update={"append": {"role": "user", "content": float("nan")}}
    )
    with pytest.raises(ScenarioError, match="cannot be written as JSON"):
        dump_scenario(scenario.model_copy(update={"steps": [step]}))


@pytest.mark.parametrize(
    ("escape", "where"),
    [
        ('"\\ud800"', "steps[0].append.content"),
        ('"ok \\udfff"', "steps[0].append.content"),
        ('[{"type": "text", "text": "\\udbff"}]', "steps[0].append.content[0].text"),
    ],
)
@pytest.mark.parametrize("command", ["replay", "check"])
def test_lone_surrogate_is_refused_with_file_and_json_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, escape: str, where: str
) -> None:
    """Was: ``UnicodeEncodeError`` from the SQLite store, with no file or field named."""
    append = '{"role": "user", "content": ' + escape + "}"
    text = scenario_text(append).replace(
        '"name": "h"', '"name": "h", "config": {"storage": "sqlite"}'
    )
    path = write(tmp_path, "sur.json", text)
    code, _, err = run(capsys, command, path)
    assert code == 2
    assert f"{path}: not JSON (a lone surrogate at {where}: " in err


def test_a_surrogate_pair_is_text_and_replays(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write(
        tmp_path, "pair.json", scenario_text('{"role": "user", "content": "\\ud83d\\ude00"}')
    )
    code, out, _ = run(capsys, "replay", path, "--json")
    assert code == 0 and "\U0001f600" in out  # the pair decoded to one character


def test_surrogate_in_a_key_or_a_cli_option_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pytest.raises(JSONProblem, match=r'a lone surrogate in the key at \["\\udc00k"\]'):
        parse_json('{"\\udc00k": 1}')
    path = write(tmp_path, "ok.json", scenario_text('{"role": "user", "content": "x"}'))
    code, _, err = run(capsys, "replay", path, "--user-id", "\udcff")
    assert code == 2 and "--user-id: not UTF-8 text" in err


# --------------------------------------------------------------------------- item 6: identities


@pytest.mark.parametrize("uid", ["\u200b", "\ufeff", "\x00", " \u200b\u2060 ", "\u3164"])
def test_invisible_ids_are_unusable_with_the_reason(uid: str) -> None:
    """Was: accepted as real, distinct user ids."""
    res = resolve_scope("user", {"user_id": uid})
    assert res.refused and res.resolved_scope_id == ""
    assert "made only of invisible characters" in (res.reason or "")


@pytest.mark.parametrize("uid", ["-1", "00", "0.0", "\uff10", "-0", " +0 ", "7.5"])
def test_numeric_spellings_follow_the_number_rule(uid: str) -> None:
    """Was: ``"-1"`` accepted while ``-1`` was refused; ``"00"``, ``"0.0"``, fullwidth ``"\\uff10"`` accepted."""
    res = resolve_scope("user", {"user_id": uid})
    assert res.refused, res
    assert "spells a number that is" in (res.reason or "")


def test_every_spelling_of_seven_is_one_identity() -> None:
    spellings: list[Any] = [7, 7.0, "7", " 7 ", "\uff17", "\u200b7"]
    assert {resolve_scope("user", {"user_id": s}).resolved_scope_id for s in spellings} == {"7"}
    assert {resolve_scope("session", {"session_id": s}).resolved_scope_id for s in spellings} == {
        "7"
    }


def test_other_number_spellings_are_ids_of_their_own() -> None:
    """GR-MEM compares ids as trimmed strings: ``"07"`` is not ``"7"``, so two users never merge."""
    spellings = ["07", "+7", "7.0", "7e0"]
    resolved = [resolve_scope("user", {"user_id": s}).resolved_scope_id for s in spellings]
    assert resolved == spellings


def test_an_invisible_character_inside_an_id_cannot_fake_another() -> None:
    reading = read_id("ad\u200bmin")
    assert reading.id is None and "U+200B at position 2" in (reading.problem or "")
    assert usable_id("admin") == "admin"
    # a lone combining mark shows nothing either; NFKC makes a no-break space a space
    assert "combining marks (U+0301)" in (read_id("\u0301").problem or "")
    assert usable_id("a\u00a0b") == usable_id("a b") == "a b"


def test_call_ids_follow_the_same_rule() -> None:
    """MEM-11: a call declared as ``"7"`` is answered by ``7`` and fullwidth 7, not by ``"07"``."""
    turn = {"role": "assistant", "content": "", "tool_calls": [{"id": "7", "type": "function"}]}
    result = {"role": "tool", "content": "r", "tool_call_id": 7}
    first = append_messages([], [turn, result])
    again = append_messages(
        after(first), {"role": "tool", "content": "again", "tool_call_id": "\uff17"}
    )
    assert (again.appended, again.count) == (0, 2)
    other = append_messages(after(first), {"role": "tool", "content": "x", "tool_call_id": "07"})
    assert (other.appended, other.count) == (1, 3)
    idless = append_messages([], {"role": "tool", "content": "x", "tool_call_id": "\u200b"})
    assert "idless_result" in [e.kind for e in idless.events]


# --------------------------------------------------------------------------- item 8: CLI user scope


def test_replay_of_a_recording_under_the_user_scope_uses_the_given_user(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Was: every step refused, because an implicit session made MEM-8 take a missing owner."""
    code, out, err = run(
        capsys, "replay", OPENAI_CHAT, "--scope", "user", "--user-id", "7", "--json"
    )
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and err == ""
    assert {(line["refused"], line["resolved_scope_id"]) for line in lines} == {(False, "7")}


def test_a_session_with_an_owner_stores_under_the_owner(capsys: pytest.CaptureFixture[str]) -> None:
    """MEM-8 stays: a session drives the run, so the owner (not --user-id) is the identity."""
    _, out, _ = run(
        capsys, "replay", OPENAI_CHAT, "--scope", "user", "--user-id", "7",
        "--session-id", "s", "--session-owner-id", "9", "--json",
    )  # fmt: skip
    assert {json.loads(line)["resolved_scope_id"] for line in out.splitlines()} == {"9"}
    _, out, err = run(
        capsys,
        "replay",
        OPENAI_CHAT,
        "--scope",
        "user",
        "--user-id",
        "7",
        "--session-id",
        "s",
        "--json",
    )
    assert all(json.loads(line)["refused"] for line in out.splitlines()) and "MEM-8" in err


def test_replay_help_says_what_context_a_replay_runs_under(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["replay", "--help"])
    out = capsys.readouterr().out
    assert code == 0
    assert "context of a replay:" in out and 'session "replay"' in out and "MEM-8" in out


# --------------------------------------------------------------------------- terminal output


@pytest.mark.parametrize("command", ["replay", "normalize", "lint"])
def test_terminal_output_shows_control_characters_instead_of_obeying_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """Data is never markup, on a terminal too: ESC sequences and bidi overrides are escaped."""
    append = (
        '[{"role": "assistant", "content": "", "tool_calls": [{"id": "c\\u202e1"}]},'
        ' {"role": "user", "content": "\\u001b[2J\\u001b]0;owned\\u0007 hi"}]'
    )
    path = write(tmp_path, "esc.json", scenario_text(append))
    code, out, err = run(capsys, command, path)
    assert code in (0, 1)
    for text in (out, err):
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    if command != "lint":  # lint quotes no content
        assert "\\x1b[2J" in out
