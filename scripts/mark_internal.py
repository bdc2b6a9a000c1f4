"""Give every internal module a leading underscore: ``git mv`` it and rewrite what names it.

The internal modules are ``INTERNAL`` of ``tests/test_architecture.py`` (read
from its source, not imported). For each ``flowdrop_core.a.b`` the file
``flowdrop_core/a/b.py`` becomes ``flowdrop_core/a/_b.py``, and every text
file of the repository is rewritten:

- dotted names ``flowdrop_core.a.b`` (imports, mock targets, ``:mod:`` links)
  become ``flowdrop_core.a._b``;
- ``from flowdrop_core.a import b`` (the submodule by name) becomes
  ``from flowdrop_core.a import _b as b``, so the code that uses ``b`` is unchanged;
- paths ``flowdrop_core/a/b.py`` (and ``a/b.py`` for a module of a subpackage)
  become ``flowdrop_core/a/_b.py``.

Without ``--apply`` it prints the plan and changes nothing. ``--no-git``
renames with the file system (a copy of the repository that is not a git
work tree). Run it once, on a clean tree, then ``make lint`` and ``make test``.
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Folders and files whose text may name a module (``.venv`` and data are never touched).
TEXT_GLOBS = (
    "*.py",
    "*.md",
    "*.toml",
    "Makefile",
    ".ci/run",
    "flowdrop_core/**/*.py",
    "inspector_ui/**/*.py",
    "pages/**/*.py",
    "tests/**/*.py",
    "tests/**/*.txt",
    "benchmarks/**/*.py",
    "scripts/**/*.py",
    "scripts/*.txt",
    "examples/**/*.py",
    "docs/*.md",
)


@dataclass(frozen=True)
class Rename:
    """One internal module: its dotted name before and after, and its file before and after."""

    old: str
    new: str
    old_path: str
    new_path: str

    @property
    def package(self) -> str:
        return self.old.rpartition(".")[0]

    @property
    def base(self) -> str:
        return self.old.rpartition(".")[2]


def internal_modules(root: Path = ROOT) -> list[str]:
    """``INTERNAL``'s keys, read from ``tests/test_architecture.py`` by evaluating its literal."""
    source = (root / "tests" / "test_architecture.py").read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == "INTERNAL"
            and node.value is not None
        ):
            # The literal uses dict.fromkeys, f-strings and generators only.
            value = eval(compile(ast.Expression(node.value), "INTERNAL", "eval"), {})
            assert isinstance(value, dict)
            return sorted(str(k) for k in value)
    raise SystemExit("tests/test_architecture.py has no INTERNAL")


def plan(root: Path = ROOT) -> list[Rename]:
    out = []
    for name in internal_modules(root):
        package, _, base = name.rpartition(".")
        if base.startswith("_"):
            continue  # already marked
        folder = package.replace(".", "/")
        out.append(
            Rename(name, f"{package}._{base}", f"{folder}/{base}.py", f"{folder}/_{base}.py")
        )
    return out


def rewrite_from_imports(text: str, renames: list[Rename]) -> str:
    """``from package import b`` -> ``from package import _b as b`` for each renamed ``b``."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    by_package: dict[str, dict[str, Rename]] = {}
    for r in renames:
        by_package.setdefault(r.package, {})[r.base] = r
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, int, str]] = []  # (line, col, end line, end col, new)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module in by_package and not node.level):
            continue
        names = by_package[node.module]
        if not any(a.name in names for a in node.names):
            continue
        parts = [
            (
                f"_{a.name} as {a.asname or a.name}"
                if a.name in names
                else (f"{a.name} as {a.asname}" if a.asname else a.name)
            )
            for a in node.names
        ]
        one_line = f"from {node.module} import {', '.join(parts)}"
        end_line = node.end_lineno or node.lineno
        end_col = node.end_col_offset or 0
        indent = " " * node.col_offset
        if len(indent) + len(one_line) > 100:
            inner = "".join(f"{indent}    {p},\n" for p in parts)
            new = f"from {node.module} import (\n{inner}{indent})"
        else:
            new = one_line
        edits.append((node.lineno, node.col_offset, end_line, end_col, new))
    for line, col, end_line, end_col, new in sorted(edits, reverse=True):
        head = lines[line - 1][:col]
        tail = lines[end_line - 1][end_col:]
        lines[line - 1 : end_line] = [head + new + tail]
    return "".join(lines)


def rewrite(text: str, renames: list[Rename]) -> str:
    """The text with every renamed module's dotted name, submodule import and path rewritten."""
    text = rewrite_from_imports(text, renames)
    for r in renames:
        text = re.sub(rf"(?<![\w.]){re.escape(r.old)}(?![\w])", r.new, text)
        short = r.old_path.removeprefix("flowdrop_core/")
        prefix = "flowdrop_core/" if "/" not in short else "(?:flowdrop_core/)?"
        folder, _, file = short.rpartition("/")
        path = rf"(?<![\w./])({prefix}{re.escape(folder + '/' if folder else '')}){re.escape(file)}"
        text = re.sub(path, rf"\g<1>_{file}", text)
    return text


def text_files(root: Path) -> list[Path]:
    seen: set[Path] = set()
    for pattern in TEXT_GLOBS:
        for path in root.glob(pattern):
            if path.is_file() and ".venv" not in path.parts and path not in seen:
                seen.add(path)
    return sorted(seen)


def apply(root: Path, renames: list[Rename], *, git: bool) -> list[Path]:
    """Rename the files and rewrite every text file; the files changed."""
    for r in renames:
        if git:
            subprocess.run(["git", "mv", r.old_path, r.new_path], cwd=root, check=True)
        else:
            (root / r.old_path).rename(root / r.new_path)
    changed = []
    for path in text_files(root):
        before = path.read_text(encoding="utf-8")
        after = rewrite(before, renames)
        if after != before:
            path.write_text(after, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apply", action="store_true", help="rename and rewrite (default: plan)")
    parser.add_argument("--no-git", action="store_true", help="rename without git mv")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this)")
    args = parser.parse_args(argv)
    renames = plan(args.root)
    for r in renames:
        print(f"{r.old_path} -> {r.new_path}")
    if not args.apply:
        print(f"{len(renames)} modules; nothing changed (--apply to do it)")
        return 0
    changed = apply(args.root, renames, git=not args.no_git)
    print(f"{len(renames)} modules renamed; {len(changed)} files rewritten")
    return 0


if __name__ == "__main__":
    sys.exit(main())
