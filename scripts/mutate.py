"""Mutation testing of the rule core: does the fast test suite notice a planted bug?

Each mutant is one small change to one file of the rule core, made on the AST
(a comparison flipped, ``and``/``or`` swapped, a ``not`` removed or an ``if``
negated, a constant changed, a statement deleted, a return value replaced by
``None``, ``+``/``-`` swapped, ``break``/``continue`` swapped). A mutant is
*killed* when a test fails (or times out), *survived* when they all pass.

How a run stays affordable on two cores (about 3,700 mutants):

- **Only the tests that reach the change.** One run of the unmutated tests
  under coverage (``scripts/mutate_plugin.py``, cached in
  ``.mutate/testmap.json`` while sources and tests are unchanged) records
  which test reached which line. A test that never reaches the mutated line
  runs exactly as before, so only the ones that do can kill it; they run
  fastest first with ``-x``. A line run at import (a constant, a class body)
  goes to every test that runs the file's code. ``--confirm`` runs every test
  before it calls a mutant a survivor (the map cannot see a subprocess or a
  shared fixture's later users); ``--no-map`` runs every test for every mutant.
- **A fork server per job** (``scripts/mutate_worker.py``) imports pytest and
  Hypothesis once; each mutant's tests run in a fresh fork that imports the
  mutated file for the first time, in a private copy of the repository per
  job, so the working tree is never touched.

Survivors that cannot change behaviour (equivalent mutants) are listed with a
one-line reason in ``scripts/mutate_equivalent.txt`` under their key, which
names the file, the enclosing function, the operator and the source change
(not line numbers), so it stays valid while the code around it moves. The
kill rate per file is ``killed / (mutants - equivalent)``; a timeout counts as
killed and is shown in its own column.

Usage (``make mutate`` runs the first form; results go to
``.mutate/results.jsonl``, and ``--resume`` continues a stopped run)::

    python scripts/mutate.py --jobs 2
    python scripts/mutate.py --files flowdrop_core/provider.py --sample 40 --seed 1
    python scripts/mutate.py --resume --limit 100      # the next 100 not yet run
    python scripts/mutate.py --resume --rerun-survivors --confirm   # after new tests
    python scripts/mutate.py --report                  # summarize the results file
    python scripts/mutate.py --list --files flowdrop_core/_ids.py

During a run the property tests read ``FLOWDROP_EXAMPLES_SCALE`` (set to
``--examples-scale``, default 0.3) and run derandomized, so a surviving
mutant is reproducible and the figure is a lower bound of the full suite's
power.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import queue
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The rule core. A directory stands for every ``.py`` file in it (the
#: importers become a package); a missing path is skipped with a note.
FILES = [
    "flowdrop_core/engine.py",
    "flowdrop_core/context.py",
    "flowdrop_core/messages.py",
    "flowdrop_core/provider.py",
    "flowdrop_core/_ids.py",
    "flowdrop_core/importers",
]

#: The tests run against mutants: every library test folder (a pattern per folder) ...
TESTS = [
    "tests/core/test_*.py",
    "tests/replay/test_*.py",
    "tests/inspect/test_*.py",
    "tests/importers/test_*.py",
    "tests/storage/test_*.py",
    "tests/cli/test_*.py",
]

#: ... less the tests marked (in tests/conftest.py) as UI, browser, Redis or Postgres
#: ones. The slow ones stay: the property tests are where most mutants die.
MARKS = "not ui and not browser and not redis and not postgres"

EQUIVALENT_FILE = ROOT / "scripts" / "mutate_equivalent.txt"
RESULTS_FILE = ROOT / ".mutate" / "results.jsonl"
MAP_FILE = ROOT / ".mutate" / "testmap.json"
COPY_IGNORE = shutil.ignore_patterns(
    ".venv", ".git", ".mutate", ".hypothesis", ".pytest_cache", "__pycache__", "screenshots"
)

_NEGATED_CMP: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
_SKIP_PRAGMAS = ("pragma: no mutate", "pragma: no cover")


# --------------------------------------------------------------------------- mutants


@dataclass(frozen=True)
class Mutant:
    """One planted change: where (file, function), what (operator, source change)."""

    path: str
    index: int  # the n-th mutation site of the file, in the mutator's walk order
    key: str
    line: int
    first: int  # first line of the statement holding the change
    last: int  # last line of the changed node


def _short(node: ast.AST, limit: int = 60) -> str:
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Mutator(ast.NodeTransformer):
    """Walks a module in a fixed order; counts mutation sites, applies the ``target``-th.

    With ``target`` -1 it only records the sites (descriptions and lines).
    """

    def __init__(self, source: str, target: int = -1) -> None:
        self.target = target
        self.count = 0
        # (qualname, "op: before -> after", line, first line of statement, last line of node)
        self.sites: list[tuple[str, str, int, int, int]] = []
        self.stack: list[str] = []
        self.statement_line = 0
        self.applied = False
        lines = source.splitlines()
        self.skip_lines = {
            k + 1 for k, text in enumerate(lines) if any(p in text for p in _SKIP_PRAGMAS)
        }

    # -- bookkeeping

    def _site(self, node: ast.AST, op: str, before: ast.AST, after: ast.AST) -> bool:
        """Record one site; True when it is the one to apply."""
        line = getattr(node, "lineno", 0)
        if line in self.skip_lines:
            return False
        qual = ".".join(self.stack) or "<module>"
        first = min(self.statement_line or line, line)
        last = getattr(node, "end_lineno", None) or line
        self.sites.append((qual, f"{op}: {_short(before)} -> {_short(after)}", line, first, last))
        hit = self.count == self.target
        self.count += 1
        if hit:
            self.applied = True
        return hit

    # -- scopes and what is never mutated

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.stack.append(node.name)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [d if d is None else self.visit(d) for d in node.args.kw_defaults]
        node.body = self._body(node.body)
        self.stack.pop()
        return node

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.stack.append(node.name)
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.keywords = [self.visit(k) for k in node.keywords]
        node.body = self._body(node.body)
        self.stack.pop()
        return node

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = self._body(node.body)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def visit_Import(self, node: ast.Import) -> ast.AST:
        return node

    visit_ImportFrom = visit_Import  # type: ignore[assignment]

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """Statements of a block: each may be deleted, then is visited itself."""
        out: list[ast.stmt] = []
        outer = self.statement_line
        for k, stmt in enumerate(body):
            if _is_docstring(stmt, k) or _is_exempt(stmt):
                out.append(stmt)
                continue
            self.statement_line = stmt.lineno
            if _deletable(stmt) and self._site(stmt, "delete", stmt, ast.Pass()):
                out.append(ast.copy_location(ast.Pass(), stmt))
                continue
            out.append(self.visit(stmt))
        self.statement_line = outer
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        # Blocks nested in compound statements are walked by _body too.
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, name, self._body(value))
        for name, value in ast.iter_fields(node):
            if (
                name in ("body", "orelse", "finalbody")
                and isinstance(value, list)
                and value
                and isinstance(value[0], ast.stmt)
            ):
                continue
            if isinstance(value, list):
                new = []
                for item in value:
                    if isinstance(item, ast.AST):
                        item = self.visit(item)
                    new.append(item)
                setattr(node, name, new)
            elif isinstance(value, ast.AST):
                setattr(node, name, self.visit(value))
        return node

    # -- operators

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        for k, op in enumerate(node.ops):
            flipped = _NEGATED_CMP.get(type(op))
            if flipped is None:
                continue
            after = ast.Compare(
                node.left, [*node.ops[:k], flipped(), *node.ops[k + 1 :]], node.comparators
            )
            if self._site(node, "compare", node, after):
                return ast.copy_location(after, node)
        return self.generic_visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        after = ast.BoolOp(ast.Or() if isinstance(node.op, ast.And) else ast.And(), node.values)
        if self._site(node, "boolop", node, after):
            return ast.copy_location(after, node)
        return self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if isinstance(node.op, ast.Not) and self._site(node, "not", node, node.operand):
            return node.operand
        return self.generic_visit(node)

    def _negate_test(self, node: ast.If | ast.While | ast.IfExp) -> None:
        test = node.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return  # removing that ``not`` is already a site
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and type(test.ops[0]) in _NEGATED_CMP
        ):
            return  # flipping the comparison is the same mutant
        after = ast.UnaryOp(ast.Not(), node.test)
        if self._site(node, "negate", node.test, after):
            node.test = ast.copy_location(after, node.test)

    def visit_If(self, node: ast.If) -> ast.AST:
        self._negate_test(node)
        return self.generic_visit(node)

    def visit_While(self, node: ast.While) -> ast.AST:
        self._negate_test(node)
        return self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        self._negate_test(node)
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        options: list[int]  # a bool is an int
        if isinstance(value, bool):
            options = [not value]
        elif isinstance(value, int):
            options = [value + 1] + ([0] if value not in (0, -1) else [])
        else:
            return node  # strings (messages, keys) and None are left alone
        for option in options:
            after = ast.Constant(option)
            if self._site(node, "constant", node, after):
                return ast.copy_location(after, node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        swap = {ast.Add: ast.Sub, ast.Sub: ast.Add}.get(type(node.op))
        if swap is not None:
            after = ast.BinOp(node.left, swap(), node.right)
            if self._site(node, "arith", node, after):
                return ast.copy_location(after, node)
        return self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        value = node.value
        if value is not None and not (isinstance(value, ast.Constant) and value.value is None):
            after = ast.Return(ast.Constant(None))
            if self._site(node, "return", node, after):
                return ast.copy_location(after, node)
        return self.generic_visit(node)

    def visit_Break(self, node: ast.Break) -> ast.AST:
        if self._site(node, "loop", node, ast.Continue()):
            return ast.copy_location(ast.Continue(), node)
        return node

    def visit_Continue(self, node: ast.Continue) -> ast.AST:
        if self._site(node, "loop", node, ast.Break()):
            return ast.copy_location(ast.Break(), node)
        return node


def _is_docstring(stmt: ast.stmt, k: int) -> bool:
    return (
        k == 0
        and isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _is_exempt(stmt: ast.stmt) -> bool:
    """``__all__`` and ``if TYPE_CHECKING`` carry no behaviour a test could see."""
    if isinstance(stmt, ast.Assign) and any(
        isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets
    ):
        return True
    return isinstance(stmt, ast.If) and "TYPE_CHECKING" in ast.unparse(stmt.test)


def _deletable(stmt: ast.stmt) -> bool:
    """Statements whose deletion is a mutant (a ``return`` is mutated to ``return None``)."""
    return isinstance(
        stmt,
        ast.Assign
        | ast.AugAssign
        | ast.AnnAssign
        | ast.Expr
        | ast.Raise
        | ast.Return
        | ast.If
        | ast.Delete,
    ) and not (isinstance(stmt, ast.AnnAssign) and stmt.value is None)


def mutants_of(path: str) -> list[Mutant]:
    """Every mutation site of one file, with its stable key."""
    source = (ROOT / path).read_text(encoding="utf-8")
    mutator = _Mutator(source)
    mutator.visit(ast.parse(source))
    seen: Counter[str] = Counter()
    out = []
    for index, (qual, change, line, first, last) in enumerate(mutator.sites):
        base = f"{path}::{qual}::{change}"
        key = f"{base}#{seen[base]}"
        seen[base] += 1
        out.append(Mutant(path, index, key, line, first, last))
    return out


def mutated_source(path: str, index: int, source: str | None = None) -> str:
    """The file's source (read from the repository unless given) with its ``index``-th site mutated."""
    if source is None:
        source = (ROOT / path).read_text(encoding="utf-8")
    mutator = _Mutator(source, target=index)
    tree = mutator.visit(ast.parse(source))
    if not mutator.applied:
        raise RuntimeError(f"{path}: no mutation site {index}")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


# --------------------------------------------------------------------------- files and tests


def expand(files: list[str]) -> list[str]:
    out: list[str] = []
    for name in files:
        path = ROOT / name
        if path.is_dir():
            out.extend(str(p.relative_to(ROOT)) for p in sorted(path.rglob("*.py")))
        elif path.is_file():
            out.append(name)
        else:
            print(f"note: {name} does not exist here; skipped", file=sys.stderr)
    return out


def tests_for(path: str, tests: list[str]) -> list[str]:
    """The test files for mutants of ``path`` (patterns expanded, missing files left out)."""
    out: list[str] = []
    for name in tests:
        found = sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(name))
        out.extend(f for f in found if f not in out)
    return out


def load_equivalent() -> dict[str, str]:
    """``KEY  # reason`` lines of the equivalent-mutant file."""
    out: dict[str, str] = {}
    if not EQUIVALENT_FILE.exists():
        return out
    for raw in EQUIVALENT_FILE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, reason = line.partition("  # ")
        out[key.strip()] = reason.strip()
    return out


# --------------------------------------------------------------------------- running


_PYTEST_ARGS = [
    *("-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "mutate_plugin"),
    *("-m", MARKS),
]


def _env(workdir: Path, scale: float) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(workdir), str(workdir / "scripts")]),
        "FLOWDROP_EXAMPLES_SCALE": str(scale),
        "FLOWDROP_MUTATE": "1",
    }


class Worker:
    """One job's fork server (``scripts/mutate_worker.py``) in its private copy.

    Every test run of a mutation run goes through one: the baseline, the test
    map and each mutant's tests.
    """

    def __init__(self, workdir: Path, scale: float) -> None:
        self.workdir = workdir
        self.proc = subprocess.Popen(
            [sys.executable, str(workdir / "scripts" / "mutate_worker.py")],
            cwd=workdir,
            env=_env(workdir, scale),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(
        self, tests: list[str], timeout: float, extra_env: dict[str, str] | None = None
    ) -> tuple[str, float]:
        """Run ``tests`` with ``-x`` in a fresh fork: killed, survived, timeout or error."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"args": [*_PYTEST_ARGS, *tests], "env": extra_env or {}, "timeout": timeout}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the fork server in {self.workdir} stopped")
        reply = json.loads(answer)
        return reply["status"], reply["seconds"]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class TestMap:
    """Which test reached which line of the unmutated rule core (``mutate_plugin``).

    A test that never reaches a mutated line runs exactly as before, so only the
    tests that reach it can kill the mutant; they run fastest first. A line run
    while importing (empty context) counts as reached by every test that runs
    any of the file's code. The map cannot see a subprocess, a shared fixture's
    later users, nor another module using an imported constant, so
    ``--confirm`` runs every test before it calls a mutant a survivor.
    """

    def __init__(self, data: dict) -> None:
        self.lines: dict[str, dict[int, list[str]]] = {
            path: {int(n): ctx for n, ctx in by_line.items()}
            for path, by_line in data["lines"].items()
        }
        self.seconds: dict[str, float] = data["seconds"]

    @classmethod
    def build(cls, worker: Worker, tests: list[str], scale: float, cache: Path) -> TestMap:
        """Run every test once under coverage (cached while sources and tests are unchanged)."""
        workdir = worker.workdir
        digest = _fingerprint(tests, scale)
        if cache.exists():
            data = json.loads(cache.read_text(encoding="utf-8"))
            if data.get("fingerprint") == digest:
                return cls(data)
        out = workdir / ".mutate-map.json"
        status, took = worker.run(tests, 1800, {"FLOWDROP_MUTATE_MAP": str(out)})
        if status != "survived":
            raise SystemExit(f"the unmutated tests do not pass under coverage ({status})")
        raw = json.loads(out.read_text(encoding="utf-8"))
        lines = {
            str(Path(name).relative_to(workdir.resolve())): by_line
            for name, by_line in raw["lines"].items()
        }
        data = {"fingerprint": digest, "lines": lines, "seconds": raw["seconds"]}
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_text(json.dumps(data), encoding="utf-8")
        print(f"test map: {len(raw['seconds'])} tests in {took:.0f}s", flush=True)
        return cls(data)

    def timeout(self, chosen: list[str], most: float) -> float:
        """Seconds the chosen tests may take: 5x what they took unmutated, plus start-up."""
        return min(most, 30.0 + 5 * sum(self.seconds.get(t, 1.0) for t in chosen))

    def select(self, m: Mutant, files: list[str]) -> list[str] | None:
        """Node ids of the tests in ``files`` that reach the mutant; None: every test."""
        by_line = self.lines.get(m.path, {})
        reached: set[str] = set()
        for n in range(m.first, m.last + 1):
            reached.update(by_line.get(n, ()))
        if "" in reached:
            # Run at import (a constant, a class body, a signature): it can only matter
            # to a test that runs this file's code. Another module importing the name
            # is missed, which can only make a survivor; --confirm checks survivors.
            reached = {t for ctx in by_line.values() for t in ctx if t}
            if not reached:
                return None
        prefixes = tuple(f"{f}::" for f in files)
        chosen = [t for t in reached if t.startswith(prefixes)]
        return sorted(chosen, key=lambda t: self.seconds.get(t, 0.0))


def _fingerprint(tests: list[str], scale: float) -> str:
    h = hashlib.sha256(f"{scale}|{' '.join(sorted(tests))}".encode())
    for path in sorted([*ROOT.glob("flowdrop_core/**/*.py"), *ROOT.glob("tests/**/*.py")]):
        h.update(str(path.relative_to(ROOT)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _forget_bytecode(source: Path) -> None:
    """Delete the cached bytecode of a file just rewritten.

    Bytecode is cached (every other module and the rewritten tests load from
    it, which saves a third of a mutant's start-up), but a cached file is only
    checked against the source's size and mtime in seconds, which two mutants
    written in one second can share.
    """
    for pyc in (source.parent / "__pycache__").glob(f"{source.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def _make_workdirs(n: int) -> list[Path]:
    base = Path(tempfile.mkdtemp(prefix="flowdrop-mutate-"))
    dirs = []
    for k in range(n):
        d = base / f"w{k}"
        shutil.copytree(ROOT, d, ignore=COPY_IGNORE)
        dirs.append(d)
    probe = subprocess.run(
        [sys.executable, "-c", "import flowdrop_core; print(flowdrop_core.__file__)"],
        cwd=dirs[0],
        env={**os.environ, "PYTHONPATH": str(dirs[0])},
        capture_output=True,
        text=True,
        check=True,
    )
    if not probe.stdout.strip().startswith(str(dirs[0])):
        raise SystemExit(f"the copy's flowdrop_core is not the one imported: {probe.stdout}")
    return dirs


def run(
    mutants: list[Mutant],
    tests: list[str],
    jobs: int,
    timeout: float,
    scale: float,
    test_map: TestMap | None,
    confirm: bool = False,
) -> Iterator[dict]:
    """Run each mutant against the tests that reach it (``confirm``: survivors against all)."""
    dirs = _make_workdirs(jobs)
    workers = [Worker(d, scale) for d in dirs]
    free: queue.Queue[Worker] = queue.Queue()
    for w in workers:
        free.put(w)

    def one(m: Mutant) -> dict:
        worker = free.get()
        workdir = worker.workdir
        target = workdir / m.path
        original = target.read_text(encoding="utf-8")
        files = tests_for(m.path, tests)
        chosen = test_map.select(m, files) if test_map else None
        took = 0.0
        try:
            # From the private copy: edits to the repository during a run change nothing.
            target.write_text(mutated_source(m.path, m.index, original), encoding="utf-8")
            _forget_bytecode(target)
            status = "survived"  # no test reaches the change: none can see it
            if chosen is None:
                status, took = worker.run(files, timeout)
            elif chosen:
                assert test_map is not None  # only a map chooses tests
                ids = workdir / ".mutate-select.txt"
                ids.write_text("\n".join(chosen), encoding="utf-8")
                used = sorted({t.split("::", 1)[0] for t in chosen}, key=files.index)
                status, took = worker.run(
                    used, test_map.timeout(chosen, timeout), {"FLOWDROP_MUTATE_SELECT": str(ids)}
                )
            if status == "survived" and confirm and chosen is not None:
                status, more = worker.run(files, timeout)
                took += more
        finally:
            target.write_text(original, encoding="utf-8")
            _forget_bytecode(target)
            free.put(worker)
        return {
            "key": m.key,
            "file": m.path,
            "line": m.line,
            "status": status,
            "reached_by": "every test" if chosen is None else len(chosen),
            "seconds": round(took, 1),
        }

    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            yield from pool.map(one, mutants)
    finally:
        for w in workers:
            w.close()
        shutil.rmtree(dirs[0].parent, ignore_errors=True)


# --------------------------------------------------------------------------- report


def report(results: list[dict], files: list[str]) -> int:
    """Print the kill rate per file and the survivors; return how many files are under target."""
    equivalent = load_equivalent()
    by_file: dict[str, list[dict]] = defaultdict(list)
    for r in results:
        by_file[r["file"]].append(r)
    under = 0
    print(
        f"{'file':<42} {'mutants':>7} {'killed':>7} {'timeout':>7} {'equiv':>6} {'survived':>8} "
        f"{'kill rate':>9}"
    )
    survivors: list[dict] = []
    for path in files:
        rows = by_file.get(path, [])
        if not rows:
            continue
        killed = sum(1 for r in rows if r["status"] in ("killed", "timeout"))
        timeouts = sum(1 for r in rows if r["status"] == "timeout")
        equiv = [r for r in rows if r["status"] == "survived" and r["key"] in equivalent]
        alive = [r for r in rows if r["status"] == "survived" and r["key"] not in equivalent]
        errors = [r for r in rows if r["status"].startswith("error")]
        survivors.extend(alive + errors)
        denominator = len(rows) - len(equiv)
        rate = 100.0 * killed / denominator if denominator else 100.0
        under += rate < 97.0
        print(
            f"{path:<42} {len(rows):>7} {killed:>7} {timeouts:>7} {len(equiv):>6} {len(alive):>8} "
            f"{rate:>8.1f}%"
        )
    if survivors:
        print("\nsurvivors (not in scripts/mutate_equivalent.txt):")
        for r in sorted(survivors, key=lambda r: (r["file"], r["line"])):
            print(f"  line {r['line']:>4}  {r['key']}  [{r['status']}]")
    return under


def _read_results(path: Path) -> list[dict]:
    if not path.exists():
        return []
    latest: dict[str, dict] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            latest[r["key"]] = r
    return list(latest.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", nargs="+", default=None, help="files or folders to mutate")
    ap.add_argument("--tests", nargs="+", default=TESTS, help="test files to run per mutant")
    ap.add_argument("--jobs", type=int, default=2, help="parallel mutants (default 2)")
    ap.add_argument("--sample", type=int, default=0, help="at most N mutants per file (0 = all)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sample")
    ap.add_argument("--limit", type=int, default=0, help="run at most N mutants this time")
    ap.add_argument(
        "--timeout", type=float, default=0, help="seconds per mutant (default 3x baseline)"
    )
    ap.add_argument(
        "--examples-scale", type=float, default=0.3, help="property-test examples factor"
    )
    ap.add_argument("--only", default="", help="only mutants whose key contains this text")
    ap.add_argument(
        "--resume", action="store_true", help="skip mutants already in the results file"
    )
    ap.add_argument(
        "--rerun-survivors",
        action="store_true",
        help="with --resume: run the survivors again (not those listed as equivalent)",
    )
    ap.add_argument("--results", type=Path, default=RESULTS_FILE, help="JSON-lines results file")
    ap.add_argument("--no-map", action="store_true", help="run every test for every mutant (slow)")
    ap.add_argument(
        "--confirm", action="store_true", help="run every test before calling a mutant a survivor"
    )
    ap.add_argument("--report", action="store_true", help="only summarize the results file")
    ap.add_argument("--list", action="store_true", help="only list the mutants")
    ap.add_argument("--fail-under", action="store_true", help="exit 1 when a file is under 97%%")
    args = ap.parse_args(argv)
    # A stopped run (kill PID) still removes its private copies.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    files = expand(args.files or FILES)
    if args.report:
        under = report(_current(_read_results(args.results), files), files)
        return 1 if args.fail_under and under else 0

    mutants: list[Mutant] = []
    for path in files:
        ms = mutants_of(path)
        if args.only:
            ms = [m for m in ms if args.only in m.key]
        if args.sample and len(ms) > args.sample:
            ms = sorted(
                random.Random(f"{args.seed}:{path}").sample(ms, args.sample), key=lambda m: m.index
            )
        mutants.extend(ms)
    if args.list:
        for m in mutants:
            print(f"{m.line:>5}  {m.key}")
        print(f"{len(mutants)} mutants")
        return 0

    previous = _read_results(args.results) if args.resume else []
    equivalent = load_equivalent()
    done = {
        r["key"]
        for r in previous
        if not (args.rerun_survivors and r["status"] == "survived" and r["key"] not in equivalent)
    }
    todo = [m for m in mutants if m.key not in done]
    if args.limit:
        todo = todo[: args.limit]
    print(f"{len(mutants)} mutants in {len(files)} files; {len(todo)} to run now", flush=True)

    if todo:
        baseline_dir = _make_workdirs(1)[0]
        baseline = Worker(baseline_dir, args.examples_scale)
        try:
            every = sorted({t for m in todo for t in tests_for(m.path, args.tests)})
            status, took = baseline.run(every, 1800)
            if status != "survived":
                print(
                    f"the unmutated tests do not pass ({status}); fix them first", file=sys.stderr
                )
                return 2
            test_map = (
                None
                if args.no_map
                else TestMap.build(baseline, every, args.examples_scale, MAP_FILE)
            )
        finally:
            baseline.close()
            shutil.rmtree(baseline_dir.parent, ignore_errors=True)
        # Generous: a busy machine must not fake a kill.
        timeout = args.timeout or max(90.0, 4 * took)
        print(
            f"baseline {took:.1f}s; timeout {timeout:.0f}s per mutant; {args.jobs} jobs", flush=True
        )
        args.results.parent.mkdir(parents=True, exist_ok=True)
        if not args.resume:
            args.results.write_text("", encoding="utf-8")
        with args.results.open("a", encoding="utf-8") as out:
            for k, r in enumerate(
                run(
                    todo,
                    args.tests,
                    args.jobs,
                    timeout,
                    args.examples_scale,
                    test_map,
                    args.confirm,
                ),
                1,
            ):
                out.write(json.dumps(r) + "\n")
                out.flush()
                mark = "." if r["status"] in ("killed", "timeout") else "S"
                print(mark, end="" if k % 50 else f" {k}/{len(todo)}\n", flush=True)
        print()
    under = report(_current(_read_results(args.results), files), files)
    return 1 if args.fail_under and under else 0


def _current(results: list[dict], files: list[str]) -> list[dict]:
    """The results of mutants the code has now (a changed function's old mutants drop out)."""
    keys = {m.key for path in files for m in mutants_of(path)}
    return [r for r in results if r["key"] in keys]


if __name__ == "__main__":
    raise SystemExit(main())
