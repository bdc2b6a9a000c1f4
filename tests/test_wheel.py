"""The wheel users install: its files and its metadata, from a real build.

Built once per run by ``scripts/build_wheel.py`` (a clean copy of the tree,
``pip wheel``). It must carry the inspector under the UI package
(``inspector_ui/app/``: ``app.py``, every page, the Streamlit settings, the
sample data the pages open), the library's ``py.typed``, and no top-level
``app`` or ``pages`` in site-packages; its base requirements are pydantic
only, the inspector an extra. Installing it is ``scripts/check_install.sh``.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import flowdrop_core

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_wheel.py"), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        pytest.fail(f"the wheel did not build:\n{built.stderr[-3000:]}")
    return Path(built.stdout.strip().splitlines()[-1])


def _names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        return set(zf.namelist())


def test_the_wheel_carries_the_inspector_under_its_ui_package(wheel: Path) -> None:
    names = _names(wheel)
    assert "inspector_ui/app/app.py" in names
    assert "inspector_ui/app/serve.py" in names
    pages = {p.name for p in (ROOT / "pages").glob("*.py")}
    assert pages  # the repository's pages, one to one
    assert {n.removeprefix("inspector_ui/app/pages/") for n in names if "/app/pages/" in n} == pages
    assert "inspector_ui/app/.streamlit/config.toml" in names
    samples = {p.name for p in (ROOT / "sample_data").glob("*.json")}
    shipped = {n.rsplit("/", 1)[1] for n in names if n.startswith("inspector_ui/app/sample_data/")}
    assert samples <= shipped
    assert "inspector_ui/app/sample_data/imports/openai_chat.json" in names  # the Playground's


def test_the_wheel_has_no_top_level_app_or_pages(wheel: Path) -> None:
    top = {n.split("/", 1)[0] for n in _names(wheel)}
    dist_info = {t for t in top if t.endswith(".dist-info")}
    assert top - dist_info == {"flowdrop_core", "inspector_ui"}


def test_the_wheel_ships_type_information(wheel: Path) -> None:
    assert "flowdrop_core/py.typed" in _names(wheel)


def test_the_wheel_metadata_names_the_version_and_a_lean_base(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        meta_name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    assert meta["Version"] == flowdrop_core.__version__
    requires = meta.get_all("Requires-Dist") or []
    base = [r for r in requires if "extra ==" not in r]
    assert [r.split("<")[0].split(">")[0].strip() for r in base] == ["pydantic"]
    extras = set(meta.get_all("Provides-Extra") or [])
    assert {"inspector", "redis", "postgres", "otel", "all", "test"} <= extras
    assert {"langgraph", "openai-agents", "pydantic-ai"} <= extras
    inspector = [r for r in requires if 'extra == "inspector"' in r]
    assert sorted(r.split("<")[0].split(">")[0] for r in inspector) == [
        "altair",
        "pandas",
        "streamlit",
    ]
