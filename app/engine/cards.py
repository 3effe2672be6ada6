"""Cards: canonical codes, points, bit masks and the seeded shuffle.

A card is a small int, ``suit * 16 + rank`` (rank 0 = ace .. 12 = king; suits C D H S).
The 16-wide lanes leave three zero bits above each suit's 13 ranks, so a hand held as a
64-bit mask (bit ``card``) can be shifted to find runs without one suit bleeding into the
next, and a rank's four cards sit 16 bits apart for set detection.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from itertools import count

RANKS = "A23456789TJQK"
SUITS = "CDHS"
LANE = 16
RANK_MASK = (1 << 13) - 1
# The same rank bit in all four suit lanes: multiply a 13-bit rank mask by this to spread it.
SPREAD = 1 | 1 << LANE | 1 << 2 * LANE | 1 << 3 * LANE


class Card(int):
    """One of the 52 cards; an int (``suit * 16 + rank``) that prints as its code."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        return self & 15

    @property
    def suit(self) -> int:
        return self >> 4

    @property
    def code(self) -> str:
        return _CODE_OF[self]

    @property
    def points(self) -> int:
        return POINTS[self]

    def __str__(self) -> str:
        return self.code

    def __repr__(self) -> str:
        return self.code


def _points(rank: int) -> int:
    return min(rank + 1, 10)


ALL_CARDS: tuple[Card, ...] = tuple(Card(s * LANE + r) for s in range(4) for r in range(13))
# Codes are built once: snapshots, events and views turn thousands of cards into codes per move.
_CODE_OF: dict[int, str] = {int(c): RANKS[c & 15] + SUITS[c >> 4] for c in ALL_CARDS}
# The codes of the cards in each byte of a mask, per byte position (8 x 256 small tuples), so a
# hand's codes take eight lookups instead of a step per card.
_BYTE_CODES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(
        tuple(_CODE_OF[8 * i + k] for k in range(8) if byte >> k & 1 and 8 * i + k in _CODE_OF)
        for byte in range(256)
    )
    for i in range(8)
)
# Indexed by card id (0..63); the gaps between lanes hold 0 and are never real cards.
POINTS: tuple[int, ...] = tuple(_points(c & 15) if (c & 15) < 13 else 0 for c in range(64))
_BY_ID: dict[int, Card] = {int(c): c for c in ALL_CARDS}
_BY_CODE: dict[str, Card] = {c.code: c for c in ALL_CARDS}
_ID_OF: dict[str, int] = {code: c for c, code in _CODE_OF.items()}
# Each canonical code to its card's bit: a hand's mask is the sum over its codes.
CODE_BIT: dict[str, int] = {code: 1 << c for c, code in _CODE_OF.items()}
FULL_DECK_MASK = sum(1 << c for c in ALL_CARDS)


class CardParseError(ValueError):
    """A string that is not a card code."""

    def __init__(self, text: str) -> None:
        super().__init__(f"not a card: {text!r}")
        self.text = text


def parse_card(value: str | int) -> Card:
    """A card from a code (``AS``, ``10h``, ``th``) or a card id; raises CardParseError."""
    if isinstance(value, int):
        card = _BY_ID.get(int(value))
        if card is None:
            raise CardParseError(str(value))
        return card
    text = value.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    card = _BY_CODE.get(text)
    if card is None:
        raise CardParseError(value)
    return card


def parse_cards(values: Iterable[str | int]) -> list[Card]:
    """Cards from codes or ids, in the given order."""
    return [parse_card(v) for v in values]


def card(card_id: int) -> Card:
    """The interned Card for a card id known to be valid."""
    return _BY_ID[card_id]


def to_mask(cards: Iterable[int]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def from_mask(mask: int) -> list[Card]:
    """The cards of a mask, in id order (by suit, then rank)."""
    out: list[Card] = []
    while mask:
        low = mask & -mask
        out.append(_BY_ID[low.bit_length() - 1])
        mask ^= low
    return out


def codes(cards: Iterable[int]) -> list[str]:
    """The codes of card ids, in the given order; raises KeyError for an id that is no card."""
    return list(map(_CODE_OF.__getitem__, cards))


def code(card_id: int) -> str:
    """The code of a card id known to be valid."""
    return _CODE_OF[card_id]


def mask_codes(mask: int) -> list[str]:
    """The codes of a mask's cards, in id order (by suit, then rank): ``codes(from_mask(mask))``.

    Bits that are no card (the lane gaps) are skipped; the engine's masks never hold them.
    """
    if not mask:
        return []
    b0, b1, b2, b3, b4, b5, b6, b7 = _BYTE_CODES
    return [
        *b0[mask & 255],
        *b1[mask >> 8 & 255],
        *b2[mask >> 16 & 255],
        *b3[mask >> 24 & 255],
        *b4[mask >> 32 & 255],
        *b5[mask >> 40 & 255],
        *b6[mask >> 48 & 255],
        *b7[mask >> 56 & 255],
    ]


def card_ids(values: Iterable[str]) -> list[int]:
    """Card ids from codes, in the given order; canonical codes (as stored) skip the parser."""
    get = _ID_OF.get
    return [c if (c := get(v)) is not None else int(parse_card(v)) for v in values]


def codes_mask(values: Iterable[str | int]) -> int:
    """The mask of the cards with these codes (or card ids); raises CardParseError on a bad one.

    Canonical codes (as stored and sent) are summed from one table, in C: ten codes take about
    a third of a microsecond. Anything else (another spelling, a card id, a duplicate, which a
    sum would carry into another card) goes through ``parse_card``, card by card.
    """
    if type(values) is not list and type(values) is not tuple:
        values = list(values)
    try:
        mask = sum(map(CODE_BIT.__getitem__, values))
    except (KeyError, TypeError):
        mask = -1
    if mask >= 0 and mask.bit_count() == len(values):
        return mask
    mask = 0
    for v in values:
        mask |= 1 << parse_card(v)
    return mask


def points_of(cards: Iterable[int]) -> int:
    return sum(POINTS[c] for c in cards)


_WORD_SPACE = 1 << 32
# Digit-only nonces shorter than this could name a shuffle block (see ``commitment``).


def _stream_words(seed: str) -> Iterator[int]:
    """The shuffle's random words: SHA-256 of ``f"{seed}:{i}"`` for i = 0, 1, ..., in uint32s."""
    for i in count():
        block = hashlib.sha256(f"{seed}:{i}".encode()).digest()
        for offset in range(0, 32, 4):
            yield int.from_bytes(block[offset : offset + 4], "big")


def shuffled_deck(seed: str) -> list[Card]:
    """The 52 cards in the order ``seed`` deals them; a fixed, re-implementable algorithm.

    Anyone holding a revealed seed can recompute the deck in any language:

    1. Start from the canonical order: suits C D H S, ranks A 2 .. 9 T J Q K within each suit,
       i.e. ``AC 2C .. KC AD .. KD AH .. KH AS .. KS`` (positions 0 .. 51).
    2. Random words: for block index i = 0, 1, 2, ... compute
       ``SHA-256(UTF-8 bytes of seed + ":" + decimal i)`` (no padding, e.g. ``"abc:0"``,
       ``"abc:1"``, ``"abc:10"``) and split each 32-byte digest into eight big-endian unsigned
       32-bit words, taken in order; blocks are used one after another.
    3. Fisher-Yates: for k = 51 down to 1, let n = k + 1 and
       ``limit = 2**32 - (2**32 mod n)`` (the largest multiple of n not above 2**32); take
       the next word w, discarding words with ``w >= limit`` (each discarded word is
       consumed), then j = w mod n, and swap positions k and j.

    The deck is dealt from position 0.
    """
    deck = list(ALL_CARDS)
    words = _stream_words(seed)
    for k in range(len(deck) - 1, 0, -1):
        n = k + 1
        limit = _WORD_SPACE - _WORD_SPACE % n
        w = next(words)
        while w >= limit:
            w = next(words)
        j = w % n
        deck[k], deck[j] = deck[j], deck[k]
    return deck


def commitment(seed: str, nonce: str) -> str:
    """SHA-256 hex of ``f"commit:{seed}:{nonce}"``, published at a hand's start, checked at reveal.

    The ``commit:`` prefix keeps it apart from the shuffle blocks' inputs (``f"{seed}:{i}"``),
    so no nonce can make the commitment publish the shuffle's own random words.
    """
    return hashlib.sha256(f"commit:{seed}:{nonce}".encode()).hexdigest()
