"""Build step: the Streamlit inspector's files go into the wheel under ``inspector_ui/app/``.

The repository keeps the inspector where Streamlit's multipage layout wants it
(``app.py`` and ``pages/`` at the top, ``streamlit run app.py`` from a clone),
next to its ``.streamlit/config.toml`` and the ``sample_data/`` its pages
open. A wheel must not put top-level ``app`` or ``pages`` names into
site-packages, so the build copies them under the UI package instead::

    inspector_ui/app/app.py
    inspector_ui/app/pages/*.py
    inspector_ui/app/.streamlit/config.toml
    inspector_ui/app/sample_data/{*.json,*.jsonl,imports/*}

``flowdrop-buffer inspect`` runs that copy (:mod:`inspector_ui.location`
finds it, or the clone's files in an editable install, where nothing is
copied). Everything else is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent

#: What the inspector needs beside the UI package, as (glob, relative to the root).
APP_FILES = (
    "app.py",
    "serve.py",
    "pages/*.py",
    ".streamlit/config.toml",
    "sample_data/*.json",
    "sample_data/*.jsonl",
    "sample_data/imports/*",
)


class BuildPyWithInspector(build_py):
    """``build_py``, then the inspector's files copied to ``inspector_ui/app/`` in the build."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install runs the clone's own files
        target = Path(self.build_lib) / "inspector_ui" / "app"
        if target.exists():
            shutil.rmtree(target)  # nothing stale from an earlier build
        copied = 0
        for pattern in APP_FILES:
            for source in sorted(ROOT.glob(pattern)):
                if source.is_file():
                    dest = target / source.relative_to(ROOT)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, dest)
                    copied += 1
        if not (target / "app.py").is_file() or not (target / "pages").is_dir():
            raise RuntimeError(f"the inspector's app.py and pages/ are missing from {ROOT}")
        print(f"inspector: {copied} files copied to {target}")


setup(cmdclass={"build_py": BuildPyWithInspector})
