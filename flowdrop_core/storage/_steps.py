"""One append, two drivers: the buffer's rules as steps, run by a sync or an async driver.

The append's logic (MEM-12 lock, read or live cache, engine, compare-and-set
write, retries, journal record, MEM-14 report) is written once, as a
generator that does no I/O: it yields each store call it needs as a tuple
``(OP, slot, ...)`` and is sent the call's answer (or has the call's
exception thrown into it). :func:`drive` runs those calls on the store's
sync methods; :func:`adrive` awaits a store's native async twins
(``alock``, ``aread``, ``arevision``, ``aapply``, ``ajournal_last``), so the
event loop is never blocked and no thread is involved. Only the round trips
differ; the two paths cannot disagree on a rule.

The lock is held by the driver: a generator yields :data:`LOCK` at most once
and the driver releases it when the generator ends, returned or raised.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

__all__ = ["APPLY", "JOURNAL_LAST", "LOCK", "READ", "REVISION", "Steps", "adrive", "drive"]

#: ``(LOCK, slot, timeout)`` -> whether the MEM-12 slot lock was acquired (a store's
#: ``write_lock`` when it has one: a lock it may take with the first write, which then
#: raises :class:`~flowdrop_core.storage._base.LockUnavailable` if it cannot).
LOCK = "lock"
#: ``(READ, slot)`` -> the slot's :class:`~flowdrop_core.storage.Snapshot`.
READ = "read"
#: ``(REVISION, slot)`` -> the slot's revision.
REVISION = "revision"
#: ``(APPLY, slot, delta, expected, timeout, journal)`` -> the new revision.
APPLY = "apply"
#: ``(JOURNAL_LAST, slot)`` -> the slot journal's newest record number.
JOURNAL_LAST = "journal_last"

Steps = Generator[tuple[Any, ...], Any, Any]


def _journal_for() -> Any:
    """``flowdrop_core.journal.journal_for`` (imported late: the journal imports the stores)."""
    from flowdrop_core.journal import journal_for

    return journal_for


def native_async(store: Any) -> bool:
    """Whether ``store`` has native async twins of the calls an append makes."""
    check = getattr(store, "native_async", None)
    return bool(check()) if callable(check) else False


def drive(store: Any, steps: Steps) -> Any:
    """Run ``steps`` on ``store``'s sync methods; return what the steps return."""
    held: Any = None
    reply: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                call = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration as done:
                result = done.value
                break
            error = None
            op = call[0]
            try:
                if op == APPLY:
                    if call[5] is None:
                        reply = store.apply(*call[1], call[2], expected=call[3], timeout=call[4])
                    else:
                        reply = store.apply(
                            *call[1], call[2], expected=call[3], timeout=call[4], journal=call[5]
                        )
                elif op == LOCK:
                    lock = getattr(store, "write_lock", None) or store.lock
                    entering = lock(*call[1], call[2])
                    reply = entering.__enter__()
                    held = entering  # only a lock entered is exited
                elif op == READ:
                    reply = store.read(*call[1])
                elif op == REVISION:
                    reply = store.revision(*call[1])
                elif op == JOURNAL_LAST:
                    reply = _journal_for()(store).last_seq(call[1])
                else:  # pragma: no cover - a step this driver does not know
                    raise ValueError(f"unknown store step {op!r}")
            except BaseException as exc:  # handed to the steps, which retry or re-raise
                error, reply = exc, None
    except BaseException as exc:
        if held is not None:
            held.__exit__(type(exc), exc, exc.__traceback__)
        raise
    if held is not None:
        held.__exit__(None, None, None)
    return result


async def adrive(store: Any, steps: Steps) -> Any:
    """Run ``steps`` on ``store``'s native async methods; return what the steps return."""
    held: Any = None
    reply: Any = None
    error: BaseException | None = None
    try:
        while True:
            try:
                call = steps.send(reply) if error is None else steps.throw(error)
            except StopIteration as done:
                result = done.value
                break
            error = None
            op = call[0]
            try:
                if op == APPLY:
                    reply = await store.aapply(
                        *call[1], call[2], expected=call[3], timeout=call[4], journal=call[5]
                    )
                elif op == LOCK:
                    lock = getattr(store, "awrite_lock", None) or store.alock
                    entering = lock(*call[1], call[2])
                    reply = await entering.__aenter__()
                    held = entering
                elif op == READ:
                    reply = await store.aread(*call[1])
                elif op == REVISION:
                    reply = await store.arevision(*call[1])
                elif op == JOURNAL_LAST:
                    reply = await store.ajournal_last(*call[1])
                else:  # pragma: no cover - a step this driver does not know
                    raise ValueError(f"unknown store step {op!r}")
            except BaseException as exc:  # handed to the steps, which retry or re-raise
                error, reply = exc, None
    except BaseException as exc:
        if held is not None:
            await held.__aexit__(type(exc), exc, exc.__traceback__)
        raise
    if held is not None:
        await held.__aexit__(None, None, None)
    return result
