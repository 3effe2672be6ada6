"""The publish seam: what the pipeline hands the Hub after each commit (a real SQLite file)."""

from __future__ import annotations

from typing import TypeVar

from app.bus.hub import QUEUE_LIMIT, Hub, Notification, Subscription
from app.engine import Action
from app.service.pipeline import TableService
from app.table.commands import Chat, Join, Play, Start

T = TypeVar("T")


async def _drain(sub: Subscription[T]) -> list[T]:
    """Everything queued so far (closing the subscription ends its iteration)."""
    sub.close()
    return [item async for item in sub]


async def test_committed_events_and_notifications_reach_subscribers(
    service: TableService,
) -> None:
    ada, _ = await service.create_player("Ada")
    bo, _ = await service.create_player("Bo")
    table_id = (await service.create_table(ada, "standard", {})).body["table_id"]
    table_sub = service.hub.table(table_id)
    ada_sub, bo_sub = service.hub.player(ada.player_id), service.hub.player(bo.player_id)

    await service.submit(table_id, bo, Join())
    await service.submit(table_id, ada, Start())
    await service.submit(table_id, ada, Chat("hello"))
    state = (await service.load(table_id)).state
    assert state is not None
    turn = state.hand.turn
    mover = (ada, bo)[turn]
    await service.submit(table_id, mover, Play(Action("pass")))
    await service.submit(table_id, bo, Play(Action("resign")))

    published = await _drain(table_sub)
    seqs = [i.seq for i in published]
    assert seqs == list(range(2, 2 + len(seqs)))  # seq 1 is table_created, before subscribing
    assert [i.event.type for i in published] == [
        "player_joined",
        "match_started",
        "hand_started",
        "chat",
        "upcard_passed",
        "resigned",
        "match_over",
    ]
    stored = await service.events_since(table_id, 1, None)
    assert [e["seq"] for e in stored] == seqs

    ada_notes, bo_notes = await _drain(ada_sub), await _drain(bo_sub)
    assert ada_notes[0].type == "opponent_joined"
    assert ada_notes[0].data["player"]["id"] == bo.player_id
    assert [n.type for n in ada_notes][-1] == [n.type for n in bo_notes][-1] == "match_finished"
    # After the start, the first player to act hears it only if someone else acted.
    waiting = bo_notes if turn == 1 else ada_notes
    assert any(n.type == "your_turn" for n in waiting) or turn == 0
    assert not service.hub._tables  # closing the last subscriber forgets the table


async def test_a_subscriber_that_falls_behind_is_told_to_resync() -> None:
    hub = Hub()
    sub = hub.player("p")
    for i in range(QUEUE_LIMIT + 5):
        hub.notify([Notification("p", "your_turn", f"t{i}")])
    assert sub.overflowed
    received = [note async for note in sub]
    assert len(received) < QUEUE_LIMIT + 5
    assert [n.table_id for n in received] == [f"t{i}" for i in range(QUEUE_LIMIT)]
