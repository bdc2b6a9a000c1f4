"""One error tree: every error the library raises on purpose is a ``FlowdropError``.

Each keeps the builtin base it had, so callers catching ``ValueError`` still
work, and the tree drawn in ``flowdrop_core._errors`` names every subclass.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import flowdrop_core
from flowdrop_core import FlowdropError
from flowdrop_core import _errors as errors
from flowdrop_core.cli import CliError
from flowdrop_core.importers._base import Problem
from flowdrop_core.importers._registry import ConversationFormatError
from flowdrop_core.importers.paste import InputProblem
from flowdrop_core.inspect.session_url import SessionUrlError
from flowdrop_core.messages import InvalidMessagesError
from flowdrop_core.replay import ReplayError
from flowdrop_core.scenario import JSONProblem, ScenarioError
from flowdrop_core.storage import RevisionConflict, StorageError, StoreBusyError
from flowdrop_core.store_browser import ReadOnlyError

BUILTIN_BASES: list[tuple[type[Exception], type[Exception]]] = [
    (CliError, Exception),
    (ReplayError, ValueError),
    (ReadOnlyError, PermissionError),
    (InvalidMessagesError, ValueError),
    (Problem, Exception),
    (ConversationFormatError, ValueError),
    (ScenarioError, ValueError),
    (JSONProblem, ValueError),
    (StorageError, RuntimeError),
    (RevisionConflict, StorageError),
    (StoreBusyError, StorageError),
    (SessionUrlError, ValueError),
    (InputProblem, ValueError),
]


@pytest.mark.parametrize(("cls", "builtin"), BUILTIN_BASES, ids=lambda c: c.__name__)
def test_every_error_is_a_flowdrop_error_and_keeps_its_builtin_base(
    cls: type[Exception], builtin: type[Exception]
) -> None:
    assert issubclass(cls, FlowdropError)
    assert issubclass(cls, builtin)


def _all_subclasses(cls: type) -> set[type]:
    out: set[type] = set()
    sub: type
    for sub in cls.__subclasses__():
        out |= {sub, *_all_subclasses(sub)}
    return out


def _import_every_module() -> None:
    for info in pkgutil.walk_packages(flowdrop_core.__path__, "flowdrop_core."):
        importlib.import_module(info.name)


def test_every_exception_class_of_the_library_is_in_the_tree() -> None:
    """A new error class subclasses FlowdropError (or one of its subclasses)."""
    _import_every_module()
    outside = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in _all_subclasses(BaseException)
        if cls.__module__.startswith("flowdrop_core")
        and not issubclass(cls, FlowdropError)
        and not cls.__name__.startswith("_")  # private control flow, never raised to a caller
    )
    assert not outside, f"exceptions outside the FlowdropError tree: {outside}"


def test_the_tree_in_the_docstring_names_every_subclass() -> None:
    _import_every_module()
    doc = errors.__doc__ or ""
    names = {
        cls.__name__
        for cls in _all_subclasses(FlowdropError)
        if cls.__module__.startswith("flowdrop_core")
    }
    assert names >= {cls.__name__ for cls, _ in BUILTIN_BASES}
    missing = sorted(name for name in names if f"── {name} " not in doc)
    assert not missing, f"not drawn in flowdrop_core._errors: {missing}"


def test_flowdrop_error_is_exported() -> None:
    assert "FlowdropError" in flowdrop_core.__all__
    assert flowdrop_core.FlowdropError is errors.FlowdropError
