"""Melds, deadwood and the best arrangement, against worked examples and a brute-force oracle."""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.cards import parse_cards, to_mask
from app.engine.melds import (
    Arrangement,
    arrange,
    best_arrangement,
    deadwood,
    discards_within,
    melds_within,
    points,
)

RANKS = "A23456789TJQK"
SUITS = "CDHS"
ALL_CODES = [rank + suit for suit in SUITS for rank in RANKS]
POINTS = {rank: min(i + 1, 10) for i, rank in enumerate(RANKS)}

# ---------------------------------------------------------------------------------------------
# The oracle: melds and arrangements from card codes alone, without melds.py.


def bit(code: str) -> int:
    """The documented card id (``suit * 16 + rank``) of a code, as a one-bit mask."""
    return 1 << (SUITS.index(code[1]) * 16 + RANKS.index(code[0]))


def mask_of(codes: frozenset[str] | list[str]) -> int:
    return sum(bit(c) for c in codes)


def is_meld(codes: list[str]) -> bool:
    ranks = sorted(RANKS.index(c[0]) for c in codes)
    if len({c[1] for c in codes}) == 1:
        return len(codes) >= 3 and ranks == list(range(ranks[0], ranks[0] + len(codes)))
    return len(codes) in (3, 4) and len(set(ranks)) == 1 and len(set(codes)) == len(codes)


def oracle_melds(hand: list[str]) -> list[frozenset[str]]:
    """Every set of 3 or 4 and every run of 3+ (ace low, no wrap) in ``hand``."""
    by_rank: dict[str, list[str]] = defaultdict(list)
    for code in hand:
        by_rank[code[0]].append(code)
    melds = [
        frozenset(group)
        for cards in by_rank.values()
        for size in (3, 4)
        for group in combinations(cards, size)
    ]
    held = set(hand)
    for suit in SUITS:
        for low in range(13):
            for high in range(low + 3, 14):
                run = [RANKS[r] + suit for r in range(low, high)]
                if all(c in held for c in run):
                    melds.append(frozenset(run))
    return melds


OracleBest = tuple[int, int, tuple[int, ...]]  # (deadwood, meld count, sorted meld masks)


def oracle_best(hand: list[str]) -> OracleBest:
    """The documented optimum: least deadwood, then fewest melds, then smallest sorted masks."""
    melds = oracle_melds(hand)
    total = sum(POINTS[c[0]] for c in hand)
    best: list[OracleBest] = []

    def walk(i: int, used: frozenset[str], chosen: list[frozenset[str]]) -> None:
        if i == len(melds):
            dead = total - sum(POINTS[c[0]] for c in used)
            key = (dead, len(chosen), tuple(sorted(mask_of(m) for m in chosen)))
            if not best or key < best[0]:
                best[:] = [key]
            return
        walk(i + 1, used, chosen)
        if not melds[i] & used:
            walk(i + 1, used | melds[i], [*chosen, melds[i]])

    walk(0, frozenset(), [])
    return best[0]


# ---------------------------------------------------------------------------------------------
# Helpers


def arranged(hand: str) -> Arrangement:
    return best_arrangement(hand.split())


def meld_codes(arrangement: Arrangement) -> list[list[str]]:
    return [[c.code for c in meld] for meld in arrangement.melds]


def dead_codes(arrangement: Arrangement) -> list[str]:
    return [c.code for c in arrangement.deadwood_cards]


def check_against_oracle(hand: list[str]) -> None:
    mask = mask_of(hand)
    result = best_arrangement(mask)
    want_dead, want_count, want_masks = oracle_best(hand)

    assert result.deadwood == want_dead
    assert tuple(sorted(result.meld_masks)) == want_masks
    assert len(result.meld_masks) == want_count

    melded: list[str] = []
    for meld in meld_codes(result):
        assert is_meld(meld), meld
        melded.extend(meld)
    assert len(melded) == len(set(melded))
    dead = dead_codes(result)
    assert sorted(melded + dead) == sorted(hand)
    assert result.deadwood == sum(POINTS[c[0]] for c in dead) == points(result.deadwood_mask)
    assert [mask_of(m) for m in meld_codes(result)] == list(result.meld_masks)

    assert deadwood(mask) == arrange(mask).deadwood == result.deadwood
    by_codes = best_arrangement(hand)
    assert (by_codes.meld_masks, by_codes.deadwood) == (result.meld_masks, result.deadwood)
    assert sorted(melds_within(mask)) == sorted(mask_of(m) for m in oracle_melds(hand))


# ---------------------------------------------------------------------------------------------
# Worked examples


def test_set_of_three() -> None:
    result = arranged("7C 7D 7H KS 2C 5D 9H JS AD 4S")
    assert meld_codes(result) == [["7C", "7D", "7H"]]
    assert result.deadwood == 10 + 2 + 5 + 9 + 10 + 1 + 4


def test_set_of_four_is_one_meld() -> None:
    result = arranged("9C 9D 9H 9S 2C 4D 6H JS KD AH")
    assert meld_codes(result) == [["9C", "9D", "9H", "9S"]]
    assert result.deadwood == 2 + 4 + 6 + 10 + 10 + 1


def test_two_of_a_rank_is_not_a_set() -> None:
    assert arranged("9C 9D 2H 5S KC").melds == []


def test_long_run_is_one_meld() -> None:
    result = arranged("3S 4S 5S 6S 7S 8S 2C 9D JH KC")
    assert meld_codes(result) == [["3S", "4S", "5S", "6S", "7S", "8S"]]
    assert result.deadwood == 2 + 9 + 10 + 10


def test_ace_low_run() -> None:
    result = arranged("AH 2H 3H 5C 7D 9S JC KD QS 6C")
    assert meld_codes(result) == [["AH", "2H", "3H"]]


def test_queen_king_ace_is_not_a_run() -> None:
    result = arranged("QH KH AH 3C 5D 7S 9C JD 2S 4C")
    assert result.melds == []
    assert result.deadwood == 10 + 10 + 1 + 3 + 5 + 7 + 9 + 10 + 2 + 4


def test_runs_never_wrap() -> None:
    assert arranged("KS AS 2S 4C 6D 8H TC QD 5H 7C").melds == []


def test_run_needs_one_suit() -> None:
    assert arranged("4C 5D 6C 9H TS JH").melds == []


def test_a_card_belongs_to_one_meld() -> None:
    # 7H fits the set of sevens and the run 7-8-9 of hearts; the run leaves less deadwood.
    result = arranged("7C 7D 7H 8H 9H")
    assert meld_codes(result) == [["7H", "8H", "9H"]]
    assert dead_codes(result) == ["7C", "7D"]
    assert result.deadwood == 14


def test_break_a_run_to_keep_a_set() -> None:
    result = arranged("5H 6H 7H 8H 8C 8D KS QD 2C 3S")
    assert meld_codes(result) == [["8C", "8D", "8H"], ["5H", "6H", "7H"]]
    assert result.deadwood == 10 + 10 + 2 + 3


def test_break_a_set_to_keep_two_runs() -> None:
    result = arranged("7C 7D 7H 5H 6H 8C 9C KS QD 2S")
    assert meld_codes(result) == [["7C", "8C", "9C"], ["5H", "6H", "7H"]]
    assert dead_codes(result) == ["7D", "QD", "2S", "KS"]
    assert result.deadwood == 7 + 2 + 10 + 10


def test_set_of_four_lends_a_card_to_a_run() -> None:
    result = arranged("7C 7D 7H 7S 5H 6H 2C 4D JS KC")
    assert meld_codes(result) == [["7C", "7D", "7S"], ["5H", "6H", "7H"]]
    assert result.deadwood == 2 + 4 + 10 + 10


def test_gin_ten_cards() -> None:
    result = arranged("AH 2H 3H 5C 5D 5S 9S TS JS QS")
    assert result.deadwood == 0
    assert result.deadwood_cards == []
    assert sorted(map(len, result.melds)) == [3, 3, 4]


def test_big_gin_eleven_cards() -> None:
    result = arranged("AH 2H 3H 4H 5C 5D 5S 9S TS JS QS")
    assert result.deadwood == 0
    assert sorted(map(len, result.melds)) == [3, 4, 4]


def test_eleven_cards_with_deadwood() -> None:
    result = arranged("4C 4D 4H 4S 5S 6S 7S 8D 8H KC QC")
    # 4C 4D 4H + 4S-7S ties 4C 4D 4H 4S + 5S-7S; the first has the smaller sorted masks.
    assert meld_codes(result) == [["4C", "4D", "4H"], ["4S", "5S", "6S", "7S"]]
    assert result.deadwood == 8 + 8 + 10 + 10


def test_overlapping_sets_and_runs_to_gin() -> None:
    # Three sets or three runs: both use all nine, the tenth card is deadwood either way.
    result = arranged("3C 4C 5C 3D 4D 5D 3H 4H 5H KS")
    assert result.deadwood == 10
    assert len(result.melds) == 3


def test_empty_hand() -> None:
    result = best_arrangement(0)
    assert (result.melds, result.deadwood_cards, result.deadwood) == ([], [], 0)


# ---------------------------------------------------------------------------------------------
# The tie-break


@pytest.mark.parametrize("hand", ["2D 3D 4D 5D 6D 7D", "2D 3D 4D 5D 6D 7D 5C 5H KS"])
def test_tie_break_prefers_fewer_melds(hand: str) -> None:
    # Two runs of three or one run of six meld the same cards: one meld wins (the second
    # hand, where 5D could also join a set, goes through the search).
    result = arranged(hand)
    assert meld_codes(result) == [["2D", "3D", "4D", "5D", "6D", "7D"]]


def test_tie_break_prefers_the_smaller_meld_masks() -> None:
    # 5C 5D 5H or 4H 5H 6H: both leave 10 points; the set's mask is the smaller.
    result = arranged("5C 5D 5H 4H 6H")
    assert meld_codes(result) == [["5C", "5D", "5H"]]
    assert dead_codes(result) == ["4H", "6H"]


@pytest.mark.parametrize(
    "hand",
    [
        "5C 5D 5H 4H 6H",
        "JC JD JH TH QH KS 2C 3D 4S 9C",
        "3C 4C 5C 3D 4D 5D 3H 4H 5H KS",
        "7C 7D 7H 7S 6S 8S 6H 8H 5H 9H 6C",
    ],
)
def test_tie_break_ignores_input_order(hand: str) -> None:
    codes = hand.split()
    first = best_arrangement(codes)
    shuffler = random.Random(hand)
    for _ in range(50):
        again = best_arrangement(shuffler.sample(codes, len(codes)))
        assert again.meld_masks == first.meld_masks
        assert again.deadwood == first.deadwood
    assert best_arrangement(parse_cards(codes)).meld_masks == first.meld_masks
    assert best_arrangement(to_mask(parse_cards(codes))).meld_masks == first.meld_masks
    assert tuple(sorted(first.meld_masks)) == oracle_best(codes)[2]


# ---------------------------------------------------------------------------------------------
# Properties against the oracle

PROPERTY = settings(deadline=None, max_examples=500)


def hands(size: int) -> st.SearchStrategy[list[str]]:
    return st.permutations(ALL_CODES).map(lambda deck: deck[:size])


@st.composite
def dense_hands(draw: st.DrawFn) -> list[str]:
    """10 or 11 cards from a few ranks or a few suits, where sets and runs overlap a lot."""
    shape = draw(st.sampled_from(["rank_block", "few_ranks", "few_suits", "square", "long_run"]))
    size = draw(st.sampled_from([10, 11]))
    if shape == "long_run":
        # A run of 6-9 (splittable two ways) whose ranks also make sets in other suits.
        suit = draw(st.sampled_from(SUITS))
        low = draw(st.integers(0, 7))
        span = RANKS[low : low + draw(st.integers(6, 9))]
        others = [rank + other for rank in span for other in SUITS if other != suit]
        return [rank + suit for rank in span] + draw(st.permutations(others))[: size - len(span)]
    ranks: str | list[str] = RANKS
    suits: str | list[str] = SUITS
    if shape == "rank_block":
        low = draw(st.integers(0, 10))
        ranks = RANKS[low : low + draw(st.integers(3, 4))]
    elif shape == "few_ranks":
        ranks = draw(st.lists(st.sampled_from(RANKS), min_size=3, max_size=4, unique=True))
    elif shape == "few_suits":
        suits = draw(st.lists(st.sampled_from(SUITS), min_size=1, max_size=2, unique=True))
    else:
        low = draw(st.integers(0, 8))
        ranks = RANKS[low : low + draw(st.integers(4, 5))]
        suits = draw(st.lists(st.sampled_from(SUITS), min_size=3, max_size=4, unique=True))
    pool = [rank + suit for rank in ranks for suit in suits]
    return draw(st.permutations(pool))[: min(size, len(pool))]


@PROPERTY
@given(hands(10))
def test_ten_card_hands_match_the_oracle(hand: list[str]) -> None:
    check_against_oracle(hand)


@PROPERTY
@given(hands(11))
def test_eleven_card_hands_match_the_oracle(hand: list[str]) -> None:
    check_against_oracle(hand)


@settings(deadline=None, max_examples=1500)
@given(dense_hands())
def test_meld_dense_hands_match_the_oracle(hand: list[str]) -> None:
    check_against_oracle(hand)


@settings(deadline=None, max_examples=200)
@given(st.integers(0, 13).flatmap(hands))
def test_any_size_hand_matches_the_oracle(hand: list[str]) -> None:
    check_against_oracle(hand)


def test_a_lone_card_is_not_a_mask() -> None:
    with pytest.raises(TypeError):
        best_arrangement(parse_cards(["AS"])[0])


@PROPERTY
@given(st.one_of(hands(11), dense_hands()), st.sampled_from([0, 5, 10]), st.data())
def test_discards_within_equals_every_discard_scored(
    hand: list[str], limit: int, data: st.DataObject
) -> None:
    mask = mask_of(hand)
    forbidden = data.draw(st.sampled_from([None, *[bit(c).bit_length() - 1 for c in hand]]))
    expected = []
    for code in sorted(hand, key=bit):
        c = bit(code).bit_length() - 1
        dw = oracle_best([h for h in hand if h != code])[0]
        if c != forbidden and dw <= limit:
            expected.append((c, dw))
    assert discards_within(mask, limit, forbidden) == expected
