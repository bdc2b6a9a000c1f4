"""The importers' shared pieces, as callers see them: notes and the JSON text of left-out values."""

from __future__ import annotations

import dataclasses
import json

import pytest

from flowdrop_core.importers import ImportNote, parse_conversation
from flowdrop_core.importers.base import as_text, json_text


def test_import_notes_are_values_that_cannot_be_changed_after_the_import() -> None:
    """An import's notes may be shared (a trace's earlier calls): no caller can alter one."""
    document = {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "x"}]}]}
    got = parse_conversation(json.dumps(document), format="anthropic")
    (note,) = got.notes
    with pytest.raises(dataclasses.FrozenInstanceError):
        note.where = "elsewhere"  # type: ignore[misc]
    assert note.where == "messages[0].content[0]"
    same = ImportNote(note.where, note.what, note.why, note.content, note.unknown)
    assert {note, same} == {note}


def test_a_value_json_cannot_write_is_shown_as_its_str() -> None:
    """Helpers never crash on a left-out value: what JSON cannot write is shown as ``str``."""
    assert json_text(b"raw") == "b'raw'"
    assert as_text({1, 2}) == "{1, 2}"
    loop: list[object] = []
    loop.append(loop)
    assert json_text(loop) == "[[...]]"
    assert json_text({"a": ["é", 1]}) == '{"a": ["é", 1]}'
