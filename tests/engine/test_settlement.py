"""Settlement after a knock: layoffs (joint or arranged first), the knocker's tie-break, the
scoring."""

from __future__ import annotations

import json
import random
from functools import lru_cache
from typing import TypedDict

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from app.engine.cards import ALL_CARDS, FULL_DECK_MASK, POINTS, parse_cards, to_mask
from app.engine.melds import arrange, deadwood
from app.engine.settlement import Layoff, Settlement, all_best_arrangements, settle


class Bonuses(TypedDict):
    gin_bonus: int
    big_gin_bonus: int
    undercut_bonus: int


STANDARD = Bonuses(gin_bonus=25, big_gin_bonus=31, undercut_bonus=25)
CLASSIC = Bonuses(gin_bonus=25, big_gin_bonus=0, undercut_bonus=10)


def hand(text: str) -> int:
    return to_mask(parse_cards(text.split()))


def knock(
    knocker: str | int,
    defender: str | int,
    layoff: str = "joint",
    bonuses: Bonuses = STANDARD,
    multiplier: int = 1,
) -> Settlement:
    k = hand(knocker) if isinstance(knocker, str) else knocker
    d = hand(defender) if isinstance(defender, str) else defender
    return settle(k, d, big_gin=False, layoff=layoff, multiplier=multiplier, **bonuses)


# --- an oracle that shares nothing with the engine's meld code --------------------------------


def bits(mask: int) -> list[int]:
    return [c for c in range(64) if mask >> c & 1]


def pts(mask: int) -> int:
    return sum(POINTS[c] for c in bits(mask))


def union(melds: tuple[int, ...] | list[int]) -> int:
    out = 0
    for m in melds:
        out |= m
    return out


def is_meld(mask: int) -> bool:
    cards = bits(mask)
    if len(cards) < 3:
        return False
    ranks = sorted(c & 15 for c in cards)
    suits = {c >> 4 for c in cards}
    if len(set(ranks)) == 1:
        return True
    return len(suits) == 1 and ranks[-1] - ranks[0] == len(cards) - 1


@lru_cache(maxsize=4096)
def all_melds(mask: int) -> tuple[int, ...]:
    """Every subset of ``mask`` that is a meld, by trying every subset."""
    out: list[int] = []
    sub = mask
    while sub:
        if sub.bit_count() >= 3 and is_meld(sub):
            out.append(sub)
        sub = (sub - 1) & mask
    return tuple(out)


def meld_collections(mask: int) -> list[tuple[int, ...]]:
    """Every set of pairwise disjoint melds within ``mask`` (the empty one included)."""
    melds = all_melds(mask)
    out: list[tuple[int, ...]] = []

    def go(i: int, used: int, chosen: tuple[int, ...]) -> None:
        if i == len(melds):
            out.append(chosen)
            return
        go(i + 1, used, chosen)
        if not melds[i] & used:
            go(i + 1, used | melds[i], (*chosen, melds[i]))

    go(0, 0, ())
    return out


def oracle_best_arrangements(mask: int) -> list[tuple[int, ...]]:
    scored = [(pts(mask & ~union(c)), c) for c in meld_collections(mask)]
    low = min(s for s, _ in scored)
    return sorted(tuple(sorted(c, key=lambda m: m & -m)) for s, c in scored if s == low)


@lru_cache(maxsize=1 << 16)
def most_laid_off(melds: tuple[int, ...], left: int) -> int:
    """Most points the cards ``left`` can lay off onto ``melds``, one card at a time."""
    best = 0
    for c in bits(left):
        for i, m in enumerate(melds):
            if is_meld(m | 1 << c):
                grown = (*melds[:i], m | 1 << c, *melds[i + 1 :])
                best = max(best, POINTS[c] + most_laid_off(grown, left & ~(1 << c)))
    return best


def oracle_arranged_first(knocker_melds: tuple[int, ...], defender: int) -> int:
    """The defender's final deadwood when its best melds stand and only deadwood is laid off."""
    left = arrange(defender).deadwood_mask
    return pts(left) - most_laid_off(knocker_melds, left)


def oracle_defender(knocker_melds: tuple[int, ...], defender: int) -> int:
    """The defender's least final deadwood: every own melding, then every layoff sequence."""
    best = pts(defender)
    for own in meld_collections(defender):
        left = defender & ~union(own)
        best = min(best, pts(left) - most_laid_off(knocker_melds, left))
    return best


def greedy_defender(knocker_melds: tuple[int, ...], defender: int) -> int:
    """The forbidden card-by-card pass: arrange first, then lay off what deadwood fits."""
    melds = list(knocker_melds)
    left = arrange(defender).deadwood_mask
    changed = True
    while changed:
        changed = False
        for c in bits(left):
            for i, m in enumerate(melds):
                if is_meld(m | 1 << c):
                    melds[i] |= 1 << c
                    left &= ~(1 << c)
                    changed = True
                    break
    return pts(left)


def check_consistent(s: Settlement, knocker: int, defender: int) -> None:
    """Every card accounted for; every layoff real, not melded, and valid when laid."""
    assert all(is_meld(m) for m in s.knocker_melds)
    assert s.knocker_melds == tuple(sorted(s.knocker_melds, key=lambda m: m & -m))
    assert s.knocker_deadwood_mask == knocker & ~union(s.knocker_melds)
    assert union(s.knocker_melds) & ~knocker == 0
    assert sum(m.bit_count() for m in s.knocker_melds) == union(s.knocker_melds).bit_count()
    assert pts(s.knocker_deadwood_mask) == s.knocker_deadwood
    grown = list(s.knocker_melds)
    laid = 0
    for lay in s.layoffs:
        bit = 1 << lay.card
        assert defender & bit
        assert not laid & bit
        assert not union(s.defender_melds) & bit
        grown[lay.meld] |= bit
        assert is_meld(grown[lay.meld])
        laid |= bit
    assert all(is_meld(m) for m in s.defender_melds)
    own = union(s.defender_melds)
    assert sum(m.bit_count() for m in s.defender_melds) == own.bit_count()
    assert own | s.defender_deadwood_mask | laid == defender
    assert own.bit_count() + s.defender_deadwood_mask.bit_count() + len(s.layoffs) == (
        defender.bit_count()
    )
    assert pts(s.defender_deadwood_mask) == s.defender_deadwood
    assert Settlement.from_dict(json.loads(json.dumps(s.to_dict()))) == s


# --- worked examples of RULES.md section 6 ----------------------------------------------------

KNOCKER_7 = "2C 3C 4C 8H 8D 8S JS QS KS 7D"


def test_knock_7_against_18_after_layoffs_scores_11() -> None:
    # 5C extends 2-3-4C and 8C completes the 8s: 31 before layoffs, 18 after.
    defender = "AH AD AS 5H 6H 7H 5C 8C 9C 9D"
    s = knock(KNOCKER_7, defender)
    assert (s.outcome, s.knocker_won, s.points) == ("knock", True, 11)
    assert (s.knocker_deadwood, s.defender_deadwood) == (7, 18)
    assert {(str(lay["card"]), lay["meld"]) for lay in s.to_dict()["layoffs"]} == {
        ("5C", 0),
        ("8C", 1),
    }
    check_consistent(s, hand(KNOCKER_7), hand(defender))


def test_a_tie_at_7_is_an_undercut_worth_the_bonus() -> None:
    defender = "AH AD AS 5H 6H 7H 2S 3S 4S 7C"
    s = knock(KNOCKER_7, defender)
    assert (s.outcome, s.knocker_won, s.points) == ("undercut", False, 25)
    assert (s.knocker_deadwood, s.defender_deadwood, s.layoffs) == (7, 7, ())


def test_classic_undercut_bonus_is_10() -> None:
    s = knock(KNOCKER_7, "AH AD AS 5H 6H 7H 2S 3S 4S 2D", bonuses=CLASSIC)
    assert (s.outcome, s.points) == ("undercut", 7 - 2 + 10)


def test_knock_6_with_a_9_laid_off_onto_the_9s_scores_12() -> None:
    knocker = "9C 9D 9H 2S 3S 4S JH QH KH 6D"
    defender = "AC AD AH 4C 5C 6C 7C 9S 8D TD"
    s = knock(knocker, defender)
    assert (s.outcome, s.points, s.knocker_deadwood, s.defender_deadwood) == ("knock", 12, 6, 18)
    assert s.to_dict()["layoffs"] == [{"card": "9S", "meld": 0}]
    check_consistent(s, hand(knocker), hand(defender))


GIN = "2C 3C 4C 5C 8H 8D 8S JS QS KS"


def test_gin_refuses_layoffs() -> None:
    # 6C would extend the clubs and 8C would complete the 8s: both still count.
    s = knock(GIN, "6C 8C AH AD AS 2H 3H 4H 9D KD")
    assert (s.outcome, s.knocker_won, s.layoffs) == ("gin", True, ())
    assert s.defender_deadwood == 6 + 8 + 9 + 10
    assert s.points == s.defender_deadwood + 25


def test_gin_against_zero_deadwood_still_scores_for_the_knocker() -> None:
    s = knock(GIN, "AH AD AS 2H 3H 4H 9D TD JD QD")
    assert (s.outcome, s.knocker_won, s.defender_deadwood, s.points) == ("gin", True, 0, 25)


def test_big_gin_scores_its_bonus() -> None:
    knocker = hand(GIN + " 6C")
    s = settle(knocker, hand("KD 9D AH AD AS 2H 3H 4H 7S 7H"), big_gin=True, **STANDARD)
    assert (s.outcome, s.knocker_won, s.points) == ("big_gin", True, 10 + 9 + 7 + 7 + 31)
    with pytest.raises(ValueError, match="big gin"):
        settle(hand(KNOCKER_7 + " 9D"), hand("AH"), big_gin=True, **STANDARD)


def test_multiplier_doubles_every_outcome() -> None:
    defender = "AH AD AS 5H 6H 7H 5C 8C 9C 9D"
    assert knock(KNOCKER_7, defender, multiplier=2).points == 22
    assert knock(KNOCKER_7, "AH AD AS 5H 6H 7H 2S 3S 4S 7C", multiplier=2).points == 50
    assert knock(GIN, "AH AD AS 2H 3H 4H 9D TD JD QD", multiplier=2).points == 50


def test_hands_sharing_a_card_are_refused() -> None:
    with pytest.raises(ValueError, match="share"):
        knock(KNOCKER_7, "7D")
    with pytest.raises(ValueError, match="not a card"):
        settle(1 << 13, hand("AH"), big_gin=False, **STANDARD)


# --- layoffs ----------------------------------------------------------------------------------


def test_chain_layoff_lays_the_inner_card_first() -> None:
    knocker = "4S 5S 6S AC AD AH 2C 2D 2H 3C"
    s = knock(knocker, "8S 7S KC QD JH 9C TD 6H 5D 9H")
    assert s.layoffs == (Layoff(parse_cards(["7S"])[0], 2), Layoff(parse_cards(["8S"])[0], 2))
    assert s.to_dict()["knocker_melds"][2] == ["4S", "5S", "6S"]
    check_consistent(s, hand(knocker), hand("8S 7S KC QD JH 9C TD 6H 5D 9H"))


def test_layoffs_at_the_low_end_come_before_the_high_end() -> None:
    # 3H could also complete the 3s, but on the run it lets 2H follow.
    knocker = "4H 5H 6H AC AD AS 3C 3D 3S 2C"
    defender = "7H 2H 3H KC QD JS 9C TD 6S 9S"
    s = knock(knocker, defender)
    laid = [(lay["card"], lay["meld"]) for lay in s.to_dict()["layoffs"]]
    assert laid == [("3H", 2), ("2H", 2), ("7H", 2)]
    assert s.defender_deadwood == 10 + 10 + 10 + 9 + 10 + 6 + 9
    check_consistent(s, hand(knocker), hand(defender))


def test_joint_search_beats_the_greedy_pass() -> None:
    # The defender's best own melding keeps four 7s and strands 8H; breaking the 7s to lay
    # 7H then 8H onto 4-5-6H saves the 8.
    knocker = "4H 5H 6H 2C 3C 4C JS QS KS AD"
    defender = "7C 7D 7H 7S 8H 2S 9D TC 5D 3D"
    s = knock(knocker, defender)
    greedy = greedy_defender(s.knocker_melds, hand(defender))
    assert (greedy, s.defender_deadwood) == (37, 29)
    assert s.points == 29 - 1
    assert [lay["card"] for lay in s.to_dict()["layoffs"]] == ["7H", "8H"]
    check_consistent(s, hand(knocker), hand(defender))


def test_the_issue_hand_keeps_42_jointly_and_50_arranged_first() -> None:
    # Joint: break the four 7s, lay 7H then 8H onto 4-5-6H. Arranged first (seed 000): the
    # four 7s stand, and none of 8H KS QD JH 9D 3C fits the knocker's melds.
    knocker = "4H 5H 6H 2S 3S 4S TC JC QC AD"
    defender = "7C 7D 7S 7H 8H KS QD JH 9D 3C"
    joint = knock(knocker, defender)
    assert joint.defender_deadwood == 42 and joint.points == 41
    assert [lay["card"] for lay in joint.to_dict()["layoffs"]] == ["7H", "8H"]
    first = knock(knocker, defender, layoff="arrange_first")
    assert first.defender_deadwood == 50 and first.points == 49 and first.layoffs == ()
    assert first.to_dict()["defender_melds"] == [["7C", "7D", "7H", "7S"]]
    for s in (joint, first):
        check_consistent(s, hand(knocker), hand(defender))


def test_arranged_first_still_lays_off_chains_of_deadwood() -> None:
    # 7S then 8S onto 4-5-6S, both deadwood of the defender's best arrangement.
    s = knock("4S 5S 6S 9D 9H 9C JC QC KC AD", "7S 8S 2H 2D 2C KD QH 5H 3C 4D", "arrange_first")
    assert [lay["card"] for lay in s.to_dict()["layoffs"]] == ["7S", "8S"]
    assert s.defender_deadwood == 10 + 10 + 5 + 3 + 4


def test_an_unknown_layoff_method_is_refused() -> None:
    with pytest.raises(ValueError, match="layoff"):
        knock("4H 5H 6H 2S 3S 4S TC JC QC AD", "7C 7D 7S 7H 8H KS QD JH 9D 3C", "greedy")


TIED_KNOCKER = "7C 7D 7H 7S 8S 9S TS AC 2D"  # + one card chosen per test


def test_tied_knocker_arrangements_leave_the_defender_least() -> None:
    # 7C 7D 7H + 7S-TS, or 7C 7D 7H 7S + 8S-TS: the same deadwood, but only the first lets
    # the defender lay off 6S.
    knocker = hand(TIED_KNOCKER + " KH")
    set3, run4 = hand("7C 7D 7H"), hand("7S 8S 9S TS")
    set4, run3 = hand("7C 7D 7H 7S"), hand("8S 9S TS")
    assert all_best_arrangements(knocker) == sorted([(set3, run4), (set4, run3)])
    assert arrange(knocker).meld_masks == (set3, run4)

    defender = hand("6S KC KD QH JH 9D 3C 4H 2H 5C")
    s = knock(knocker, defender)
    assert s.knocker_melds == (set4, run3)
    assert (s.layoffs, s.defender_deadwood, s.points) == ((), 69, 69 - 13)
    assert oracle_defender((set3, run4), defender) == 63
    check_consistent(s, knocker, defender)

    # With nothing to lay off either way, arrange()'s own choice stands.
    other = hand("5S KC KD QH JH 9D 3C 4H 2H 5C")
    assert knock(knocker, other).knocker_melds == (set3, run4)


def test_to_dict_uses_codes_and_round_trips() -> None:
    s = knock(KNOCKER_7, "AH AD AS 5H 6H 7H 5C 8C 9C 9D")
    d = s.to_dict()
    assert d["knocker_melds"] == [["2C", "3C", "4C"], ["8D", "8H", "8S"], ["JS", "QS", "KS"]]
    assert d["knocker_deadwood_cards"] == ["7D"]
    assert d["defender_deadwood_cards"] == ["9C", "9D"]
    assert Settlement.from_dict(json.loads(json.dumps(d))) == s
    with pytest.raises(ValueError, match="outcome"):
        Settlement.from_dict(d | {"outcome": "draw"})


# --- properties against the brute-force oracle --------------------------------------------------


def _free_meld(rng: random.Random, free: int, room: int) -> int:
    """A random run or set of at most ``room`` cards, all from ``free``, or 0."""
    for _ in range(40):
        if rng.random() < 0.5:
            size = rng.randint(3, min(5, room))
            suit, start = rng.randrange(4), rng.randint(0, 13 - size)
            meld = sum(1 << (suit * 16 + r) for r in range(start, start + size))
        else:
            rank = rng.randrange(13)
            suits = rng.sample(range(4), min(rng.randint(3, 4), room))
            meld = sum(1 << (s * 16 + rank) for s in suits)
        if meld & free == meld and meld.bit_count() >= 3:
            return meld
    return 0


def random_knocker(rng: random.Random, size: int = 10) -> int:
    """A hand of ``size`` cards built from melds and low cards, deadwood <= 10."""
    while True:
        mask = 0
        if rng.random() < 0.3:
            # A 4-set and a 4-run sharing an end card: 3-set + 4-run ties 4-set + 3-run.
            rank, suit = rng.randrange(13), rng.randrange(4)
            start = rank if rank <= 9 and (rank < 3 or rng.random() < 0.5) else rank - 3
            mask = sum(1 << (s * 16 + rank) for s in range(4))
            mask |= sum(1 << (suit * 16 + r) for r in range(start, start + 4))
        reserve = 0 if rng.random() < 0.2 else rng.randint(1, 3)  # slots kept for deadwood
        while size - reserve - mask.bit_count() >= 3:
            meld = _free_meld(rng, FULL_DECK_MASK & ~mask, size - reserve - mask.bit_count())
            if not meld:
                break
            mask |= meld
        budget = 10
        while mask.bit_count() < size:
            low = [c for c in ALL_CARDS if not mask >> c & 1 and POINTS[c] <= budget]
            if not low:
                break
            c = rng.choice(low)
            mask |= 1 << c
            budget -= POINTS[c]
        if mask.bit_count() == size and deadwood(mask) <= 10:
            return mask


def _near(cards: int, free: list[int]) -> list[int]:
    """The ``free`` cards of a rank in ``cards`` or within two ranks of one in its suit."""
    ranks = {c & 15 for c in bits(cards)}
    return [
        c
        for c in free
        if (c & 15) in ranks or any(cards >> (c + d) & 1 for d in (-2, -1, 1, 2) if 0 <= c + d < 64)
    ]


def random_defender(rng: random.Random, knocker: int, dense: bool) -> int:
    """10 of the cards the knocker does not hold; when ``dense``, mostly cards that could be
    laid off onto the knocker's melds, and cards that meld with those instead."""
    free = [int(c) for c in ALL_CARDS if not knocker >> c & 1]
    if not dense:
        return to_mask(rng.sample(free, 10))
    near = _near(knocker, free)
    first = rng.sample(near, min(len(near), rng.randint(3, 7)))
    around = [c for c in _near(to_mask(first), free) if c not in first]
    chosen = first + rng.sample(around, min(len(around), rng.randint(0, 10 - len(first))))
    rest = [c for c in free if c not in chosen]
    return to_mask(chosen + rng.sample(rest, 10 - len(chosen)))


# Hands are built by a seeded generator (rejection loops shrink poorly as hypothesis data);
# a failure prints the seed, which replays the same hands.
SEEDS = st.integers(0, 2**64)
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(SEEDS)
def test_all_best_arrangements_match_brute_force(seed: int) -> None:
    rng = random.Random(seed)
    knocker = random_knocker(rng, size=rng.choice((10, 10, 11)))
    assert all_best_arrangements(knocker) == oracle_best_arrangements(knocker)
    assert arrange(knocker).meld_masks in all_best_arrangements(knocker)


@PROPERTY
@given(SEEDS, st.booleans())
def test_settlement_matches_brute_force(seed: int, dense: bool) -> None:
    rng = random.Random(seed)
    knocker = random_knocker(rng)
    defender = random_defender(rng, knocker, dense)
    s = knock(knocker, defender)
    check_consistent(s, knocker, defender)
    arrangements = oracle_best_arrangements(knocker)
    assert s.knocker_melds in arrangements
    k = pts(knocker & ~union(arrangements[0]))
    assert s.knocker_deadwood == k
    if k == 0:
        assert s.outcome == "gin"
        assert s.defender_deadwood == oracle_defender((), defender)
        assert s.points == s.defender_deadwood + 25
        return
    d = max(oracle_defender(a, defender) for a in arrangements)
    assert s.defender_deadwood == d
    assert oracle_defender(s.knocker_melds, defender) == d
    if oracle_defender(arrange(knocker).meld_masks, defender) == d:
        assert s.knocker_melds == arrange(knocker).meld_masks
    if k < d:
        assert (s.outcome, s.knocker_won, s.points) == ("knock", True, d - k)
    else:
        assert (s.outcome, s.knocker_won, s.points) == ("undercut", False, k - d + 25)


@settings(max_examples=80, deadline=None)
@given(SEEDS)
def test_layoffs_are_never_worse_than_greedy(seed: int) -> None:
    rng = random.Random(seed)
    knocker = random_knocker(rng)
    assume(deadwood(knocker) > 0)
    defender = random_defender(rng, knocker, dense=True)
    s = knock(knocker, defender)
    assert s.defender_deadwood <= greedy_defender(s.knocker_melds, defender)


@PROPERTY
@given(SEEDS, st.booleans())
def test_arranged_first_matches_its_oracle_and_never_beats_joint(seed: int, dense: bool) -> None:
    rng = random.Random(seed)
    knocker = random_knocker(rng)
    assume(deadwood(knocker) > 0)
    defender = random_defender(rng, knocker, dense)
    first = knock(knocker, defender, "arrange_first")
    check_consistent(first, knocker, defender)
    d = max(oracle_arranged_first(a, defender) for a in oracle_best_arrangements(knocker))
    assert first.defender_deadwood == d
    assert first.defender_melds == arrange(defender).meld_masks
    assert knock(knocker, defender).defender_deadwood <= d
