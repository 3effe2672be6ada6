"""The bot ladder's pairing (``app.table.ladder``): closest rating, never the last opponent
again, anchors never against each other, nobody in two pairs."""

from __future__ import annotations

from app.table.ladder import Free, pair_free

ANCHORS = [
    Free("bot-easy", 1383.0, None, anchor=True),
    Free("bot-medium", 1500.0, None, anchor=True),
    Free("bot-hard", 1581.0, None, anchor=True),
]


def test_two_bots_close_in_rating_meet_each_other() -> None:
    free = [Free("a", 1700.0, None), Free("b", 1710.0, None), *ANCHORS]
    assert pair_free(free) == [("a", "b")]


def test_a_bot_meets_the_nearest_anchor_when_no_bot_is_nearer() -> None:
    free = [Free("a", 1390.0, None), Free("b", 1900.0, None), *ANCHORS]
    pairs = pair_free(free)
    assert ("a", "bot-easy") in pairs and ("b", "bot-hard") in pairs


def test_never_the_same_opponent_twice_in_a_row() -> None:
    free = [Free("a", 1700.0, "b"), Free("b", 1710.0, "a"), *ANCHORS]
    assert pair_free(free) == [("a", "bot-hard"), ("b", "bot-medium")]
    assert pair_free([Free("a", 1500.0, "bot-medium"), ANCHORS[1]]) == []


def test_anchors_alone_are_not_paired_and_nobody_is_in_two_pairs() -> None:
    assert pair_free(ANCHORS) == []
    free = [Free(f"bot{i}", 1500.0 + i, None) for i in range(7)] + ANCHORS
    seated = [entrant for pair in pair_free(free) for entrant in pair]
    assert len(seated) == len(set(seated))
    assert {f"bot{i}" for i in range(7)} <= set(seated)  # the odd one out meets an anchor
