"""The shape of the package, checked from its source: what the core may import, and how.

- ``flowdrop_core`` imports neither streamlit nor pandas, anywhere (every
  import statement of every module, function-level ones included).
- There is no import cycle among ``flowdrop_core`` modules. The graph is
  built from the AST: every import statement (module level, function level,
  ``TYPE_CHECKING`` blocks) is an edge to the module it names
  (``from package import submodule`` names the submodule). A module's own
  parent packages, which Python runs first, are not edges: a package's
  ``__init__`` importing its submodules is the point of a package.
- ``__all__`` is true: every name in it exists, and every public name a
  package's ``__init__`` defines or re-exports from its own modules (but
  its submodules) is in it.
- ``import flowdrop_core`` and the command line work where ``redis`` cannot
  be imported (it is the optional extra ``redis``).
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "flowdrop_core"
UI_PACKAGES = frozenset({"streamlit", "pandas"})


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(CORE.rglob("*.py"))}
PACKAGES = sorted(name for name, path in MODULES.items() if path.name == "__init__.py")


def imports(name: str) -> Iterator[tuple[str, int]]:
    """Every module ``name``'s source imports (absolute names), with its line, at any depth."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            yield target, node.lineno
            for alias in node.names:
                yield f"{target}.{alias.name}", node.lineno


def internal_edges(name: str) -> set[str]:
    """The flowdrop_core modules ``name`` imports: each import's longest known module."""
    out = set()
    parents = {".".join(name.split(".")[:k]) for k in range(1, name.count(".") + 1)}
    for target, _ in imports(name):
        parts = target.split(".")
        while parts and ".".join(parts) not in MODULES:
            parts.pop()
        hit = ".".join(parts)
        if hit and hit != name and hit not in parents:
            out.add(hit)
    return out


def test_the_core_imports_no_ui_framework() -> None:
    found = [
        f"{MODULES[name].relative_to(ROOT)}:{line}: imports {target}"
        for name in MODULES
        for target, line in imports(name)
        if target.split(".")[0] in UI_PACKAGES
    ]
    assert not found, "flowdrop_core must not import UI code:\n" + "\n".join(found)


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (as a path that returns to its start), or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def test_find_cycle_finds_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_among_core_modules() -> None:
    graph = {name: internal_edges(name) for name in MODULES}
    assert "flowdrop_core.engine" in graph["flowdrop_core.conversation"]  # edges are found
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def _module(name: str) -> ModuleType:
    return importlib.import_module(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_name_in_all_exists(name: str) -> None:
    module = _module(name)
    listed = getattr(module, "__all__", None)
    if listed is None:
        assert MODULES[name].name != "__init__.py", f"package {name} has no __all__"
        return
    assert len(listed) == len(set(listed)), f"{name}.__all__ lists a name twice"
    missing = [n for n in listed if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what does not exist: {missing}"


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_lists_its_public_names(name: str) -> None:
    """Every public name a package's ``__init__`` defines or re-exports is in ``__all__``.

    A re-export is a name imported from the package's own modules; a name
    imported from elsewhere (the stdlib, another flowdrop_core package) for
    the package's own use is not its API.
    """
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    bound: set[str] = set()
    for node in tree.body:  # module level only: what ``from package import X`` can rely on
        if isinstance(node, ast.ImportFrom) and (
            node.level or (node.module or "").startswith(f"{name}.")
        ):
            bound.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Assign):
            bound.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            bound.add(node.target.id)
    public = {
        n
        for n in bound
        if not n.startswith("_")
        and f"{name}.{n}" not in MODULES  # a submodule is reached by its own name
    }
    unlisted = sorted(public - set(_module(name).__all__))
    assert not unlisted, f"{name} binds public names missing from __all__: {unlisted}"


BLOCK_REDIS = textwrap.dedent(
    """
    import sys

    class NoRedis:
        def find_spec(self, name, path=None, target=None):
            if name == "redis" or name.startswith("redis."):
                raise ImportError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, NoRedis())
    """
)


def run_without_redis(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCK_REDIS + textwrap.dedent(code)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_blocker_really_blocks_redis() -> None:
    done = run_without_redis("import redis")
    assert done.returncode != 0 and "blocked by the test" in done.stderr


def test_import_flowdrop_core_works_without_redis() -> None:
    done = run_without_redis(
        """
        import flowdrop_core, flowdrop_core.cli, flowdrop_core.store_browser, flowdrop_core.journal
        from flowdrop_core import ConversationBuffer, MemoryStore
        buf = ConversationBuffer(store=MemoryStore(), journal=5)
        res = buf.append({"role": "user", "content": "hi"}, {"session_id": "s"})
        assert res.count == 1
        assert not any(m == "redis" or m.startswith("redis.") for m in sys.modules), "redis loaded"
        print(flowdrop_core.__file__)
        """
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).resolve() == (CORE / "__init__.py").resolve()


def test_the_command_line_works_without_redis() -> None:
    done = run_without_redis(
        """
        from flowdrop_core.cli import main
        raise SystemExit(main(["replay", "sample_data/mem-14-full-window.json"]))
        """
    )
    assert done.returncode == 0, done.stderr
    assert "hidden append" in done.stdout


def test_redis_store_without_redis_is_a_clear_error() -> None:
    done = run_without_redis(
        """
        from flowdrop_core.cli import main
        raise SystemExit(main(["store", "redis://127.0.0.1:1/0"]))
        """
    )
    assert done.returncode == 2
    assert "needs the redis package" in done.stderr and "Traceback" not in done.stderr


# -- the public API ----------------------------------------------------------------------------

#: Run as ``python -m flowdrop_core``; neither API nor internal.
ENTRY_POINTS = frozenset({"flowdrop_core.__main__"})


def is_internal(name: str) -> bool:
    """Named so: a part starting with ``_`` (``flowdrop_core.storage._sqlite``, ``_internal``).

    A module neither underscored nor an entry point is public: its ``__all__`` is written in
    ``tests/public_api.txt``. An internal module's docstring says which public name is its API.
    """
    return any(part.startswith("_") for part in name.split(".") if part != "__main__")


PUBLIC = sorted(n for n in MODULES if not is_internal(n) and n not in ENTRY_POINTS)
PUBLIC_API = ROOT / "tests" / "public_api.txt"


def public_api_text() -> str:
    """``tests/public_api.txt`` as the code is now: each public module's ``__all__``, sorted."""
    lines = [
        "# The public API: each public module's __all__ (tests/test_architecture.py compares them).",
        "# Change it on purpose only; rewrite it with: python tests/test_architecture.py",
    ]
    for name in PUBLIC:
        lines += ["", f"[{name}]", *sorted(getattr(_module(name), "__all__", []))]
    return "\n".join(lines) + "\n"


def written_api() -> dict[str, list[str]]:
    api: dict[str, list[str]] = {}
    current: list[str] = []
    for line in PUBLIC_API.read_text(encoding="utf-8").splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = api.setdefault(line[1:-1], [])
        elif line and not line.startswith("#"):
            current.append(line)
    return api


def test_every_module_is_public_or_internal() -> None:
    internal = {n for n in MODULES if is_internal(n)}
    assert set(PUBLIC) | internal | ENTRY_POINTS == set(MODULES)
    assert not set(PUBLIC) & internal
    assert len(internal) >= 55 and len(PUBLIC) >= 40  # both only grow by a decision


@pytest.mark.parametrize("name", PUBLIC)
def test_a_public_module_has_all(name: str) -> None:
    assert isinstance(getattr(_module(name), "__all__", None), list), f"{name} has no __all__"


def test_the_public_api_is_the_written_list() -> None:
    """Every public module's ``__all__`` equals ``tests/public_api.txt``: it changes on purpose."""
    assert PUBLIC_API.exists(), f"write {PUBLIC_API.name}: python tests/test_architecture.py"
    written = written_api()
    changes = []
    for name in sorted(set(PUBLIC) | set(written)):
        now = set(getattr(_module(name), "__all__", [])) if name in PUBLIC else set()
        was = set(written.get(name, []))
        changes += [f"+ {name}.{n}" for n in sorted(now - was)]
        changes += [f"- {name}.{n}" for n in sorted(was - now)]
        if name not in written:
            changes.append(f"+ {name} (a module the list does not know)")
        elif name not in PUBLIC:
            changes.append(f"- {name} (no longer public)")
    assert not changes, (
        "the public API changed; if on purpose, rewrite tests/public_api.txt "
        "(python tests/test_architecture.py):\n" + "\n".join(changes)
    )


#: Where a user's code is: the inspector (a user of the library), the examples, the docs.
USER_CODE = ("app.py", "pages", "inspector_ui", "examples")


def test_no_user_code_or_doc_reaches_an_internal_module() -> None:
    """The inspector, the examples and the docs use only public modules."""
    found = []
    for base in USER_CODE:
        path = ROOT / base
        for file in [path] if path.is_file() else sorted(path.rglob("*.py")):
            tree = ast.parse(file.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    targets = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
                else:
                    continue
                found += [
                    f"{file.relative_to(ROOT)}:{node.lineno}: {t}"
                    for t in targets
                    if t in MODULES and is_internal(t)
                ]
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        found += [
            f"{doc.relative_to(ROOT)}: {name}"
            for name in MODULES
            if is_internal(name) and re.search(rf"{re.escape(name)}(?![\w.])", text)
        ]
    assert not found, "user code or docs reach internal modules:\n" + "\n".join(found)


if __name__ == "__main__":
    PUBLIC_API.write_text(public_api_text(), encoding="utf-8")
    print(f"wrote {PUBLIC_API.relative_to(ROOT)}: {len(PUBLIC)} public modules")


#: The layers that act on what a decision kind does: each reads ``events.EFFECTS``
#: instead of naming kinds. Allowed: kinds a module makes (an event it records)
#: and the one finding about a single kind (the health report's result without id).
EFFECT_READERS: dict[str, frozenset[str]] = {
    "flowdrop_core.events": frozenset(),
    "flowdrop_core.replay": frozenset(),
    "flowdrop_core.storage._delta": frozenset(),
    "flowdrop_core.verdicts": frozenset(),
    "flowdrop_core.inspect.rows": frozenset(),
    "flowdrop_core.inspect.lifecycle": frozenset(),
    "flowdrop_core.inspect.decisions": frozenset(),
    "flowdrop_core.inspect.health": frozenset({"IDLESS_RESULT"}),
}


def kinds_named(name: str) -> list[tuple[str, int]]:
    """Every ``EventKind.<MEMBER>`` a module's source names, outside the table itself."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    table = None
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign | ast.Assign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "EFFECTS" for t in targets):
                table = node
    skip = {id(n) for n in ast.walk(table)} if table is not None else set()
    return [
        (node.attr, node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "EventKind"
        and id(node) not in skip
        and node.attr.isupper()
    ]


@pytest.mark.parametrize("name", sorted(EFFECT_READERS))
def test_what_a_kind_does_is_read_from_the_one_table(name: str) -> None:
    named = [(k, line) for k, line in kinds_named(name) if k not in EFFECT_READERS[name]]
    assert not named, f"{name} names decision kinds {named}: read what they do from events.EFFECTS"


def private_reads(name: str, attr: str) -> list[int]:
    """The lines where a module's source reads or writes ``<something>.<attr>``, not on self."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == attr
        and not (isinstance(node.value, ast.Name) and node.value.id == "self")
    ]


@pytest.mark.parametrize("name", sorted(set(MODULES) - {"flowdrop_core.engine"}))
def test_no_module_reads_the_engine_results_private_decisions(name: str) -> None:
    """A result's ``_events`` (the engine's node encoding) is the engine's own business."""
    assert not private_reads(name, "_events"), (
        f"{name} reads a result's private _events: use AppendResult.decisions() or "
        "appended_at_end()"
    )


def test_result_reuse_is_limited_to_interpreters_where_the_count_is_proven() -> None:
    """Reuse by reference count only on CPython 3.11-3.13 with the GIL, running source."""
    from flowdrop_core import engine

    proven = engine._reuse_proven
    assert proven("cpython", (3, 13), True, "engine.py")
    assert proven("cpython", (3, 11), True, "engine.py")
    assert not proven("cpython", (3, 10), True, "engine.py")  # below requires-python: not proven
    assert not proven("cpython", (3, 14), True, "engine.py")  # locals may be borrowed
    assert not proven("cpython", (3, 13), False, "engine.py")  # free-threaded
    assert not proven("cpython", (3, 12), True, "engine.cpython-312-x86_64-linux-gnu.so")
    assert not proven("pypy", (3, 11), True, "engine.py")
    if not proven():
        assert engine._refs is engine._never_free


def test_calibration_turns_reuse_off_where_a_held_result_counts_as_free() -> None:
    """An interpreter whose count misses the local name (3.14, mypyc) would overwrite held results."""
    import sys

    from flowdrop_core import engine

    def borrowed(obj: object, /) -> int:
        # This function's own argument is one reference more than the engine's direct
        # call counts; one fewer again is the local name such an interpreter borrows:
        # a held result counts 3, as a free one does here.
        return sys.getrefcount(obj) - 2

    assert engine._calibrated(borrowed) is engine._never_free
    if sys.implementation.name == "cpython" and engine._reuse_proven():
        assert engine._calibrated(sys.getrefcount) is sys.getrefcount
        assert engine._refs is sys.getrefcount
