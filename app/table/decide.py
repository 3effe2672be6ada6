"""A command decided on a loaded table: the Change it makes, with its clock, rating and notes.

Pure: the pipeline passes in the time, the seed and its settings.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from app.errors import ConflictError
from app.table import clock, notes
from app.table.commands import Actor, Command, Context, seat_of
from app.table.model import Change, Loaded
from app.table.project import finishes, project


def decide(
    loaded: Loaded,
    actor: Actor,
    command: Command,
    expected_version: int | None,
    abandon_after: timedelta,
    *,
    now: datetime,
    seed: str,
    warn_at: float = 0.0,
) -> Change:
    """What ``command`` of ``actor`` makes of ``loaded`` at ``now`` (``seed``: a new deal's),
    with the clock it leaves, whether it rates a match, and the notifications it causes;
    ``stale_version`` if the table is not at ``expected_version``."""
    if expected_version is not None and loaded.table.version != expected_version:
        raise stale(loaded.table.version, expected_version)
    seat = seat_of(loaded, actor)
    context = Context(loaded, actor, seat, seed, now, abandon_after)
    change = command.decide(context)
    clock.attach(loaded, change, actor, now)
    attach_rating(loaded, change)
    # The notifications it causes, written with it (``app.store.outbox``) and sent live.
    change.notes = notes.caused(loaded, project(loaded, change, now), actor)
    warning = notes.time_running_out(loaded, change, now, warn_at)
    if warning is not None:
        change.notes.append(warning)
    return change


def attach_rating(loaded: Loaded, change: Change) -> None:
    """If ``change`` finishes a match of a rated table, say so: the pipeline rates it in the
    change's transaction (``app.service.ratings.rate_match``)."""
    if loaded.table.rated and finishes(loaded, change):
        assert change.state is not None
        if change.state.winner is None:
            return  # aborted before a seat's first move: no result, no rating moves
        change.rated_result = True


def stale(current: int | None, expected: int | None) -> ConflictError:
    """The refusal of a command pinned to a version the table has left."""
    now = "" if current is None else f"; the table is at version {current}"
    return ConflictError("stale_version", f"the table changed since version {expected}{now}")
