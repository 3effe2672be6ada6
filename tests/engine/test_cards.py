"""Card codes, points, and the verifiable seeded shuffle."""

from __future__ import annotations

import hashlib
import struct
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.engine.cards import (
    ALL_CARDS,
    FULL_DECK_MASK,
    POINTS,
    CardParseError,
    card_ids,
    code,
    codes,
    codes_mask,
    commitment,
    from_mask,
    mask_codes,
    parse_card,
    parse_cards,
    points_of,
    shuffled_deck,
    to_mask,
)
from app.engine.melds import best_arrangement


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("AS", "AS"),
        ("as", "AS"),
        ("10H", "TH"),
        ("10h", "TH"),
        ("th", "TH"),
        ("TH", "TH"),
        (" ks ", "KS"),
        ("2c", "2C"),
        ("Qd", "QD"),
        ("9S", "9S"),
    ],
)
def test_parse_codes(text: str, code: str) -> None:
    assert parse_card(text).code == code
    assert str(parse_card(text)) == code


@pytest.mark.parametrize(("card_id", "code"), [(0, "AC"), (12, "KC"), (16, "AD"), (60, "KS")])
def test_parse_ids(card_id: int, code: str) -> None:
    assert parse_card(card_id).code == code
    assert parse_card(card_id) == card_id


@pytest.mark.parametrize(
    "bad", ["1H", "ZZ", "11S", "", "  ", "A", "S", "AX", "10", "1OH", "AS2", "TTH", "AS KS"]
)
def test_bad_codes_raise(bad: str) -> None:
    with pytest.raises(CardParseError) as info:
        parse_card(bad)
    assert info.value.text == bad


@pytest.mark.parametrize("bad", [-1, 13, 14, 15, 29, 31, 45, 61, 63, 64, 100])
def test_ids_in_lane_gaps_raise(bad: int) -> None:
    with pytest.raises(CardParseError):
        parse_card(bad)


def test_card_parse_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a card"):
        parse_card("ZZ")


def test_canonical_output_round_trips() -> None:
    all_codes = [c.code for c in ALL_CARDS]
    assert len(set(all_codes)) == 52
    assert all_codes[:13] == [r + "C" for r in "A23456789TJQK"]
    assert [c[1] for c in all_codes[::13]] == list("CDHS")
    for c in ALL_CARDS:
        assert parse_card(c.code) == c
        assert parse_card(c.code.lower()) == c
        assert repr(c) == c.code
    assert codes(parse_cards(["10c", "as", 5])) == ["TC", "AS", "6C"]


@given(st.lists(st.sampled_from(ALL_CARDS), unique=True))
def test_code_tables_agree_with_the_cards(hand: list[int]) -> None:
    mask = to_mask(hand)
    expected = [c.code for c in from_mask(mask)]
    assert mask_codes(mask) == expected
    assert codes(hand) == [parse_card(c).code for c in hand] == [code(c) for c in hand]
    assert codes_mask(expected) == mask
    assert card_ids(codes(hand)) == [int(c) for c in hand]


def test_code_tables_cover_the_deck_and_read_loose_codes() -> None:
    assert mask_codes(FULL_DECK_MASK) == [c.code for c in ALL_CARDS]
    assert mask_codes(0) == []
    assert card_ids(["10h", "as", "KS"]) == [int(parse_card(c)) for c in ("TH", "AS", "KS")]
    assert codes_mask(["10h", " as"]) == to_mask(parse_cards(["TH", "AS"]))
    for bad in (["ZZ"], ["AS", "1H"]):
        with pytest.raises(CardParseError):
            card_ids(bad)
        with pytest.raises(CardParseError):
            codes_mask(bad)
    with pytest.raises(KeyError):
        codes([13])


def test_rank_and_suit() -> None:
    card = parse_card("QH")
    assert (card.rank, card.suit) == (11, 2)


def test_masks_round_trip() -> None:
    hand = parse_cards(["KS", "AC", "TH", "2D"])
    assert [c.code for c in from_mask(to_mask(hand))] == ["AC", "2D", "TH", "KS"]


def test_points_table() -> None:
    expected = {"A": 1, "T": 10, "J": 10, "Q": 10, "K": 10}
    expected.update({str(n): n for n in range(2, 10)})
    for c in ALL_CARDS:
        assert c.points == expected[c.code[0]] == POINTS[c]
    assert points_of(ALL_CARDS) == 4 * (sum(range(1, 11)) + 30)


def reference_deck(seed: str) -> list[str]:
    """An independent re-implementation of the algorithm documented in ``shuffled_deck``."""
    deck = [rank + suit for suit in "CDHS" for rank in "A23456789TJQK"]
    words: list[int] = []
    block = 0
    for k in range(51, 0, -1):
        n = k + 1
        while True:
            if not words:
                digest = hashlib.sha256((seed + ":" + str(block)).encode("utf-8")).digest()
                words = list(reversed(struct.unpack(">8I", digest)))
                block += 1
            w = words.pop()
            if w < (2**32 // n) * n:
                break
        j = w % n
        deck[k], deck[j] = deck[j], deck[k]
    return deck


@pytest.mark.parametrize("seed", ["", "0", "gin-rummy", "table 7 / hand 3", "ção:1", "x" * 300])
def test_shuffle_matches_the_documented_algorithm(seed: str) -> None:
    assert [c.code for c in shuffled_deck(seed)] == reference_deck(seed)


def test_shuffle_known_answer() -> None:
    # Pinned so a change of algorithm cannot pass unnoticed; other implementations can check it.
    deck = " ".join(c.code for c in shuffled_deck("gin-rummy"))
    assert deck.startswith("QS 3D 6D 2H 2C JC QC KC JS 9D 7C TD 8D 7D 4S KD 4H QH QD 3H 7S")
    assert deck.endswith("AS 5D TS KH 3S 9C AH 8S 2S")


def test_shuffle_is_a_deterministic_permutation() -> None:
    deck = shuffled_deck("seed-1")
    assert sorted(deck) == sorted(ALL_CARDS)
    assert deck == shuffled_deck("seed-1")
    assert deck != shuffled_deck("seed-2")
    assert deck != list(ALL_CARDS)


def test_different_seeds_give_different_decks() -> None:
    decks = {tuple(shuffled_deck(f"s{i}")) for i in range(200)}
    assert len(decks) == 200


def test_shuffle_is_roughly_uniform() -> None:
    ace_of_spades = parse_card("AS")
    seeds = 2000
    positions = Counter(shuffled_deck(f"u{i}").index(ace_of_spades) for i in range(seeds))
    expected = seeds / 52
    chi2 = sum((positions.get(p, 0) - expected) ** 2 / expected for p in range(52))
    # 51 degrees of freedom: mean 51, sd ~10; 120 is beyond p = 1e-6 for a fair shuffle.
    assert chi2 < 120


def test_commitment() -> None:
    digest = commitment("gin-rummy", "n0nce")
    assert digest == hashlib.sha256(b"commit:gin-rummy:n0nce").hexdigest()
    assert len(digest) == 64
    assert commitment("gin-rummy", "other") != digest
    assert commitment("other", "n0nce") != digest


def test_commitment_never_equals_a_shuffle_block() -> None:
    blocks = {hashlib.sha256(f"gin-rummy:{i}".encode()).hexdigest() for i in range(100)}
    assert not {commitment("gin-rummy", str(i)) for i in range(100)} & blocks


def test_codes_mask_reads_a_duplicate_as_one_card_not_as_a_carry() -> None:
    """The fast path sums bits: a duplicate would carry into another card, so it goes through
    ``parse_card`` (7H + 7H must not read as 8H)."""
    assert codes_mask(["7H", "7H", "AS"]) == to_mask(parse_cards(["7H", "AS"]))
    assert codes_mask(iter(["KC", "QC"])) == to_mask(parse_cards(["KC", "QC"]))
    assert codes_mask([0, "2C"]) == to_mask(parse_cards(["AC", "2C"]))
    assert best_arrangement(["7H", "7H", "AS"]).mask == to_mask(parse_cards(["7H", "AS"]))
