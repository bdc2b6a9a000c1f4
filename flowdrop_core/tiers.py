"""Who may do what to a session: the view, drive and administrative tiers (MEM-9, MEM-15).

MEM-9: permission to read a session is not permission to drive it. A
principal that may only *view* a session may not append a turn to it, stop
it or reset it, because the turn runs under the owner's identity (MEM-8) and
spends the owner's memory. Every ownership test needs a usable identity
(MEM-6) on both sides: two absent identities never match (:func:`owns`).

MEM-15: a denial is final, and stored messages are not editable. An append
(MEM-10's replacement of a healed placeholder included) is the drive tier's
act; every other change to stored messages (a clear, a delete, a repair, a
journal prune) is the administrative tier's, asked for explicitly. No
option turns a :class:`TierDenied` into an allow: the check is made before
any storage access and raises.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from flowdrop_core._errors import FlowdropError
from flowdrop_core._ids import usable_id

__all__ = ["Tier", "TierDenied", "as_tier", "owns", "require_tier"]


class Tier(IntEnum):
    """What a principal may do to a session or store; each tier includes the ones below it."""

    VIEW = 1  # read only (MEM-9)
    DRIVE = 2  # append turns: the owner's or a granted principal's tier
    ADMIN = 3  # change stored messages other than by an append (MEM-15)

    def __str__(self) -> str:
        return self.name.lower()


class TierDenied(FlowdropError, PermissionError):
    """An action needs a higher tier than the session or store was opened with (MEM-9, MEM-15).

    Raised before any storage access: nothing was read for the action or written.
    """

    def __init__(self, action: str, have: Tier, need: Tier, rule: str) -> None:
        self.action = action
        self.have = have
        self.need = need
        self.rule = rule
        super().__init__(
            f"{rule}: {action} needs the {need} tier; this was opened at the {have} tier "
            f"(nothing was read or written)"
        )


def as_tier(value: Tier | str) -> Tier:
    """A :class:`Tier` from itself or its name (``"view"``, ``"drive"``, ``"admin"``)."""
    if isinstance(value, Tier):
        return value
    if isinstance(value, str) and value.strip().upper() in Tier.__members__:
        return Tier[value.strip().upper()]
    raise ValueError(f"tier must be one of view, drive, admin; got {value!r}")


def require_tier(have: Tier, need: Tier, action: str) -> None:
    """Raise :class:`TierDenied` unless ``have`` reaches ``need`` (MEM-9 for drive, MEM-15 for admin)."""
    if have < need:
        raise TierDenied(action, have, need, "MEM-15" if need is Tier.ADMIN else "MEM-9")


def owns(principal_id: Any, owner_id: Any) -> bool:
    """Whether a principal owns a session: both ids usable (MEM-6) and equal (MEM-9).

    A principal without a usable id owns nothing, and a session without an
    owner belongs to nobody: two absent identities never match.
    """
    principal = usable_id(principal_id)
    return principal is not None and principal == usable_id(owner_id)
