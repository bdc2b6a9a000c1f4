"""Presentation helpers for the inspector: plain functions the Streamlit views call.

They turn what the library returns (timelines, events, findings) into tables
and chart data (pandas), escape data for Streamlit's Markdown, clip long
values, pick icons, and build a message or a context from the playground's
fields. Nothing here decides a buffer rule: every number shown comes from
:mod:`flowdrop_core.replay` and the engine's events. No Streamlit import, so
these are tested with plain pytest.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from flowdrop_core.events import Event
from flowdrop_core.inspect.labels import id_note
from flowdrop_core.messages import read_call_id
from flowdrop_core.provider import Finding, NormalizeReport
from flowdrop_core.text import text_to_message, visible

__all__ = [
    "CLIP",
    "CONTEXT_PRESETS",
    "ROLE_AVATARS",
    "TIMELINE_COLUMNS",
    "chart_frame",
    "clip_frame",
    "clip_text",
    "clip_value",
    "compose_message",
    "context_from_fields",
    "entry_call_ids",
    "entry_text",
    "event_frame",
    "findings_frame",
    "fit_cells",
    "fit_width",
    "focus",
    "lint_of",
    "md_escape",
    "page_count",
    "page_of",
    "shown",
    "tagged_frame",
    "text_px",
    "timeline_frame",
]

#: One-click execution contexts for the playground sidebar (session, user, owner).
#: "the no-user id 0" is what a runtime sends when nobody is signed in (MEM-6): user and
#: session owner 0. It leaves the session id as it is (a session is not a user).
CONTEXT_PRESETS: dict[str, dict[str, str]] = {
    "no identity": {"session_id": "", "user_id": "", "session_owner_id": ""},
    "the no-user id 0": {"user_id": "0", "session_owner_id": "0"},
    "a real user": {"session_id": "s-42", "user_id": "7", "session_owner_id": "7"},
}

#: Material icons for chat bubbles; the role name is shown as plain text.
ROLE_AVATARS = {
    "user": ":material/person:",
    "assistant": ":material/smart_toy:",
    "tool": ":material/build:",
    "system": ":material/settings:",
}

#: Timeline columns in display order (all produced by ``StepRecord.row``).
TIMELINE_COLUMNS = [
    "step",
    "mem14_flag",
    "incoming",
    "count",
    "count_delta",
    "appended",
    "appended_any",
    "duplicates",
    "replaced",
    "inserted",
    "evicted",
    "refused",
    "resolved_scope_id",
    "label",
]


# --------------------------------------------------------------------------- text

#: Every ASCII punctuation character: CommonMark lets each be backslash-escaped, and
#: escaping all of them breaks emphasis, links, images, HTML, Streamlit's directives
#: (``:red[...]``, ``:material/x:``), emoji short codes and LaTeX (``$``).
_MARKDOWN_SPECIALS = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")
_NEWLINES = re.compile(r"\r\n|\r|\n")
#: A word GFM would turn into a link (``http://``, ``www.``, ``a@b.c``, ``mailto:``):
#: Streamlit's Markdown finds those in the text *after* escapes are read, so
#: escaping cannot stop them; such a word is drawn as a code span instead.
_LINKISH = re.compile(r"://|www\.|@|mailto:|xmpp:", re.IGNORECASE)
_WORDS = re.compile(r"(\s+)")
_BACKTICKS = re.compile(r"`+")
_LEADING_BLANKS = re.compile(r"^[ \t]+", re.MULTILINE)
#: What :func:`shown` leaves as it is: a page shows tabs and line ends as such.
_KEPT = "\t\r"

#: Characters of one value drawn on a page; past it a view shows the start and offers the rest.
CLIP = 2_000


def shown(text: str) -> str:
    """``text`` as drawn: each control a page would obey or hide as its escape.

    Bidi overrides and isolates, zero-width characters and C0/C1 controls
    (see :func:`flowdrop_core.text.visible`, the CLI's own rule) become
    ``\\u202e``-style escapes, so ``Done \\u202eevil\\u202c ok`` does not
    read "Done live ok"; everything else is left as it is. Tables, JSON
    views and plain text go through this; Markdown through :func:`md_escape`.
    """
    return visible(text, keep=_KEPT)


def _code_span(word: str) -> str:
    """``word`` as an inline code span, fenced by more backticks than it holds."""
    longest = max((len(run) for run in _BACKTICKS.findall(word)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if word.startswith("`") or word.endswith("`") else ""
    return f"{fence}{pad}{word}{pad}{fence}"


def _escape_word(word: str) -> str:
    if _LINKISH.search(word):
        return _code_span(word)
    return _MARKDOWN_SPECIALS.sub(r"\\\1", word)


def md_escape(text: object) -> str:
    """``text`` as Markdown that renders as the text: THE one rule for data in the UI.

    Everything that came from input (content, ids, names, file names,
    reasons and errors quoting input) goes through this before it reaches
    anything Streamlit renders as Markdown (alerts, captions, markdown):
    controls are made visible (:func:`shown`); every ASCII punctuation
    character is backslash-escaped, so no emphasis, link, image, HTML,
    heading, list, code span, directive, emoji or formula can form; a word
    GFM would auto-link (``http://x``, ``www.x``, ``a@b.c``) is drawn as a code
    span, in which nothing is read. Newlines become hard line breaks and
    leading blanks become no-break spaces, so no line can start a block.
    Nothing invisible is added: what a reader copies is the text. Text shown
    with ``st.text``, ``st.code``, ``st.json`` or in dataframe cells needs no
    escaping (only :func:`shown`).
    """
    words = _WORDS.split(shown(str(text)))
    escaped = "".join(w if k % 2 else _escape_word(w) for k, w in enumerate(words))
    escaped = _LEADING_BLANKS.sub(lambda m: "\u00a0" * len(m.group()), escaped)
    lines = _NEWLINES.split(escaped)
    return "\\\n".join(line if line else "\u00a0" for line in lines)


def clip_text(text: str, limit: int = CLIP) -> tuple[str, int]:
    """The first ``limit`` characters of ``text`` and how many were left out.

    A view draws the clipped text and says how much is missing, so no value
    (a 1 MB one-word message) can freeze the page; the whole is offered
    separately (a download).
    """
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def clip_value(value: Any, limit: int = CLIP) -> Any:
    """A copy of a JSON-like value for a view: strings clipped at ``limit``, controls shown.

    A clipped string ends with ``… [N characters clipped]`` so the JSON views
    say what they leave out; every string goes through :func:`shown`, so a bidi
    override is drawn as its escape, not obeyed. Containers are copied, leaves kept.
    """
    if isinstance(value, str):
        head, rest = clip_text(value, limit)
        return f"{shown(head)}… [{rest} characters clipped]" if rest else shown(value)
    if isinstance(value, Mapping):
        return {clip_value(k, limit): clip_value(v, limit) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip_value(v, limit) for v in value]
    return value


def clip_frame(frame: pd.DataFrame, limit: int = CLIP) -> pd.DataFrame:
    """Clip the long text cells of a table the same way (a cell is a view too; exports are not)."""
    for column in frame.columns:
        # object or, under pandas 3's default string dtype, str: both hold text cells
        if frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column]):
            frame[column] = [
                clip_value(v, limit) if isinstance(v, str) else v for v in frame[column]
            ]
    return frame


#: The width, in pixels, of each printable ASCII character (space to ``~``) in the table
#: grid's font (Source Sans, 14 px), as the browser measures it; any other character is
#: taken as ``WIDE_PX`` px. A guess too small would let the grid cut a text with no mark,
#: and a cut id reads as another valid id, so the sum is rounded up by ``SLACK``.
_ASCII_PX: tuple[float, ...] = (
    2.8,
    4.0,
    6.0,
    7.0,
    7.0,
    11.5,
    8.5,
    3.5,
    4.2,
    4.2,
    5.8,
    7.0,
    3.5,
    4.3,
    3.5,
    4.9,
    7.0,
    7.0,
    7.0,
    7.0,
    7.0,
    7.0,
    7.0,
    7.0,
    7.0,
    7.0,
    3.5,
    3.5,
    7.0,
    7.0,
    7.0,
    6.0,
    11.9,
    7.6,
    8.2,
    8.0,
    8.6,
    7.4,
    6.9,
    8.6,
    9.1,
    3.7,
    6.7,
    8.1,
    6.8,
    10.2,
    9.1,
    9.3,
    7.9,
    9.3,
    8.0,
    7.5,
    7.5,
    9.0,
    7.2,
    11.0,
    7.2,
    6.7,
    7.5,
    4.2,
    4.9,
    4.2,
    7.0,
    7.0,
    7.6,
    7.1,
    7.7,
    6.4,
    7.8,
    6.9,
    4.1,
    7.1,
    7.6,
    3.4,
    3.5,
    6.9,
    3.6,
    11.6,
    7.7,
    7.6,
    7.8,
    7.8,
    4.9,
    5.9,
    4.7,
    7.6,
    6.5,
    10.1,
    6.2,
    6.5,
    6.0,
    4.2,
    3.4,
    4.2,
    7.0,
)
WIDE_PX = 14.0
SLACK = 1.06
#: A cell's left and right padding together, in pixels.
CELL_PADDING_PX = 18


def text_px(text: str) -> float:
    """How wide ``text`` is drawn in a table cell, in pixels (rounded up, see above)."""
    return SLACK * sum(_ASCII_PX[ord(c) - 32] if " " <= c <= "~" else WIDE_PX for c in text)


def fit_width(texts: Iterable[object], *, least: int = 48, most: int = 400) -> int:
    """A column width, in pixels, that holds the widest of ``texts`` (within the bounds)."""
    widest = max((text_px(str(t)) for t in texts if t is not None), default=0.0)
    return max(least, min(most, math.ceil(widest + CELL_PADDING_PX)))


def fit_cells(frame: pd.DataFrame, widths: Mapping[str, int]) -> pd.DataFrame:
    """Cut each text cell a column of ``widths[column]`` pixels cannot hold, ending it with "…".

    The grid cuts an overflowing cell with no mark, which turns ``call_gh00031B``
    into ``call_gh00031``, another valid-looking id; a cut made here says so.
    The whole text is where the view offers it (the step's reasons, the finding
    picked).
    """
    for column, px in widths.items():
        if column in frame.columns:
            room = px - CELL_PADDING_PX
            frame[column] = [_cut(v, room) if isinstance(v, str) else v for v in frame[column]]
    return frame


def _cut(text: str, room: float) -> str:
    """``text`` if it fits ``room`` pixels, else its longest start that fits with "…"."""
    if text_px(text) <= room:
        return text
    used = text_px("…")
    for k, char in enumerate(text):
        used += text_px(char)
        if used > room:
            return text[:k] + "…"
    return text


# --------------------------------------------------------------------------- input


def compose_message(
    role: str, content: str, tool_call_id: str = "", declare: str = ""
) -> dict[str, Any] | None:
    """One message from the composer, with MEM-16 semantics.

    Text plus role goes through :func:`text_to_message` (unknown role becomes
    ``user``, a tool call id is kept only on ``tool``, empty text is no
    message). ``declare`` (comma-separated ids) adds tool calls to an
    ``assistant`` turn, which may then have empty content.
    """
    ids = [part.strip() for part in declare.split(",") if part.strip()]
    if role == "assistant" and ids:
        return {
            "role": "assistant",
            "content": content or "",
            "tool_calls": [
                {"id": cid, "type": "function", "function": {"name": "tool", "arguments": "{}"}}
                for cid in ids
            ],
        }
    return text_to_message(content, role, tool_call_id or None)


def context_from_fields(
    session_id: str, user_id: str, session_owner_id: str
) -> dict[str, Any] | None:
    """The execution context from the sidebar's text boxes.

    Blank boxes are left out (an empty owner box is "no owner", not the
    unusable owner ``""`` which would refuse the user scope, MEM-8). All
    blank means no context at all, which an identity scope refuses (MEM-7).
    Values are kept as typed, so ``0`` arrives as ``"0"`` and is refused (MEM-6).
    """
    fields = {
        "session_id": session_id,
        "user_id": user_id,
        "session_owner_id": session_owner_id,
    }
    context = {name: value for name, value in fields.items() if value is not None and value != ""}
    return context or None


# --------------------------------------------------------------------------- timeline


def timeline_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Timeline rows as a table, MEM-14 flag second so marked rows stand out."""
    frame = pd.DataFrame(list(rows), columns=[*TIMELINE_COLUMNS, "refire"])
    frame = frame[TIMELINE_COLUMNS]
    frame["mem14_flag"] = frame["mem14_flag"].fillna("").astype(str)
    return frame


def page_count(total: int, size: int) -> int:
    """Pages needed for ``total`` rows (at least one)."""
    return max(1, -(-total // size))


def page_of(step: int, size: int) -> int:
    """The 1-based page a 1-based step is on (step 0, the start, is on page 1)."""
    return max(1, -(-max(step, 1) // size))


def chart_frame(rows: Sequence[Mapping[str, Any]], start_count: int = 0) -> pd.DataFrame:
    """Long-form chart data: ``count`` and cumulative ``appended`` per step, from step 0.

    Step 0 is the starting buffer (``start_count`` entries, nothing appended
    yet). Where the two lines part is what MEM-14 is about: the size of the
    buffer is not the number of turns that landed.
    """
    steps = [0] + [int(r["step"]) for r in rows]
    counts = [start_count] + [int(r["count"]) for r in rows]
    cumulative: list[int] = [0]
    total = 0
    for r in rows:
        total += int(r["appended"])
        cumulative.append(total)
    return pd.DataFrame(
        {
            "step": steps * 2,
            "series": ["count"] * len(steps) + ["cumulative appended"] * len(steps),
            "value": counts + cumulative,
        }
    )


# --------------------------------------------------------------------------- entries


def _metadata(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = entry.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def entry_text(entry: Any) -> str:
    """The content of an entry as plain text (never markup), for bubbles and tables."""
    if not isinstance(entry, Mapping):
        return json.dumps(entry, ensure_ascii=False, default=str)
    content = entry.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return json.dumps(content, ensure_ascii=False, default=str)


def entry_call_ids(entry: Any) -> str:
    """A short note of the call ids an entry declares or answers, either shape.

    Ids are read the way the engine reads them (MEM-11): a call's id by
    :func:`~flowdrop_core.messages.read_call_id`, a result's by
    :func:`~flowdrop_core._ids.usable_id`; an id that is not usable is shown as given,
    marked ``(not an id, MEM-11)``, so ``"0"`` reads as itself, not as ``?``.
    """
    if not isinstance(entry, Mapping):
        return ""
    meta = _metadata(entry)
    parts = []
    calls = entry.get("tool_calls") or meta.get("tool_calls") or []
    if isinstance(calls, list):
        ids = [
            read_call_id(call) or id_note(call.get("tool_call_id", call.get("id")))
            for call in calls
            if isinstance(call, Mapping)
        ]
        if ids:
            parts.append("declares " + ", ".join(ids))
    answered = entry.get("tool_call_id")
    if answered is None:
        answered = meta.get("tool_call_id")
    if answered is not None:
        parts.append(f"answers {id_note(answered)}")
    if meta.get("healed"):
        parts.append("healed placeholder")
    return "; ".join(parts)


def focus(
    tagged: Sequence[tuple[Any, str]], *, radius: int = 2, tail: int = 3, limit: int = 60
) -> list[tuple[int, Any, str] | int]:
    """The part of a long tagged buffer worth drawing: what changed, its neighbours, the end.

    Returns ``(position, entry, tag)`` items in order, with an ``int`` in
    place of each run of skipped ``kept`` entries (how many were skipped).
    Entries tagged anything but ``kept`` are always shown, with ``radius``
    neighbours each side, and so are the last ``tail`` entries. A buffer of
    at most ``limit`` entries is shown whole.
    """
    n = len(tagged)
    if n <= limit:
        return [(k, entry, tag) for k, (entry, tag) in enumerate(tagged)]
    show = set(range(max(0, n - tail), n))
    for k, (_, tag) in enumerate(tagged):
        if tag != "kept":
            show.update(range(max(0, k - radius), min(n, k + radius + 1)))
    out: list[tuple[int, Any, str] | int] = []
    skipped = 0
    for k, (entry, tag) in enumerate(tagged):
        if k in show:
            if skipped:
                out.append(skipped)
                skipped = 0
            out.append((k, entry, tag))
        else:
            skipped += 1
    if skipped:
        out.append(skipped)
    return out


def tagged_frame(tagged: Sequence[tuple[Any, str]]) -> pd.DataFrame:
    """Tagged entries (from ``Timeline.tagged``) as a table: position, tag, role, ids, content."""
    return pd.DataFrame(
        [
            {
                "position": k,
                "tag": tag,
                "role": entry.get("role", "?") if isinstance(entry, Mapping) else "?",
                "calls": entry_call_ids(entry),
                "content": entry_text(entry),
            }
            for k, (entry, tag) in enumerate(tagged)
        ],
        columns=["position", "tag", "role", "calls", "content"],
    ).pipe(clip_frame)


def event_frame(events: Iterable[Event]) -> pd.DataFrame:
    """A step's events with the rule each cites and its one-sentence reason."""
    return pd.DataFrame(
        [
            {
                "kind": str(ev.kind),
                "rule": ev.rule,
                "incoming": ev.incoming_index,
                "position": ev.position,
                "tool_call_id": ev.tool_call_id or "",
                "reason": ev.reason,
            }
            for ev in events
        ],
        columns=["kind", "rule", "incoming", "position", "tool_call_id", "reason"],
    ).pipe(clip_frame)


def lint_of(report: NormalizeReport) -> list[Finding]:
    """``lint(entries)`` from an already computed ``normalize_report(entries)``.

    :func:`flowdrop_core.provider.lint` is exactly the report's findings in
    buffer order; a view that shows both uses this to normalize once.
    """
    return sorted(report.findings, key=lambda f: f.index)


def findings_frame(findings: Iterable[Finding]) -> pd.DataFrame:
    """MEM-5 findings (provider view, lint) as a table."""
    return pd.DataFrame(
        [
            {
                "entry": f.index,
                "kind": str(f.kind),
                "rule": f.rule,
                "dropped": f.dropped,
                "tool_call_id": f.tool_call_id or "",
                "message": f.message,
            }
            for f in findings
        ],
        columns=["entry", "kind", "rule", "dropped", "tool_call_id", "message"],
    ).pipe(clip_frame)
