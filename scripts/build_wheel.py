"""Build the project's wheel from a clean copy of the source tree; print the wheel's path.

    python scripts/build_wheel.py OUT_DIR [--source DIR]

The source (this repository unless ``--source``) is copied to a temporary
folder first, without the virtual environment, git data, caches or an earlier
``build/``, so nothing stale reaches the wheel and the tree is left as it
was. The build is ``pip wheel --no-deps`` in pip's isolated build
environment (setuptools from the package index, as for any user). Used by
``scripts/check_install.sh`` and ``tests/test_wheel.py``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: Never part of a build: environments, VCS data, caches, build leftovers.
SKIP = shutil.ignore_patterns(
    ".venv",
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".pytest_cache",
    ".hypothesis",
    ".ruff_cache",
    ".mypy_cache",
    ".mutate",
    ".coverage",
)


def build_wheel(out_dir: Path, source: Path = ROOT) -> Path:
    """The wheel built from a copy of ``source``, written to ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="flowdrop-build-") as tmp:
        tree = Path(tmp) / "src"
        shutil.copytree(source, tree, ignore=SKIP, symlinks=True)
        before = set(out_dir.glob("*.whl"))
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--wheel-dir",
                str(out_dir),
                str(tree),
            ],
            check=True,
        )
    built = sorted(set(out_dir.glob("*.whl")) - before) or sorted(out_dir.glob("*.whl"))
    if len(built) != 1:
        raise RuntimeError(f"expected one wheel in {out_dir}, found {[p.name for p in built]}")
    return built[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--source", type=Path, default=ROOT)
    args = parser.parse_args()
    print(build_wheel(args.out_dir, args.source))


if __name__ == "__main__":
    main()
