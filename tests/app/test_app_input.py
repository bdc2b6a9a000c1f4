"""AppTest: careless and hostile input in the inspector.

URL values out of range or unknown are replaced by defaults with a visible
notice; long content is clipped in every view with the whole of it one
download away; ids and names from input reach Markdown only through the one
plain-text helper.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Element

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 60
CLIP_BOUND = 10_000  # no element on a page carries more characters of one value


def start(page: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    if page:
        at.switch_page(page).run()
    return at


def elements(at: AppTest, kind: str) -> list[Element]:
    """The rendered elements of ``kind`` (a kind of element, never a layout block)."""
    found = at.get(kind)
    assert all(isinstance(e, Element) for e in found), kind
    return [e for e in found if isinstance(e, Element)]


def notices(at: AppTest) -> str:
    return " ".join(w.value for w in at.warning)


# --------------------------------------------------------------------------- URL values


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ({"window": "1e309"}, ["window"]),
        ({"window": "inf"}, ["window"]),
        ({"window": "-3"}, ["window"]),
        ({"window": "nan"}, ["window"]),
        ({"scope": "banana", "storage": "disk"}, ["scope", "storage"]),
        ({"step": "1e309"}, ["step"]),
    ],
    ids=["window-1e309", "window-inf", "window-negative", "window-nan", "scope-storage", "step"],
)
def test_playground_bad_url_values_become_defaults_with_a_notice(query, names):
    at = start(**query)
    assert not at.exception, at.exception
    shown = notices(at)
    for name in names:
        assert f"URL: {name}=" in shown, shown
    assert at.session_state["window"] == 0
    assert at.session_state["scope"] == "session"
    assert at.session_state["storage"] == "memory"
    for name in names:  # the URL itself is corrected
        assert at.query_params.get(name) in (None, [], ["0"], "0", "session", ["session"])
    at.number_input(key="window").set_value(3).run()  # the page still works
    assert not at.exception


@pytest.mark.parametrize(
    "query",
    [
        {"r_window": "1e309"},
        {"r_window": "inf"},
        {"r_per": "banana"},
        {"r_refire": "banana"},
        {"r_sample": "../../etc/passwd"},
        {"rstep": "1e309"},
    ],
    ids=lambda q: "-".join(f"{k}={v}" for k, v in q.items()),
)
def test_replay_bad_url_values_become_defaults_with_a_notice(query):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    for name, value in query.items():
        at.query_params[name] = value
    at.switch_page("pages/replay.py").run()
    assert not at.exception, at.exception
    (name,) = query
    assert f"URL: {name}=" in notices(at), notices(at)
    assert at.success and "step(s)" in at.success[0].value


# --------------------------------------------------------------------------- long content


def longest_value(at: AppTest) -> int:
    """The most characters any one rendered element carries of a single value."""
    sizes = [0]
    for kind in ("text", "code", "markdown", "caption", "error", "warning", "info", "success"):
        sizes += [len(str(e.value)) for e in elements(at, kind)]
    for element in at.get("json"):
        sizes.append(
            max((len(s) for s in re.findall(r'"(?:[^"\\]|\\.)*"', element.proto.body)), default=0)
        )
    for frame in at.dataframe:
        values = frame.value.astype(str).to_numpy().ravel().tolist()
        sizes.append(max((len(v) for v in values), default=0))
    return max(sizes)


def test_a_one_megabyte_word_is_clipped_in_every_view_with_a_download():
    word = "y" * 1_000_000
    data = json.dumps([{"role": "user", "content": word}, {"role": "assistant", "content": word}])
    at = start("pages/replay.py")
    at.file_uploader(key="r_upload").upload("long.json", data.encode(), "application/json").run()
    assert not at.exception, at.exception
    assert at.success and "2 step(s)" in at.success[0].value
    assert longest_value(at) < CLIP_BOUND  # the timeline tab
    at.session_state["r_tab"] = "Provider view"
    at.run()
    assert longest_value(at) < CLIP_BOUND
    at.session_state["r_tab"] = "Step before / after"
    at.run()
    assert longest_value(at) < CLIP_BOUND
    assert any("characters clipped" in c.value for c in at.caption)
    labels = [b.proto.label for b in at.get("download_button")]
    assert any(label.startswith("Whole content") for label in labels), labels
    at.segmented_control(key="r_mode").set_value("JSON").run()  # the JSON view too
    assert not at.exception, at.exception
    assert longest_value(at) < CLIP_BOUND


def test_a_one_megabyte_word_pasted_in_the_playground_is_clipped():
    at = start()
    at.text_area(key="pg_paste").input(json.dumps({"role": "user", "content": "z" * 1_000_000}))
    at.button(key="pg_append").click().run()
    assert not at.exception, at.exception
    for tab in ("Timeline", "Step before / after", "Provider view"):
        at.session_state["pg_tab"] = tab
        at.run()
        assert longest_value(at) < CLIP_BOUND, tab


# --------------------------------------------------------------------------- data is never markup

HOSTILE = (
    "HOSTILE`\n\n![img](http://127.0.0.1:9/p.png)\n\n**BOLD** [link](http://127.0.0.1:9/l) "
    "<b>HTMLB</b> http://127.0.0.1:9/auto www.example.org x@example.org :red[RED]\n# HEAD"
)
#: HOSTILE on one line: ids with a line break are unusable (GR-MEM), so ids use this one.
ONE_LINE = HOSTILE.replace("\n", " ")
#: What HOSTILE would be as markup; none may reach a Markdown body unescaped.
MARKUP = (
    "![img]",
    "](http",
    "**BOLD**",
    "<b>HTMLB",
    "http://",
    "www.example",
    "x@example",
    ":red[",
)


def markdown_bodies(at: AppTest) -> list[str]:
    """Every string the page hands to Streamlit's Markdown renderer."""
    bodies = []
    for kind in (
        "markdown",
        "caption",
        "error",
        "warning",
        "info",
        "success",
        "subheader",
        "title",
    ):
        bodies += [str(e.value) for e in elements(at, kind)]
    bodies += [str(m.value) for m in at.metric] + [str(m.label) for m in at.metric]
    return bodies


#: A backslash escape (kept), or a code span: Markdown reads nothing inside one, so the
#: plain-text helper draws a word that would auto-link (``http://x``) as one.
_ESCAPE_OR_CODE = re.compile(r"\\[!-/:-@\[-`{-~]|(`+)( ?)(.+?)\2\1(?!`)")


def outside_code_spans(body: str) -> str:
    """``body`` with each code span's text taken out: what Markdown would read as markup."""
    return _ESCAPE_OR_CODE.sub(lambda m: m.group(0) if m.group(1) is None else "<code>", body)


def assert_data_is_text(at: AppTest, *, shown: bool = True) -> None:
    assert not at.exception, at.exception
    bodies = markdown_bodies(at)
    leaks = [(token, b[:200]) for b in bodies for token in MARKUP if token in outside_code_spans(b)]
    assert not leaks, leaks
    # Not vacuous: the hostile data is on the page, as text or escaped Markdown.
    texts = bodies + [t.value for t in at.text]
    for frame in at.dataframe:
        texts += frame.value.astype(str).to_numpy().ravel().tolist()
    assert any("BOLD" in t for t in texts) or not shown


def hostile_scenario(name: str) -> dict:
    data = json.loads((ROOT / "sample_data" / f"{name}.json").read_text())
    data["title"] = HOSTILE
    data["description"] = HOSTILE
    for entry in data["buffer"]:
        entry["content"] = HOSTILE
    return data


def test_hostile_sample_files_never_become_markup_on_spec_examples_and_learn(tmp_path, monkeypatch):
    """Spec examples and Learn MEM-14 show only sample files: point them at hostile ones."""
    import inspector_ui.cache
    import inspector_ui.samples
    from flowdrop_core.inspect.walk import WALK

    for name in ("mem-14-full-window", "mem-14-refired-result"):
        (tmp_path / f"{name}.json").write_text(json.dumps(hostile_scenario(name)))
    walk_only = [s.sample for s in WALK if not (tmp_path / f"{s.sample}.json").exists()]
    monkeypatch.setattr(inspector_ui.samples, "SAMPLE_DIR", tmp_path)
    monkeypatch.setattr(inspector_ui.cache, "SAMPLE_DIR", tmp_path)
    at = start("pages/spec_examples.py")
    assert_data_is_text(at)
    for name in ("mem-14-full-window", "mem-14-refired-result"):  # both hostile cards drawn
        assert at.get_by_key(f"card_{name}") is not None
    for name in walk_only:  # the walk's other stops, written after the cards were counted
        (tmp_path / f"{name}.json").write_text(json.dumps(hostile_scenario(name)))
    at = start("pages/learn_mem14.py")
    for stop in WALK:
        at.session_state["walk_stop"] = stop.key
        at.run()
        at.button(key=f"walk_{stop.key}_press").click().run()
        assert_data_is_text(at, shown=stop.key != "refuse")  # a refusal reads no buffer


def test_hostile_ids_names_and_contents_never_become_markup_on_playground_and_replay():
    conversation = [
        {"role": "user", "content": HOSTILE},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": ONE_LINE,
                    "type": "function",
                    "function": {"name": HOSTILE, "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": ONE_LINE, "content": HOSTILE},
        {"role": "tool", "tool_call_id": ONE_LINE, "content": HOSTILE},
    ]
    at = start()
    for box in ("session", "user", "owner"):
        at.text_input(key=box).input(ONE_LINE).run()
    at.text_area(key="pg_paste").input(json.dumps(conversation))
    at.button(key="pg_append").click().run()
    for tab in ("Timeline", "Step before / after", "Provider view", "Export"):
        at.session_state["pg_tab"] = tab
        at.run()
        assert_data_is_text(at)
    at = start("pages/replay.py")
    name = "**BOLD** <b>HTMLB<b> ![img](p.png) www.example.org x@example.org.json"  # no "/"
    at.file_uploader(key="r_upload").upload(
        name, json.dumps(conversation).encode(), "application/json"
    ).run()
    for tab in ("Timeline", "Step before / after", "Provider view", "Export"):
        at.session_state["r_tab"] = tab
        at.run()
        assert_data_is_text(at, shown=tab != "Export")  # Export: buttons only
    at.file_uploader(key="r_upload").upload(name, b'{"x": "**BOLD**', "application/json").run()
    assert at.error
    assert_data_is_text(at)
