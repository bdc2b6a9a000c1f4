"""Import every recording of a corpus in-process and say what each one gets.

Usage: ``python scripts/corpus_report.py [FOLDER] [--json]`` (default
``sample_data/fresh``). Each file is imported with auto-detection and put in
one class:

- ``lossless``: messages, no notes, and every text of the file is in them;
- ``notes``: messages, and what is not in them is in notes (nothing lost);
- ``error``: one clear :class:`ConversationFormatError` (the file is refused);
- ``wrong``: imported, but empty, or some text of the file is in neither the
  messages nor the notes, or a message has no content and no calls.

"Text of the file" is every string value under a content-bearing key
(:data:`TEXT_KEYS`) of the parsed document (JSON text nested in a string is
parsed too), at least :data:`MIN_TEXT` characters long. This is the check
that an import loses nothing silently: a reader that drops a part fails it
even when it leaves no note.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from flowdrop_core.importers import (  # noqa: E402
    ConversationFormatError,
    ImportedConversation,
    load_conversation,
)

#: Keys whose string values are conversation text a reader must keep or note.
TEXT_KEYS = frozenset(
    {
        "text",
        "content",
        "value",
        "message",
        "arguments",
        "args",
        "input",
        "output",
        "result",
        "response",
        "query",
        "answers",
        "reasoning",
        "reasoning_content",
        "thinking",
        "tool_plan",
        "summary",
        "refusal",
        "message.content",
        "message_content.text",
        "tool_call.function.arguments",
    }
)
#: Shorter strings are not checked (roles, flags, tiny ids).
MIN_TEXT = 6
#: Key suffixes of flat span attributes that carry text.
FLAT_TEXT_SUFFIXES = (".content", ".text", ".arguments", ".message_content.text")
DEFAULT_FOLDER = ROOT / "sample_data" / "fresh"
SUFFIXES = frozenset({".json", ".jsonl", ".txt"})


@dataclass
class Result:
    """What one file gets: its class, format, counts, the error or the lost texts."""

    file: str
    cls: str
    format: str = ""
    messages: int = 0
    notes: int = 0
    error: str = ""
    lost: list[str] = field(default_factory=list)
    why: str = ""


def _parsed(text: str) -> list[Any]:
    """The file as JSON values: one document, or one per JSON Lines line; none for plain text."""
    try:
        return [json.loads(text)]
    except ValueError:
        pass
    values = []
    for line in text.splitlines():
        if line.strip():
            try:
                values.append(json.loads(line))
            except ValueError:
                return []
    return values


def _is_text_key(key: str) -> bool:
    return key in TEXT_KEYS or (
        key.startswith(("llm.", "gen_ai.")) and key.endswith(FLAT_TEXT_SUFFIXES)
    )


def texts_of(value: Any, key: str = "") -> Iterator[str]:
    """Every string under a text key (recursing into objects, lists and JSON text)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from texts_of(v, str(k))
    elif isinstance(value, list):
        for item in value:
            yield from texts_of(item, key)
    elif isinstance(value, str):
        stripped = value.strip()
        if len(stripped) > 1 and stripped[0] == stripped[-1] == '"':
            try:
                unquoted = json.loads(stripped)
            except ValueError:
                unquoted = None
            if isinstance(unquoted, str):  # JSON text of a string (double-encoded)
                yield from texts_of(unquoted, key)
                return
        if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
            try:
                inner = json.loads(stripped)
            except ValueError:
                inner = None
            if isinstance(inner, dict | list):
                yield from texts_of(inner, key)
                return
            literal = _python_literal(stripped)
            if isinstance(literal, dict | list):  # a framework's str(dict): its texts count
                yield from texts_of(literal, key)
                return
        if _is_text_key(key) and ("<tool_call>" in stripped or "<tool_response>" in stripped):
            yield from _tagged(stripped)
        elif _is_text_key(key) and len(stripped) >= MIN_TEXT:
            yield stripped


def _python_literal(text: str) -> Any:
    """A Python ``repr`` of a dict or list (``{'role': 'assistant', ...}``), or ``None``.

    Frameworks record ``str(value)`` of their objects; ``ast.literal_eval`` reads
    literals only, so the texts inside are checked like those of JSON text.
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _tagged(text: str) -> Iterator[str]:
    """Text with Hermes tags: the text around them, each response, each call's strings.

    A call's body is parsed and re-written by the reader, so its strings (name,
    argument values) are what must be kept, not its spelling.
    """
    for body in re.findall(r"<tool_response>(.*?)</tool_response>", text, re.S):
        if len(body.strip()) >= MIN_TEXT:
            yield body.strip()
    for body in re.findall(r"<tool_call>(.*?)</tool_call>", text, re.S):
        try:
            parsed = ast.literal_eval(body.strip())
        except (ValueError, SyntaxError):
            try:
                parsed = json.loads(body.strip())
            except ValueError:
                parsed = body.strip()
        yield from (v for v in _strings(parsed) if len(v) >= MIN_TEXT)
    for rest in re.split(r"<(tool_call|tool_response)>.*?</\1>", text, flags=re.S)[::2]:
        if len(rest.strip()) >= MIN_TEXT:
            yield rest.strip()


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def _haystack(imported: ImportedConversation) -> str:
    parts: list[str] = []
    for message in imported.messages:
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            parts.append(str(function.get("arguments", "")))
            parts.append(str(function.get("name", "")))
    for note in imported.notes:
        parts.append(note.content)
    text = "\n".join(parts)
    return text + "\n" + json.dumps(text, ensure_ascii=False)


def _found(needle: str, haystack: str) -> bool:
    if needle in haystack:
        return True
    for ascii_only in (False, True):  # JSON text may keep non-ASCII as \\u escapes
        if json.dumps(needle, ensure_ascii=ascii_only)[1:-1] in haystack:
            return True
    # Arguments are re-serialized by readers: compare JSON text without spacing.
    squeezed = "".join(needle.split())
    return len(squeezed) >= MIN_TEXT and squeezed in "".join(haystack.split())


def classify(path: Path) -> Result:
    """Import one file with auto-detection and classify what it gets."""
    name = path.name
    try:
        imported = load_conversation(path, name=name)
    except ConversationFormatError as exc:
        lines = str(exc).splitlines() or [type(exc).__name__]
        # The first line names the file; the next one, the nearest format and what it lacked.
        return Result(name, "error", error=" ".join(lines[:2]))
    result = Result(
        name,
        "lossless",
        format=imported.format,
        messages=len(imported.messages),
        notes=len(imported.notes),
    )
    if not imported.messages:
        result.cls, result.why = "wrong", "no messages"
        return result
    empty = [
        i
        for i, m in enumerate(imported.messages)
        if not m.get("content") and not m.get("tool_calls") and m.get("role") != "tool"
    ]
    haystack = _haystack(imported)
    text = path.read_text(encoding="utf-8-sig")
    seen: set[str] = set()
    for value in _parsed(text):
        for needle in texts_of(value):
            if needle not in seen and not _found(needle, haystack):
                seen.add(needle)
                result.lost.append(needle[:80])
    if result.lost:
        result.cls, result.why = (
            "wrong",
            f"{len(result.lost)} text(s) in neither messages nor notes",
        )
    elif empty:
        result.cls, result.why = "wrong", f"message(s) {empty} have no content and no calls"
    elif imported.notes:
        result.cls = "notes"
    return result


def corpus(folder: Path) -> list[Path]:
    """The corpus files of a folder, by name."""
    return sorted(p for p in folder.iterdir() if p.suffix in SUFFIXES and p.name != "SOURCES.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument("--json", action="store_true", help="one JSON object per file")
    args = parser.parse_args(argv)
    results = [classify(p) for p in corpus(args.folder)]
    if args.json:
        for r in results:
            print(json.dumps(asdict(r), ensure_ascii=False))
        return 0
    counts: dict[str, int] = {}
    for r in results:
        counts[r.cls] = counts.get(r.cls, 0) + 1
        detail = r.error or r.why or (f"{r.notes} note(s)" if r.notes else "")
        print(f"{r.cls:9} {r.format or '-':17} {r.messages:4} msgs  {r.file}  {detail}")
        for lost in r.lost[:3]:
            print(f"{'':33}lost: {lost!r}")
    print(f"\n{len(results)} files: " + ", ".join(f"{n} {c}" for c, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
