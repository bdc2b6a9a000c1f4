"""The ``flowdrop-buffer`` command line, run in-process and once as a process.

Every command's output is checked on the sample data, every bad-input path
exits 2 with its exact message on stderr and no traceback, and a recorded
conversation survives the round trip replay -> saved scenario -> replay.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core import cli
from flowdrop_core.cli import Progress, main
from flowdrop_core.importers import FORMATS, load_conversation
from flowdrop_core.replay import replay, replay_conversation
from flowdrop_core.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_data"
SCENARIOS = sorted(SAMPLES.glob("*.json"))
OPENAI_CHAT = SAMPLES / "imports" / "openai_chat.json"
ANTHROPIC = SAMPLES / "imports" / "anthropic_messages.json"
JSON_FIELDS = {
    "step",
    "label",
    "incoming",
    "count",
    "appended",
    "appended_any",
    "refused",
    "resolved_scope_id",
    "scope",
    "key",
    "events",
    "messages",
}


def run(capsys: pytest.CaptureFixture[str], *argv: Any) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def write(tmp_path: Path, name: str, data: Any) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- replay: table


def test_replay_table_marks_the_mem14_row(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "replay", SAMPLES / "mem-14-full-window.json")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "mem-14-full-window: A new message arriving at a full three-message window"
    assert lines[1] == (
        'scope session, key chat_history, max_messages 3, storage memory; context {"session_id": "demo"}'
    )
    header = lines[3].split()
    assert header[:6] == ["step", "label", "incoming", "count", "Δcount", "appended"]
    assert header[-2:] == ["id", "MEM-14"]
    row = lines[5]
    assert row.split()[0] == "*1"
    assert "user: four" in row and row.endswith("hidden append")
    assert row.split()[-11:] == [
        *("3", "+0", "1", "yes", "0", "0", "0", "1"),
        *("demo", "hidden", "append"),
    ]
    assert lines[-2] == (
        "1 step: 1 appended, 0 duplicates dropped, 0 placeholders replaced, "
        "0 placeholders inserted, 1 evicted, 0 refused; 1 marked * (MEM-14)"
    )
    assert lines[-1].startswith("* MEM-14: the change in count does not show what was appended")


def test_replay_table_columns_align(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "replay", SAMPLES / "recorded-redelivery.json")
    assert code == 0
    table = out.splitlines()[3:16]  # header, rule, 11 rows
    assert len(table) == 13
    end = table[0].index("count") + len("count")  # right-aligned: digits end under the header
    for line in table[2:]:
        assert line[end - 1].isdigit() and line[end] == " "
    assert "9 appended, 5 duplicates dropped" in out


def test_replay_table_shows_refusals_and_warns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "replay", SAMPLES / "recorded-multi-user.json")
    assert code == 0
    refused = [line for line in out.splitlines() if "REFUSED" in line]
    assert len(refused) == 1 and "caller with user_id 0" in refused[0]
    assert err.startswith("flowdrop-buffer: warning: MEM-7: append of 'chat_history' refused")
    assert err.count("\n") == 1  # exactly one warning per refusal (MEM-7)


def test_replay_imported_conversation(capsys: pytest.CaptureFixture[str]) -> None:
    conv = load_conversation(OPENAI_CHAT)
    code, out, _ = run(capsys, "replay", OPENAI_CHAT)
    assert code == 0
    assert out.splitlines()[0].startswith("openai_chat: ")
    assert f"{len(conv.messages)} steps: " in out
    assert "messages[0]" in out  # labels are the origins in the file
    code, out, _ = run(capsys, "replay", OPENAI_CHAT, "--per", "turn")
    assert f"{len(conv.turns)} steps: " in out


# --------------------------------------------------------------------------- replay: --json


def test_replay_json_lines_carry_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLES / "recorded-crash-resume.json"
    code, out, _ = run(capsys, "replay", path, "--json", "--buffer")
    assert code == 0
    lines = json_lines(out)
    scenario = load_scenario(path)
    assert [line["step"] for line in lines] == list(range(1, len(scenario.steps) + 1))
    timeline = replay(scenario)
    for line, record in zip(lines, timeline.steps, strict=True):
        assert set(line) >= JSON_FIELDS
        assert line["label"] == record.label
        assert line["messages"] == timeline.buffer_after(record.step)
        assert all(e["reason"].startswith(e["rule"] + ":") for e in line["events"])
    healed = lines[3]
    assert (healed["count"], healed["appended"], healed["appended_any"]) == (5, 1, True)
    assert [e["kind"] for e in healed["events"]] == ["placeholder_inserted", "appended"]
    assert healed["messages"][3]["metadata"] == {"tool_call_id": "call_k7", "healed": True}
    assert (healed["scope"], healed["key"], healed["resolved_scope_id"]) == (
        "session",
        "chat_history",
        "demo",
    )


def test_replay_json_lines_carry_the_delta_not_the_buffer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --buffer a line has no buffer; its events rebuild it from the line before."""
    path = SAMPLES / "recorded-crash-resume.json"
    code, out, _ = run(capsys, "replay", path, "--json")
    assert code == 0
    timeline = replay(load_scenario(path))
    buffer = timeline.buffer_after(0)
    for line in json_lines(out):
        assert "messages" not in line
        for event in line["events"]:
            if event["kind"] in ("appended", "placeholder_inserted"):
                buffer.insert(event["position"], event["entry"])
            elif event["kind"] == "placeholder_replaced":
                buffer[event["position"]] = event["entry"]
            elif event["kind"] == "evicted":
                del buffer[event["position"]]
        assert buffer == timeline.buffer_after(line["step"])
        assert len(buffer) == line["count"]


def test_replay_json_matches_the_timeline_serializer(capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI's --json is the library's Timeline.to_json_lines of the same replay."""
    code, out, _ = run(capsys, "replay", OPENAI_CHAT, "--json", "--max-messages", "4")
    assert code == 0
    conv = load_conversation(OPENAI_CHAT)
    timeline = replay_conversation(
        conv,
        config=load_scenario(SAMPLES / "mem-14-full-window.json").config.model_copy(
            update={"max_messages": 4}
        ),
    )
    expected = [json.loads(line) for line in timeline.to_json_lines()]
    got = json_lines(out)
    for line in expected:  # the CLI names a conversation after its file stem
        line.pop("label")
    for line in got:
        line.pop("label")
    assert got == expected


# --------------------------------------------------------------------------- replay: options


def test_options_override_the_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLES / "mem-14-full-window.json"
    _, out, _ = run(capsys, "replay", path, "--json", "--max-messages", "0")
    (line,) = json_lines(out)
    assert (line["count"], line["appended"], line["mem14_flag"]) == (4, 1, None)
    code, out, err = run(capsys, "replay", path, "--json", "--scope", "user", "--user-id", "7")
    # The file's session "demo" drives the run and names no owner, so MEM-8
    # refuses the user scope; its starting buffer would have nowhere to go.
    assert (code, out) == (2, "")
    assert "starting buffer has no slot" in err and "MEM-8" in err
    _, out, _ = run(capsys, "replay", path, "--json", "--scope", "global")
    (line,) = json_lines(out)
    assert (line["scope"], line["resolved_scope_id"], line["count"]) == ("global", "", 3)
    _, out, _ = run(capsys, "replay", path, "--json", "--key", "notes")
    assert json_lines(out)[0]["key"] == "notes"


def test_session_id_option_applies_to_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    """The file's steps set session_id null and "0"; --session-id replaces them all."""
    path = SAMPLES / "mem-7-mem-13-refused-session-read.json"
    _, out, _ = run(capsys, "replay", path, "--json")
    assert [line["refused"] for line in json_lines(out)] == [True, True, False]
    code, out, err = run(capsys, "replay", path, "--json", "--session-id", "other")
    assert code == 0 and err == ""
    lines = json_lines(out)
    assert [(line["refused"], line["resolved_scope_id"], line["count"]) for line in lines] == [
        (False, "other", 2)
    ] * 3


def test_user_id_option_on_a_conversation(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, "replay", OPENAI_CHAT, "--json", "--scope", "user", "--user-id", "0")
    lines = json_lines(out)
    assert all(line["refused"] and line["count"] == 0 for line in lines)
    _, out, _ = run(capsys, "replay", OPENAI_CHAT, "--json", "--session-id", "s-9")
    assert {line["resolved_scope_id"] for line in json_lines(out)} == {"s-9"}


def test_context_options_keep_every_other_step_field(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """--session-id / --user-id change only the steps' contexts: refire and labels survive."""
    steps = [
        {"label": "first", "append": {"role": "user", "content": "hi"}},
        {
            "label": "again",
            "append": {"role": "user", "content": "hi"},
            "context": {"session_id": "0", "node_id": "n1"},
            "refire": True,
        },
        {"label": "and again", "append": {"role": "user", "content": "hi"}, "refire": True},
    ]
    path = write(tmp_path, "saved.json", {"name": "saved", "steps": steps})
    for option in ("--session-id", "--user-id"):
        code, out, _ = run(capsys, "replay", path, "--json", option, "7")
        assert code == 0
        lines = json_lines(out)
        assert [(line["label"], line["refire"]) for line in lines] == [
            ("first", False),
            ("again", True),
            ("and again", True),
        ]
    _, out, _ = run(capsys, "replay", path, "--json", "--session-id", "s-1")
    assert [line["resolved_scope_id"] for line in json_lines(out)] == ["s-1"] * 3
    saved = tmp_path / "again.json"
    run(capsys, "replay", path, "--session-id", "s-1", "--save", saved)
    reloaded = load_scenario(saved)
    assert [step.refire for step in reloaded.steps] == [False, True, True]
    assert (reloaded.steps[1].context or {}).get("node_id") == "n1"  # the step's own key stays


def test_refire_options(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLES / "recorded-redelivery.json"
    _, out, _ = run(capsys, "replay", path, "--json", "--refire")
    lines = json_lines(out)
    assert len(lines) == 22 and [line["refire"] for line in lines] == [False] * 11 + [True] * 11
    assert all(line["label"].startswith("re-fire: ") for line in lines[11:])
    _, out, _ = run(capsys, "replay", path, "--json", "--refire", "results")
    lines = json_lines(out)
    refired = [line for line in lines if line["refire"]]
    assert len(refired) == 5  # each step carrying a tool result, sent again right after it
    assert all(line["appended"] == 0 for line in refired)
    _, out, _ = run(capsys, "replay", path, "--json", "--refire", "none")
    assert len(out.splitlines()) == 11


# --------------------------------------------------------------------------- check


def test_check_passes_on_every_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "check", *SCENARIOS)
    assert code == 0 and err == ""
    assert out.splitlines() == [f"{len(SCENARIOS)} passed, 0 failed"]
    code, out, _ = run(capsys, "check", "-v", SCENARIOS[0])
    assert out.splitlines() == [f"ok {SCENARIOS[0]} (2 steps)", "1 passed, 0 failed"]


def test_check_prints_each_mismatch_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    data = json.loads((SAMPLES / "mem-14-full-window.json").read_text())
    data["name"] = "wrong-window"
    data["expect"] = [{"count": 4, "appended": 1, "appended_any": False}]
    wrong = write(tmp_path, "wrong.json", data)
    code, out, err = run(capsys, "check", SAMPLES / "mem-3-heal-on-user-turn.json", wrong)
    assert code == 1 and err == ""
    assert out.splitlines() == [
        "wrong-window: step 1: count: expected 4, got 3",
        "wrong-window: step 1: appended_any: expected false, got true",
        "1 passed, 1 failed",
    ]


def test_check_reports_unreadable_files_and_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = write(tmp_path, "bad.json", '{"name": "x", "steps": [')
    code, out, err = run(capsys, "check", SAMPLES / "mem-14-full-window.json", bad, OPENAI_CHAT)
    assert code == 2
    assert err.splitlines() == [
        f"flowdrop-buffer: error: {bad}: not JSON (Expecting value at line 1, column 25)",
        f"flowdrop-buffer: error: {OPENAI_CHAT}: not a scenario (no 'steps'); check needs a "
        "scenario file with expect (replay PATH --save SCENARIO makes one from a recording)",
    ]
    assert out.splitlines()[-1] == "1 passed, 0 failed, 2 errors"


# --------------------------------------------------------------------------- normalize / lint


def test_normalize_text(capsys: pytest.CaptureFixture[str]) -> None:
    path = SAMPLES / "mem-5-result-before-call.json"
    code, out, _ = run(capsys, "normalize", path)
    assert code == 0
    assert out.splitlines() == [
        f"MEM-5 provider view of {path}: 2 entries in, 2 messages out, 1 dropped",
        "",
        '  0  assistant calls c1 (search) ""',
        "  1  tool      [c1] Tool call was interrupted; no result.",
        "",
        "dropped (1):",
        "  steps[0].append: dropped: result for call 'c1' with no call declared before it",
        "repaired (1):",
        "  steps[1].append: call 'c1' has no result; a synthetic interrupted result "
        "was placed right after its turn",
    ]


def test_normalize_json_of_zero_ids(capsys: pytest.CaptureFixture[str]) -> None:
    """GR-MEM's MEM-5 example: a call and its result both spelled "0" normalize to []."""
    code, out, _ = run(capsys, "normalize", SAMPLES / "mem-5-zero-ids.json", "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["entries"], data["messages"], data["dropped"]) == (2, [], 3)
    assert [(d["origin"], d["call_index"], d["kind"]) for d in data["drops"]] == [
        ("steps[0].append", 0, "idless_call"),
        ("steps[0].append", None, "empty_turn"),
        ("steps[1].append", None, "idless_result"),
    ]


def test_normalize_text_of_zero_ids_locates_its_three_drops(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The call, the turn it leaves empty and the result, each with its location."""
    path = SAMPLES / "mem-5-zero-ids.json"
    code, out, _ = run(capsys, "normalize", path)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"MEM-5 provider view of {path}: 2 entries in, 0 messages out, 3 dropped"
    start = lines.index("dropped (3):")
    assert lines[start + 1 : start + 4] == [
        "  steps[0].append: dropped: tool_calls[0] has no usable id "
        "(MEM-11: blank and '0' are no id)",
        "  steps[0].append: dropped: assistant turn with no content and no usable tool call",
        "  steps[1].append: dropped: tool result with no usable tool_call_id (MEM-11)",
    ]


def test_lint_reports_every_call_without_a_usable_id(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A file whose calls all lack ids is not "no findings"."""
    path = write(
        tmp_path,
        "idless.jsonl",
        '{"role": "user", "content": "weather?"}\n'
        '{"role": "assistant", "content": "checking", "tool_calls": '
        '[{"type": "function", "function": {"name": "a"}}, {"id": "", "function": {"name": "b"}}]}\n'
        '{"role": "assistant", "content": "", "tool_calls": [{"id": "c1"}, {"id": "c1"}]}\n'
        '{"role": "tool", "content": "sunny", "tool_call_id": "c1"}\n',
    )
    code, out, _ = run(capsys, "lint", path)
    assert code == 1
    assert out.splitlines() == [
        f"{path}: line 2: idless_call: dropped: tool_calls[0] has no usable id "
        "(MEM-11: blank and '0' are no id)",
        f"{path}: line 2: idless_call: dropped: tool_calls[1] has no usable id "
        "(MEM-11: blank and '0' are no id)",
        f"{path}: line 3: duplicate_call: dropped: tool_calls[1] repeats call id 'c1' of this turn",
        "3 findings",
    ]


def test_normalize_conversation_names_origins(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "normalize", ANTHROPIC)
    assert code == 0
    assert "14 entries in, 14 messages out, 1 dropped" in out.splitlines()[0]
    assert (
        "  messages[3].content[0]: dropped: second result for call 'toolu_01LqW3aXn9TsA'"
    ) in out.splitlines()


def test_lint_lists_findings_with_locations_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "lint", OPENAI_CHAT)
    assert code == 1
    assert out.splitlines() == [
        f"{OPENAI_CHAT}: messages[5]: duplicate_result: dropped: second result for "
        "call 'call_Lq3aW0xTn9'",
        f"{OPENAI_CHAT}: messages[8]: unanswered_call: call 'call_Pz7mD4eR1c' has no "
        "result; a synthetic interrupted result was placed right after its turn",
        "2 findings",
    ]


def test_lint_leading_tool_and_orphan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "lead.jsonl",
        '{"role": "tool", "content": "x", "tool_call_id": "a"}\n'
        '{"role": "user", "content": "hi"}\n'
        '{"role": "tool", "content": "y", "tool_call_id": "b"}\n',
    )
    code, out, _ = run(capsys, "lint", path)
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith(f"{path}: line 1: ")
    assert lines[1].startswith(f"{path}: line 3: orphan_result: ")
    assert lines[-1] == "2 findings"


def test_lint_clean_file_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", SAMPLES / "mem-14-full-window.json")
    assert (code, out) == (0, "no findings\n")


# --------------------------------------------------------------------------- errors: exit 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["replay", "no/such/file.json"],
            "cannot read no/such/file.json: No such file or directory",
        ),
        (["normalize", "sample_data"], "cannot read sample_data: is a directory"),
        (
            ["replay", "sample_data/imports/openai_chat.json", "--format", "xml"],
            f"unknown format 'xml'; known formats: {', '.join(FORMATS)}",
        ),
        (
            ["lint", "sample_data/imports/openai_chat.json", "--format", "anthropic"],
            "sample_data/imports/openai_chat.json is not valid anthropic: messages[0]: unknown "
            "role 'system' (expected user or assistant)",
        ),
        (
            ["replay", "sample_data/mem-6-user-id-zero.json", "--per", "turn"],
            "sample_data/mem-6-user-id-zero.json: --per applies to recorded conversations; "
            "a scenario's steps are its appends",
        ),
    ],
)
def test_errors_exit_2(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", f"flowdrop-buffer: error: {message}\n")


def test_bad_json_scenario(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "broken.json", '{"name": "x",\n "steps": [\n')
    code, _, err = run(capsys, "replay", path)
    assert (code, err) == (
        2,
        f"flowdrop-buffer: error: {path}: not JSON (Expecting value at line 3, column 1)\n",
    )


def test_bad_scenario_field(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "typo.json", {"name": "t", "steps": [{"apend": {"role": "user"}}]})
    code, _, err = run(capsys, "replay", path)
    assert code == 2
    assert err.splitlines() == [
        f"flowdrop-buffer: error: {path}: steps[0].append: missing required field",
        f"{path}: steps[0].apend: unknown field",
    ]


def test_bad_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "badmsg.json",
        {
            "name": "badmsg",
            "steps": [
                {"append": {"role": "user", "content": "fine"}},
                {"append": [{"role": "user", "content": "x"}, {"content": "no role"}]},
            ],
        },
    )
    code, out, err = run(capsys, "replay", path)
    assert (code, out) == (2, "")
    # the file and the JSON path of the bad entry
    assert err == f"flowdrop-buffer: error: {path}: steps[1].append[1]: missing 'role'\n"


def test_unrecognized_conversation(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write(tmp_path, "x.json", [{"rol": "user"}])
    code, _, err = run(capsys, "lint", path)
    assert code == 2
    lines = err.splitlines()
    assert lines[:4] == [
        f"flowdrop-buffer: error: no known format matched {path}: a JSON list of 1 object "
        "with keys 'rol'",
        "the nearest formats, and what each lacked:",
        "- openai-chat, anthropic, otel-genai, bedrock: [0]: missing 'role'",
        "- openai-responses: [0]: no string 'type'",
    ]
    # A JSON file of an unknown shape: what each of the nearest formats expects.
    shapes = lines[lines.index("what each format reads:") + 1 :]
    listed = ("openai-chat", "openai-responses", "anthropic", "otel-genai", "bedrock")
    assert [line.split(":")[0] for line in shapes] == [f"- {fmt}" for fmt in listed]


HUGE_INT = "9" * 5000  # past Python's 4300-digit limit: json.loads raises a plain ValueError
DEEP = "[" * 100_000  # json.loads raises RecursionError
COMMANDS = ("replay", "check", "lint", "normalize")
NOT_A_SCENARIO = (
    "not a scenario (no 'steps'); check needs a scenario file with expect "
    "(replay PATH --save SCENARIO makes one from a recording)"
)


def _no_format_matched(path: Path, problem: str) -> str:
    """Text that is not JSON: said first, with where; no reason per format follows."""
    return f"flowdrop-buffer: error: {path}: {problem}\n"


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            '[{"role": "user", "content": "x", "n": ' + HUGE_INT + "}]",
            "not JSON (integer too long: more than 4300 digits)",
        ),
        (DEEP, "not JSON (nested too deeply): more than 100 levels at line 1, column 101"),
    ],
    ids=["huge-integer", "deep-nesting"],
)
def test_json_refused_without_a_decode_error_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str, text: str, problem: str
) -> None:
    path = write(tmp_path, "big.json", text)
    code, out, err = run(capsys, command, path)
    assert code == 2
    if command == "check":
        assert err == f"flowdrop-buffer: error: {path}: {problem}\n"
        assert out == "0 passed, 0 failed, 1 error\n"
    else:
        assert (out, err) == ("", _no_format_matched(path, problem))


@pytest.mark.parametrize(
    "argv",
    [[c] for c in COMMANDS] + [[c, "--format", "scenario"] for c in COMMANDS if c != "check"],
    ids=" ".join,
)
@pytest.mark.parametrize(
    ("tail", "reason"),
    [
        (HUGE_INT + "}", "4300 digits"),
        (DEEP, "nested too deeply"),
    ],
    ids=["huge-integer", "deep-nesting"],
)
def test_scenario_json_refused_without_a_decode_error_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], tail: str, reason: str
) -> None:
    """Forced, the scenario reader words it; detected or under check, the importers' helper."""
    text = '{"name": "s", "steps": [{"append": {"role": "user", "content": "x"}}], "n": ' + tail
    path = write(tmp_path, "scenario.json", text)
    code, _, err = run(capsys, argv[0], path, *argv[1:])
    assert code == 2 and err.startswith(f"flowdrop-buffer: error: {path}: not JSON")
    assert len(err.splitlines()) == 1 and reason in err


BAD_ROLE = {"role": ["user"], "content": "x"}


@pytest.mark.parametrize("command", COMMANDS)
def test_non_string_role_in_a_conversation_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    path = write(tmp_path, "role.json", [BAD_ROLE])
    code, _, err = run(capsys, command, path)
    assert code == 2 and err.startswith("flowdrop-buffer: error: ")
    assert NOT_A_SCENARIO in err if command == "check" else "role ['user']" in err


@pytest.mark.parametrize("command", ["replay", "check"])
def test_non_string_role_in_a_scenario_step_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    path = write(tmp_path, "role.json", {"name": "role", "steps": [{"append": BAD_ROLE}]})
    code, _, err = run(capsys, command, path)
    assert code == 2
    # the file and the JSON path of the entry, not the scenario's name and step
    assert err == (
        f"flowdrop-buffer: error: {path}: steps[0].append: 'role' must be a string, got list\n"
    )


def test_non_string_role_in_a_scenario_step_is_a_lint_finding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """lint and normalize judge entries: a message that is not one is a finding, not bad input."""
    path = write(tmp_path, "role.json", {"name": "role", "steps": [{"append": BAD_ROLE}]})
    code, out, err = run(capsys, "lint", path)
    assert (code, err) == (1, "")
    assert out.startswith(f"{path}: steps[0].append: not_a_message: ") and "role" in out
    code, out, err = run(capsys, "normalize", path)
    assert (code, err) == (0, "")
    assert "steps[0].append: dropped: " in out and "role" in out


@pytest.mark.parametrize("command", COMMANDS)
def test_blank_config_key_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    scenario = {
        "name": "blank-key",
        "config": {"key": "   "},
        "steps": [{"append": {"role": "user", "content": "x"}}],
    }
    path = write(tmp_path, "blank.json", scenario)
    code, _, err = run(capsys, command, path)
    assert code == 2
    assert err.startswith("flowdrop-buffer: error: ") and "key" in err


@pytest.mark.parametrize(
    ("argv", "tail"),
    [
        (
            ["replay", "x.json", "--max-messages", "-1"],
            "flowdrop-buffer replay: error: argument --max-messages: expected an integer >= 0, "
            "got '-1'",
        ),
        (
            ["replay", "x.json", "--max-messages", "many"],
            "flowdrop-buffer replay: error: argument --max-messages: expected an integer >= 0, "
            "got 'many'",
        ),
        (
            ["replay", "x.json", "--scope", "team"],
            "flowdrop-buffer replay: error: argument --scope: invalid choice: 'team' (choose "
            "from global, workflow, pipeline, execution, session, user)",
        ),
        (
            ["replay", "x.json", "--key", " "],
            "flowdrop-buffer replay: error: argument --key: expected a non-blank string",
        ),
        (["check"], "flowdrop-buffer check: error: the following arguments are required: PATH"),
        (
            ["frobnicate"],
            "flowdrop-buffer: error: argument COMMAND: invalid choice: 'frobnicate' (choose "
            "from " + ", ".join(c.NAME for c in cli.COMMANDS) + ")",
        ),
    ],
)
def test_bad_options_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], tail: str) -> None:
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert err.startswith("usage: flowdrop-buffer")
    # argparse quotes choices differently across Python versions ('a', 'b' vs a, b).
    assert err.splitlines()[-1].replace("'", "") == tail.replace("'", "")


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "replay" in out and "exit status" in out


# --------------------------------------------------------------------------- progress bar


def test_no_progress_bar_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli.output, "PROGRESS_MIN_STEPS", 1)
    code, _, err = run(capsys, "replay", SAMPLES / "recorded-redelivery.json", "--json")
    assert (code, err) == (0, "")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    terminal = FakeTerminal()
    monkeypatch.setattr(cli.output, "PROGRESS_MIN_STEPS", 1)
    monkeypatch.setattr(sys, "stderr", terminal)
    code = main(["replay", str(SAMPLES / "recorded-redelivery.json"), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0 and len(out.splitlines()) == 11  # stdout carries no bar
    drawn = terminal.getvalue()
    final = "replaying [" + "#" * 30 + "] 11/11 steps"
    assert "\r" + final in drawn
    assert drawn.endswith("\r" + " " * len(final) + "\r")  # erased at the end


def test_progress_draws_bar_fractions() -> None:
    stream = FakeTerminal()
    bar = Progress(stream, width=10)
    bar(1, 4)
    assert stream.getvalue() == "\rreplaying [##--------] 1/4 steps"
    bar(2, 4)  # within 0.1 s of the last draw: skipped
    bar(4, 4)  # the last one is always drawn
    assert stream.getvalue().endswith("\rreplaying [##########] 4/4 steps")
    bar.close()
    assert Progress.for_stderr(10) is None


# --------------------------------------------------------------------------- round trip


def test_round_trip_import_replay_save_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Replaying an imported conversation, saving it and replaying that agree."""
    saved = tmp_path / "weather-regression.json"
    code, first, err = run(
        capsys, "replay", OPENAI_CHAT, "--json", "--max-messages", "6", "--save", saved
    )
    assert code == 0 and err == f"saved {saved}\n"
    code, second, _ = run(capsys, "replay", saved, "--json")
    assert code == 0
    a, b = json_lines(first), json_lines(second)
    assert len(a) == len(b) == len(load_conversation(OPENAI_CHAT).messages)
    for line in a + b:
        line.pop("origins")  # where a message came from: the recording vs the saved scenario
    assert a == b
    scenario = load_scenario(saved)
    assert scenario.name == "weather-regression" and scenario.config.max_messages == 6
    assert run(capsys, "check", saved)[:2] == (0, "1 passed, 0 failed\n")
    # and the library's own view: the same timeline rows
    timeline = replay(scenario)
    again = replay(timeline.to_scenario())
    assert timeline.rows() == again.rows()


# --------------------------------------------------------------------------- as a process


def test_python_m_flowdrop_core_check_sample_data() -> None:
    """``python -m flowdrop_core check sample_data/*.json`` passes."""
    proc = subprocess.run(
        [sys.executable, "-m", "flowdrop_core", "check", *(str(p) for p in SCENARIOS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[-1] == f"{len(SCENARIOS)} passed, 0 failed"
    assert proc.stderr == ""


def test_python_m_flowdrop_core_bad_input_has_no_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "flowdrop_core", "replay", "missing.json", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert proc.returncode == 2
    assert (
        proc.stderr
        == "flowdrop-buffer: error: cannot read missing.json: No such file or directory\n"
    )
