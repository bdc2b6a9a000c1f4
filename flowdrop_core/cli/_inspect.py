"""``flowdrop-buffer inspect``: start the Streamlit inspector, on this machine only by default.

The inspector is the optional extra ``inspector`` (Streamlit, pandas,
Altair). This command never imports Streamlit: it finds the inspector's
``app.py`` and runs ``python -m streamlit run`` on it in place of this process
(POSIX; a child process elsewhere), so a signal or Ctrl-C reaches the server
itself. Without the extra it says which one to install (exit 2).

Where ``app.py`` is (:func:`app_dir`): an installed wheel carries it, with
``pages/``, ``.streamlit/config.toml`` and the sample data, in
``inspector_ui/app/`` (copied there by the build, see ``setup.py``); a clone
(an editable install) runs its own ``app.py`` beside the ``inspector_ui``
folder. Streamlit reads ``.streamlit/config.toml`` from the current folder
only, so the inspector's settings are passed as options; ``--address`` and
``--port`` override them.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from flowdrop_core.cli._options import positive_int
from flowdrop_core.cli._output import CliError

__all__ = [
    "DEFAULT_ADDRESS",
    "INSTALL_HINT",
    "NAME",
    "app_dir",
    "register",
    "run",
    "streamlit_argv",
]

NAME = "inspect"

#: Loopback, like ``make run``: nobody else reaches the inspector unless asked.
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 8501

#: What to run when the extra is missing.
INSTALL_HINT = 'pip install "flowdrop-buffer-inspector[inspector]"'


def register(subparsers: Any) -> None:
    """Add ``inspect`` to the command line's subparsers."""
    ins = subparsers.add_parser(
        "inspect",
        help="start the Streamlit inspector in a browser (the extra 'inspector')",
        description="Start the FlowDrop buffer inspector (Streamlit) and serve it on ADDRESS:PORT. "
        f"It listens on {DEFAULT_ADDRESS} (this machine only) unless --address says otherwise; "
        "serving it to a team is described in the README. Needs the extra 'inspector': "
        f"{INSTALL_HINT}.",
    )
    ins.add_argument(
        "--port",
        type=_port,
        default=DEFAULT_PORT,
        metavar="N",
        help=f"port to listen on (default {DEFAULT_PORT})",
    )
    ins.add_argument(
        "--address",
        default=DEFAULT_ADDRESS,
        metavar="A",
        help=f"address to listen on (default {DEFAULT_ADDRESS}; 0.0.0.0 serves the network)",
    )
    ins.add_argument(
        "--headless",
        action="store_true",
        help="do not open a browser (servers, CI; implied when stdin is not a terminal)",
    )
    ins.set_defaults(handler=run)


def _port(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text!r}")
    return value


def _streamlit_installed() -> bool:
    try:
        return importlib.util.find_spec("streamlit") is not None
    except (ImportError, ValueError):  # a blocked or half-imported module counts as absent
        return False


def app_dir() -> Path:
    """The folder holding the inspector's ``app.py``, ``serve.py`` and ``pages/`` (installed, else the clone's).

    Raises :class:`CliError` when neither is there (the UI package is missing
    or was installed without its app files).
    """
    spec = importlib.util.find_spec("inspector_ui")
    if spec is None or not spec.submodule_search_locations:
        raise CliError(f"the inspector is not installed; install it with: {INSTALL_HINT}")
    package = Path(next(iter(spec.submodule_search_locations)))
    for folder in (package / "app", package.parent):
        if (
            all((folder / name).is_file() for name in ("app.py", "serve.py"))
            and (folder / "pages").is_dir()
        ):
            return folder
    raise CliError(
        f"the inspector's app.py and pages/ are not in {package / 'app'}; "
        f"reinstall it with: {INSTALL_HINT}"
    )


def _config_options(folder: Path) -> list[str]:
    """The app's ``.streamlit/config.toml`` as ``--section.key=value`` options."""
    path = folder / ".streamlit" / "config.toml"
    if not path.is_file():
        return []
    config = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for section, values in config.items():
        if isinstance(values, dict):
            for key, value in values.items():
                text = str(value).lower() if isinstance(value, bool) else str(value)
                out.append(f"--{section}.{key}={text}")
    return out


def _headless(args: argparse.Namespace) -> bool:
    """Headless when asked, or when nobody can answer Streamlit's first-run prompt.

    Not headless, Streamlit opens a browser and, on its first run, asks for an
    (optional) e-mail address on stdin; without a terminal that prompt fails.
    """
    return bool(args.headless) or not sys.stdin or not sys.stdin.isatty()


def streamlit_argv(args: argparse.Namespace, folder: Path) -> list[str]:
    """The ``python -m streamlit run`` command line for ``args`` and the app in ``folder``."""
    overridden = ("--server.address=", "--server.port=", "--server.headless=", "--browser.")
    options = [o for o in _config_options(folder) if not o.startswith(overridden)]
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(folder / "serve.py"),  # app.py behind its upload guard (docs/serving.md)
        *options,
        f"--server.address={args.address}",
        f"--server.port={args.port}",
        f"--server.headless={str(_headless(args)).lower()}",
        "--browser.gatherUsageStats=false",
    ]


def run(args: argparse.Namespace) -> int:
    """Replace this process with the Streamlit server (POSIX); elsewhere wait for it."""
    if not _streamlit_installed():
        raise CliError(
            f"the inspector needs the extra 'inspector'; install it with: {INSTALL_HINT}"
        )
    argv = streamlit_argv(args, app_dir())
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "posix":
        os.execv(argv[0], argv)  # pragma: no cover - the process is Streamlit from here on
    return subprocess.call(argv)  # pragma: no cover - Windows
