"""Scope resolution: the GR-MEM table, MEM-6 examples, MEM-7 refusals, MEM-8 owner vs caller."""

from __future__ import annotations

from typing import Any

import pytest

from flowdrop_core.context import (
    ExecutionContext,
    Scope,
    ScopeResolution,
    as_context,
    as_scope,
    resolve_scope,
)

UNUSABLE: list[Any] = [
    None,
    "",
    "   ",
    "\t\n",
    0,
    "0",
    " 0 ",
    True,
    False,
    -1,
    -7,
    1.5,
    # every spelling of zero, negatives and invisible-only ids, like the numbers
    "00",
    "0.0",
    "-0",
    "\uff10",  # fullwidth zero: NFKC "0"
    "-1",
    "\u200b",
    "\ufeff",
    "\x00",
    "\u3000",
    "ad\u200bmin",  # an invisible character inside would fake "admin"
    [],
    ["7"],
    {},
    {"id": 7},
    (7,),
]
USABLE: list[tuple[Any, str]] = [
    (7, "7"),
    ("7", "7"),
    (" 7 ", "7"),
    (1, "1"),
    # text is compared as written (GR-MEM: trimmed strings), never merged by value
    ("07", "07"),
    ("7.0", "7.0"),
    ("+7", "+7"),
    ("\uff17", "7"),  # fullwidth seven
    (7.0, "7"),
    ("\u200b7\ufeff", "7"),  # invisible characters trimmed at the ends
    ("alice", "alice"),
    ("sess-42", "sess-42"),
    (10**20, str(10**20)),
]


# -- MEM-6: the specification's own examples ----------------------------------------------


@pytest.mark.parametrize("uid", [0, "0"])
def test_mem6_user_id_zero_refused(uid: Any) -> None:
    res = resolve_scope("user", {"user_id": uid})
    assert res.refused is True
    assert res.resolved_scope_id == ""
    assert res.reason and "MEM-6" in res.reason


def test_mem6_user_id_seven_resolves() -> None:
    res = resolve_scope("user", {"user_id": "7"})
    assert res == ScopeResolution(Scope.USER, "7", refused=False, reason=None, source="user_id")


# -- the full usable/unusable table for both identity scopes --------------------------------


@pytest.mark.parametrize("value", UNUSABLE, ids=repr)
@pytest.mark.parametrize(("scope", "field"), [("session", "session_id"), ("user", "user_id")])
def test_identity_scope_refuses_unusable_id(scope: str, field: str, value: Any) -> None:
    res = resolve_scope(scope, {field: value})
    assert res.refused is True
    assert res.resolved_scope_id == ""
    assert res.reason


@pytest.mark.parametrize(("value", "expected"), USABLE, ids=repr)
@pytest.mark.parametrize(("scope", "field"), [("session", "session_id"), ("user", "user_id")])
def test_identity_scope_resolves_usable_id(
    scope: str, field: str, value: Any, expected: str
) -> None:
    res = resolve_scope(scope, {field: value})
    assert res.refused is False
    assert res.resolved_scope_id == expected
    assert res.source == field


@pytest.mark.parametrize("scope", ["session", "user"])
def test_identity_scope_refuses_without_context(scope: str) -> None:
    res = resolve_scope(scope, None)
    assert res.refused and res.resolved_scope_id == "" and "MEM-7" in (res.reason or "")


@pytest.mark.parametrize("scope", ["session", "user"])
def test_identity_scope_refuses_when_field_missing(scope: str) -> None:
    # the other identity is present but never stands in
    other = {"session": {"user_id": "7"}, "user": {"session_id": "s1"}}[scope]
    res = resolve_scope(scope, other)
    assert res.refused and res.resolved_scope_id == ""


# -- non-identity scopes never refuse ------------------------------------------------------

FULL = {
    "session_id": "s1",
    "session_owner_id": "u1",  # MEM-8: with a session, the user identity is its owner
    "user_id": "caller",
    "workflow_id": "wf",
    "pipeline_id": "pl",
    "execution_id": "ex",
    "node_id": "n1",
}


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("global", ""),
        ("workflow", "wf"),
        ("pipeline", "pl"),
        ("execution", "ex"),
        ("session", "s1"),
        ("user", "u1"),
    ],
)
def test_table_with_full_context(scope: str, expected: str) -> None:
    res = resolve_scope(scope, FULL)
    assert (res.refused, res.resolved_scope_id, res.scope) == (False, expected, Scope(scope))


@pytest.mark.parametrize("scope", ["global", "workflow", "pipeline", "execution"])
@pytest.mark.parametrize(
    "context", [None, {}, {"workflow_id": 0, "pipeline_id": " ", "execution_id": None}]
)
def test_shared_scopes_fall_back_to_empty_and_never_refuse(scope: str, context: Any) -> None:
    res = resolve_scope(scope, context)
    assert res.refused is False
    assert res.resolved_scope_id == ""


def test_shared_scope_ids_are_trimmed_strings() -> None:
    assert resolve_scope("workflow", {"workflow_id": 12}).resolved_scope_id == "12"
    assert resolve_scope("pipeline", {"pipeline_id": " p "}).resolved_scope_id == "p"


# -- MEM-8: the session owner, never the caller --------------------------------------------


def test_mem8_owner_is_the_identity_not_the_caller() -> None:
    res = resolve_scope(
        "user", {"session_id": "s1", "user_id": "caller", "session_owner_id": "owner"}
    )
    assert res.resolved_scope_id == "owner" and res.source == "session_owner_id"


@pytest.mark.parametrize("owner", ["", "  ", 0, "0", False, -3, ["owner"]], ids=repr)
def test_mem8_unusable_owner_refuses_and_caller_never_stands_in(owner: Any) -> None:
    res = resolve_scope(
        "user", {"session_id": "s1", "user_id": "caller", "session_owner_id": owner}
    )
    assert res.refused is True
    assert res.resolved_scope_id == ""
    assert "MEM-8" in (res.reason or "")


def test_mem8_owner_without_caller_resolves() -> None:
    assert resolve_scope("user", {"session_owner_id": 9}).resolved_scope_id == "9"


@pytest.mark.parametrize("owner", [None, "absent"], ids=["owner None", "owner absent"])
def test_mem8_session_without_owner_refuses_the_caller(owner: Any) -> None:
    # When a session drives the run, the caller's user_id never stands in for a
    # missing owner (MEM-8): the user scope refuses rather than file the turn
    # under whoever happened to drive it.
    ctx: dict[str, Any] = {"session_id": "s1", "user_id": "caller"}
    if owner is None:
        ctx["session_owner_id"] = None
    res = resolve_scope("user", ctx)
    assert (res.refused, res.resolved_scope_id, res.source) == (True, "", "session_owner_id")
    assert "MEM-8" in (res.reason or "")


def test_mem8_absent_owner_uses_caller() -> None:
    # Decision: None is the field's default, so "owner not set" and "owner None" are the same.
    # With no session driving the run, the caller's own user_id is the identity.
    assert resolve_scope("user", {"user_id": "u1"}).resolved_scope_id == "u1"
    assert resolve_scope("user", {"session_id": "0", "user_id": "u1"}).resolved_scope_id == "u1"
    assert (
        resolve_scope("user", {"user_id": "u1", "session_owner_id": None}).resolved_scope_id == "u1"
    )


def test_mem8_owner_does_not_affect_session_scope() -> None:
    res = resolve_scope("session", {"session_id": "s1", "session_owner_id": "0"})
    assert res.resolved_scope_id == "s1"


# -- context and scope parsing -------------------------------------------------------------


def test_context_keeps_raw_values() -> None:
    ctx = ExecutionContext(user_id=0, session_id=" 5 ", node_id=3)
    assert ctx.user_id == 0 and ctx.session_id == " 5 " and ctx.node_id == 3


def test_as_context_accepts_model_dict_and_none() -> None:
    ctx = ExecutionContext(user_id="7")
    assert as_context(ctx) is ctx
    assert as_context({"user_id": "7", "unrelated": 1}) == ctx
    assert as_context(None) is None
    with pytest.raises(TypeError, match="list"):
        as_context(["user_id", "7"])  # type: ignore[arg-type]


def test_resolve_accepts_model_and_dict_alike() -> None:
    assert resolve_scope("user", ExecutionContext(user_id=7)) == resolve_scope(
        "user", {"user_id": 7}
    )


def test_unknown_scope_is_an_error_naming_it() -> None:
    with pytest.raises(ValueError, match="'tenant'"):
        resolve_scope("tenant", {})
    assert as_scope(" USER ") is Scope.USER
