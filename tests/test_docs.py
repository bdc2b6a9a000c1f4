"""The docs the tests hold true (Datasette's ``test_docs.py`` habit).

- The command line: every command and option README uses is in
  ``--help``, and every command and option ``--help`` lists is in README or
  ``docs/``; the ``store`` command's help names every backend of README's
  storage table.
- Every code block of README and ``docs/frameworks.md`` runs: Python blocks
  are executed (top-level ``await`` included), shell blocks of
  ``flowdrop-buffer`` calls run in a temporary folder holding the sample
  data and the files the calls name, a ``pip install`` line names an extra
  ``pyproject.toml`` declares. A block is left out only when the line before
  it says so with its reason (``<!-- docs-test: skip (starts a server) -->``).
- Every file CONTRIBUTING's recipes name exists, each recipe names every
  place the newest member of its kind touched (the format ``xlam``, the store
  ``postgres``), and the format recipe agrees with the how-to of
  ``importers/_registry.py``.
- The store URL schemes README names are the ones ``storage/urls.py``
  accepts, and no text names the stores as "SQLite or Redis" alone.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import glob
import io
import re
import shlex
import sys
import tokenize
import tomllib
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flowdrop_core.cli import COMMANDS, main
from flowdrop_core.storage import urls

THIS = Path(__file__).resolve()
ROOT = THIS.parents[1]
README = ROOT / "README.md"
FRAMEWORKS = ROOT / "docs" / "frameworks.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOC_FILES = (README, *sorted((ROOT / "docs").glob("*.md")))

SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]+)\)\s*-->")
FENCE = re.compile(r"^```(?P<lang>\S*)\s*$")
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
PROG = "flowdrop-buffer"


@dataclass(frozen=True)
class Block:
    """One fenced code block: where it is, its language, its text, why it is skipped."""

    path: Path
    line: int
    lang: str
    text: str
    skip: str | None

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def code_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with the skip marker of the line before each."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    k = 0
    while k < len(lines):
        opening = FENCE.match(lines[k])
        if not opening:
            k += 1
            continue
        end = k + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        before = next((lines[j] for j in range(k - 1, -1, -1) if lines[j].strip()), "")
        marker = SKIP.search(before)
        blocks.append(
            Block(
                path,
                k + 1,
                opening["lang"],
                "\n".join(lines[k + 1 : end]) + "\n",
                marker["reason"] if marker else None,
            )
        )
        k = end + 1
    return blocks


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """Run the command line in this process: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def help_text(*command: str) -> str:
    status, out, _ = run_cli([*command, "--help"])
    assert status == 0
    return out


COMMAND_NAMES = [c.NAME for c in COMMANDS]


def help_options() -> dict[str, set[str]]:
    """Each command's options as its ``--help`` lists them ("" for the program's own)."""
    found = {"": set(OPTION.findall(help_text()))}
    for name in COMMAND_NAMES:
        found[name] = set(OPTION.findall(help_text(name)))
    return found


def cli_lines(text: str) -> list[list[str]]:
    """Each ``flowdrop-buffer ...`` line of a shell block, split, without its comment."""
    calls = []
    for line in text.splitlines():
        words = shlex.split(line, comments=True)
        if words and words[0] == PROG:
            calls.append(words[1:])
    return calls


# -- the command line ---------------------------------------------------------------------------


def test_every_command_readme_names_is_in_help() -> None:
    top = help_text()
    named = set(re.findall(rf"{PROG} ([a-z][a-z-]*)", README.read_text(encoding="utf-8")))
    assert named, "README names no command"
    unknown = sorted(n for n in named if n not in COMMAND_NAMES or n not in top)
    assert not unknown, f"README names commands --help does not list: {unknown}"


def test_every_option_readme_uses_is_in_help() -> None:
    options = help_options()
    text = README.read_text(encoding="utf-8")
    wrong = []
    for block in code_blocks(README):
        for words in cli_lines(block.text):
            if words and words[0] in options:
                wrong += [
                    f"{block.where}: {words[0]} {w}"
                    for w in words
                    if OPTION.fullmatch(w) and w not in options[words[0]]
                ]
    every = set().union(*options.values())
    wrong += [f"README: {w}" for w in sorted(set(OPTION.findall(text)) - every)]
    assert not wrong, "README uses options that --help does not list:\n" + "\n".join(wrong)


def test_every_command_and_option_in_help_is_documented() -> None:
    docs = "\n".join(p.read_text(encoding="utf-8") for p in DOC_FILES)
    missing = [f"command {n}" for n in COMMAND_NAMES if f"{PROG} {n}" not in docs]
    for command, options in help_options().items():
        missing += [
            f"{command or PROG} {o}"
            for o in sorted(options - {"--help"})
            if not re.search(rf"(?<![\w-]){o}(?![\w-])", docs)
        ]
    assert not missing, "in --help but in neither README nor docs/:\n" + "\n".join(missing)


def storage_table_backends() -> list[str]:
    """The store names of README's storage table (its first column)."""
    section = README.read_text(encoding="utf-8").split("## Storage", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")]
    return [r for r in rows if r not in {"store", ""}]


def test_the_store_command_help_names_every_backend_with_a_url_or_path() -> None:
    backends = [b for b in storage_table_backends() if b != "memory"]
    assert backends == ["SQLite", "Redis", "Postgres"]
    top, own = help_text(), help_text("store")
    for text, where in ((top, "--help"), (own, "store --help")):
        line = " ".join(text.split())
        missing = [b for b in backends if b not in line]
        assert not missing, f"{where} does not name {missing}:\n{text}"


# -- the store URL schemes --------------------------------------------------------------------

SCHEME = re.compile(r"(?<![\w+.-])([a-z][a-z0-9+.-]*)://")


def test_readme_names_exactly_the_url_schemes_the_stores_accept() -> None:
    accepted = set(urls._SCHEMES) | set(urls._POSTGRES)
    named = set(SCHEME.findall(README.read_text(encoding="utf-8"))) - {"http", "https"}
    assert named == accepted, (
        f"README names {sorted(named)}; storage/urls.py accepts {sorted(accepted)}"
    )


SOURCES = ("flowdrop_core", "inspector_ui", "pages")
ONLY_TWO = re.compile(r"SQLite (?:file )?or (?:a )?Redis(?! or| and)", re.IGNORECASE)


def test_no_text_names_the_stores_as_sqlite_or_redis_alone() -> None:
    """Postgres is a store too: a text listing where the stores can be names it."""
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in [
            *DOC_FILES,
            CONTRIBUTING,
            *(p for s in SOURCES for p in (ROOT / s).rglob("*.py")),
        ]
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if ONLY_TWO.search(line) and "Postgres" not in line
    ]
    assert not found, "texts naming only SQLite and Redis:\n" + "\n".join(found)


# -- every code block runs --------------------------------------------------------------------

RUN_DOCS = (README, FRAMEWORKS)
ALL_BLOCKS = [b for path in RUN_DOCS for b in code_blocks(path)]


def test_every_block_has_a_language_the_test_runs() -> None:
    assert ALL_BLOCKS
    odd = [f"{b.where}: {b.lang!r}" for b in ALL_BLOCKS if b.lang not in {"python", "sh"}]
    assert not odd, "blocks in a language this test cannot run:\n" + "\n".join(odd)


MAKE_TARGETS = set(re.findall(r"^([a-z][\w-]*):", (ROOT / "Makefile").read_text(), re.M))


def make_targets(block: Block) -> list[str]:
    """The target of each ``make T`` line of a block (besides installs and the server command)."""
    targets = []
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        if words[:2] in (["pip", "install"], [PROG, "inspect"]):
            continue  # checked where they run: the extra exists, the options parse
        if words:
            assert words[0] == "make" and len(words) == 2, f"{block.where}: {line!r}"
            targets.append(words[1])
    return targets


def test_a_block_is_skipped_only_when_it_starts_a_server_or_the_suite() -> None:
    """A skipped block holds only ``make`` lines naming real targets, one of them run or test.

    ``make run`` starts the inspector's server; ``make test`` would run this
    test inside itself. Every other block runs, and a ``make`` line in a
    block that is not marked fails.
    """
    skipped = [b for b in ALL_BLOCKS if b.skip is not None]
    assert skipped
    for block in skipped:
        targets = make_targets(block)
        assert {"run", "test"} & set(targets), f"{block.where}: skipped, but starts no server"
        unknown = [t for t in targets if t not in MAKE_TARGETS]
        assert not unknown, f"{block.where}: no such Makefile target: {unknown}"
    for block in ALL_BLOCKS:
        if block.skip is None and block.lang == "sh":
            assert not re.search(r"^\s*make ", block.text, re.M), (
                f"{block.where} runs make: mark it '<!-- docs-test: skip (reason) -->'"
            )


def agents_sessions(path: Path, session_id: str) -> None:
    """An Agents SDK ``SQLiteSession`` file holding a retried tool output in ``session_id``."""
    from agents import SQLiteSession

    async def write() -> None:
        session = SQLiteSession(session_id, db_path=path)
        await session.add_items(
            [
                {"role": "user", "content": "find cats"},
                {"type": "function_call", "call_id": "c1", "name": "search", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"},
                {"type": "function_call_output", "call_id": "c1", "output": "Found 3 cats"},
            ]
        )
        session.close()

    asyncio.run(write())


def flowdrop_store(path: Path) -> None:
    """A SQLite store with a journaled slot ``session s1 chat_history``."""
    from flowdrop_core.conversation import ConversationBuffer
    from flowdrop_core.storage import SQLiteStore

    store = SQLiteStore(path)
    buf = ConversationBuffer(store=store, journal=10)
    for text in ("hi", "find cats"):
        buf.append({"role": "user", "content": text}, {"session_id": "s1"})
    store.close()


@pytest.fixture
def docs_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of its own for a block, with the sample data."""
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-test-never-sent")
    return tmp_path


def cli_files(folder: Path) -> None:
    """The files the docs' commands open: a flowdrop store, an Agents and a LangGraph file."""
    from framework_files import langgraph_file

    flowdrop_store(folder / "buffers.sqlite3")
    agents_sessions(folder / "sessions.sqlite3", "user-42")
    langgraph_file(folder / "checkpoints.sqlite")


def extras() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {f"{project['name']}[{name}]" for name in project["optional-dependencies"]}


def run_shell_block(block: Block) -> None:
    """Each line: a ``flowdrop-buffer`` call (exit 0 or 1, never an error) or a ``pip install``."""
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[:2] == ["pip", "install"]:
            unknown = [w for w in words[2:] if w not in extras()]
            assert not unknown, f"{block.where}: no such extra in pyproject.toml: {unknown}"
            continue
        assert words[0] == PROG, f"{block.where}: cannot run {line!r}"
        argv = [m for w in words[1:] for m in (sorted(glob.glob(w)) if "*" in w else [w])]
        if argv[:1] == ["inspect"]:  # it becomes the server: only check that its options parse
            argv = [*argv, "--help"]
        status, out, err = run_cli(argv)
        assert status in (0, 1), f"{block.where}: {line!r} exited {status}:\n{err}"
        assert out.strip(), f"{block.where}: {line!r} printed nothing"
        assert "Traceback" not in err and "error:" not in err, f"{block.where}: {line!r}:\n{err}"


def shown_value(text: str) -> tuple[bool, Any]:
    """The value a comment shows (``# (3, 1, True): same size``), if it starts with a literal."""
    cuts = [len(text)] + [k for k, c in enumerate(text) if c == ":" or text[k : k + 2] == " ("]
    for cut in sorted(set(cuts), key=lambda k: (k != len(text), k)):
        try:
            return True, ast.literal_eval(text[:cut].strip())
        except (ValueError, SyntaxError):
            continue
    return False, None


def comments_after(block: Block) -> dict[int, str]:
    """Each code line's trailing comment joined with the comment-only lines right below it."""
    tokens = list(tokenize.generate_tokens(io.StringIO(block.text).readline))
    rows = {t.start[0]: t.string.lstrip("#").strip() for t in tokens if t.type == tokenize.COMMENT}
    code_rows = {t.start[0] for t in tokens if t.type not in NOT_CODE}
    joined = {}
    for row in code_rows:
        parts = [rows[row]] if row in rows else []
        below = row + 1
        while below in rows and below not in code_rows:
            parts.append(rows[below])
            below += 1
        if parts:
            joined[row] = " ".join(parts)
    return joined


NOT_CODE = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT}


def run_python_block(block: Block) -> None:
    """Run the block statement by statement; an expression's comment that shows a value is checked."""
    tree = ast.parse(block.text, block.where)
    # A module of its own, so code that resolves type hints through sys.modules (a
    # LangGraph state schema, a TypedDict) finds the block's names, as in a user's file.
    module = types.ModuleType("__docs__")
    namespace: dict[str, Any] = module.__dict__
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    sys.modules["__docs__"] = module
    try:
        _run_statements(block, tree, namespace, flags)
    finally:
        del sys.modules["__docs__"]


def _run_statements(block: Block, tree: ast.Module, namespace: dict[str, Any], flags: int) -> None:
    """Each statement of ``tree`` in ``namespace``; a shown value is checked."""
    comments = comments_after(block)
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr):
            code = compile(ast.Expression(stmt.value), block.where, "eval", flags=flags)
        else:
            code = compile(ast.Module([stmt], []), block.where, "exec", flags=flags)
        got = eval(code, namespace)  # a coroutine when the statement awaits
        if asyncio.iscoroutine(got):
            got = asyncio.run(got)
        claims, shown = shown_value(comments.get(stmt.end_lineno or 0, ""))
        if isinstance(stmt, ast.Expr) and claims:
            line = block.line + (stmt.end_lineno or 0)
            assert got == shown, f"{block.path.name}:{line}: shows {shown!r}, gives {got!r}"


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=[b.where for b in ALL_BLOCKS])
def test_every_code_block_runs(block: Block, docs_folder: Path) -> None:
    if block.skip is not None:
        pytest.skip(block.skip)
    if block.lang == "sh":
        cli_files(docs_folder)
        run_shell_block(block)
    else:
        run_python_block(block)


def test_blocks_that_fail_are_caught(docs_folder: Path) -> None:
    """The runner is no rubber stamp: a wrong option, a missing file, a bad name all fail."""
    cli_files(docs_folder)
    for lang, text in (
        ("sh", f"{PROG} replay sample_data/recorded-redelivery.json --no-such-option\n"),
        ("sh", f"{PROG} replay no-such-file.json\n"),
        ("sh", "pip install 'flowdrop-buffer-inspector[no-such-extra]'\n"),
        ("sh", "rm -rf /\n"),
        ("python", "from flowdrop_core import NoSuchName\n"),
        ("python", "async def f():\n    raise ValueError\n\nawait f()\n"),
        ("python", "x = 1\nx + 1  # 3: the sum\n"),
        ("python", "[1, 2]  # [1,\n#  3]\n"),
    ):
        block = Block(README, 0, lang, text, None)
        with pytest.raises((AssertionError, ImportError, ValueError)):
            (run_shell_block if lang == "sh" else run_python_block)(block)


# -- CONTRIBUTING's recipes -------------------------------------------------------------------

PATHLIKE = re.compile(r"`([\w./<>-]+\.(?:py|md|toml|json|txt)|\.ci/run|[\w/]+/)`")


def recipes() -> dict[str, str]:
    """CONTRIBUTING's sections by title."""
    text = CONTRIBUTING.read_text(encoding="utf-8")
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {parts[k].strip(): parts[k + 1] for k in range(1, len(parts), 2)}


def resolve(name: str) -> bool:
    """Whether a file CONTRIBUTING names exists (a ``<placeholder>`` part: its folder does)."""
    if "<" in name:
        return (ROOT / name.split("<", 1)[0]).parent.is_dir()
    if "/" not in name:  # a bare file name beside one named before it
        return any(p for p in ROOT.rglob(name) if ".venv" not in p.parts)
    return any((base / name).exists() for base in (ROOT, ROOT / "flowdrop_core"))


def test_every_file_contributing_names_exists() -> None:
    named = PATHLIKE.findall(CONTRIBUTING.read_text(encoding="utf-8"))
    assert len(named) > 20
    missing = sorted({n for n in named if not resolve(n)})
    assert not missing, f"CONTRIBUTING names files that do not exist: {missing}"


#: Where the newest member of each kind is written down outside its own files.
SCOPE = (
    "flowdrop_core/**/*.py",
    "inspector_ui/**/*.py",
    "tests/*.py",
    "benchmarks/*.py",
    "scripts/*.py",
    "pyproject.toml",
    "Makefile",
    ".ci/run",
    "README.md",
)

#: recipe -> (its newest member, the member's own files, files that name it in passing).
FOOTPRINTS: dict[str, tuple[str, set[str], dict[str, str]]] = {
    "A new import format": (
        "xlam",
        {"flowdrop_core/importers/_xlam.py"},
        {},
    ),
    "A new store backend": (
        "postgres",
        {"flowdrop_core/storage/postgres.py", "tests/postgres_server.py"},
        {
            "flowdrop_core/journal/_backends.py": "its docstring lists where backends keep journals",
            "flowdrop_core/storage/_base.py": "docstrings of mask_url and Store.kind",
            "flowdrop_core/storage/_sqlite.py": "a comment on the SQL it shares",
            "flowdrop_core/storage/_ordered_rows.py": "the row layout SQLite and Postgres share",
            "flowdrop_core/storage/redis_store.py": "its pool's default is chosen to match Postgres's",
            "benchmarks/async_bench.py": "the many-workers benchmark runs every server backend",
            "flowdrop_core/integrations/openai_agents.py": "its docstring names the stores it runs on",
            "flowdrop_core/framework_stores/_langgraph_postgres.py": "LangGraph's PostgresSaver tables",
            "flowdrop_core/framework_stores/_agents_sqlalchemy.py": "SQLAlchemySession on Postgres",
            "flowdrop_core/framework_stores/_registry.py": "a framework's tables vs PostgresStore",
            "flowdrop_core/cli/_framework_store.py": "the label of a Postgres checkpointer",
            "inspector_ui/framework_store.py": "the label of a Postgres checkpointer",
            "tests/framework_files.py": "writes the framework stores on the test Postgres",
        },
    ),
}


def footprint(member: str) -> set[str]:
    word = re.compile(rf"\b{member}", re.IGNORECASE)
    return {
        p.relative_to(ROOT).as_posix()
        for pattern in SCOPE
        for p in ROOT.glob(pattern)
        if p.is_file()
        and not p.name.startswith("test_")
        and word.search(p.read_text(encoding="utf-8"))
    }


@pytest.mark.parametrize("title", sorted(FOOTPRINTS))
def test_a_recipe_names_every_place_its_newest_member_touched(title: str) -> None:
    member, own, passing = FOOTPRINTS[title]
    recipe = recipes()[title]
    touched = footprint(member)
    assert own <= touched and set(passing) <= touched, "a listed file no longer names it"
    unnamed = sorted(
        f for f in touched - own - set(passing) if f not in recipe and Path(f).name not in recipe
    )
    assert not unnamed, f"{title!r} does not name where {member!r} was added: {unnamed}"


def test_the_format_recipe_agrees_with_the_registry_how_to() -> None:
    doc = (ROOT / "flowdrop_core/importers/_registry.py").read_text(encoding="utf-8")
    how_to = doc.split("How to add a format", 1)[1].split('"""', 1)[0]
    recipe = recipes()["A new import format"]
    names = set(re.findall(r"``([\w./<>]+)``", how_to))
    named = {n for n in names if "/" in n or "." in n}
    assert "jsonl.RUN_FORMATS" in named
    missing = sorted(n for n in named if (n if "/" in n else n.rsplit(".", 1)[-1]) not in recipe)
    assert not missing, f"importers/_registry.py's how-to names what the recipe does not: {missing}"
