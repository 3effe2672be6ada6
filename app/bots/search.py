"""LUNA's search: determinized Monte Carlo over what its seat cannot see, by match value.

A decision with real alternatives (take the upcard or pass; draw the discard or the stock;
which card to discard; knock now or play on) is searched. Each *sample* deals the hidden cards
one way consistent with everything public: the opponent's hand drawn from hard's model of it
(``HardBot.holding``, ``knock.sample_opponent``, and the opponent model's habits,
``app.bots.opponent``) and the rest, shuffled, as the stock. Every
candidate is played out on that same sample (common random numbers: the candidates differ by
their move, not their luck) by a fast policy for both seats (the searching seat waiting for gin
as hard does, see ``Hand``, and the opponent too on the share of samples the model says it
waits), and the hand's result is valued by the chance of winning the match
from the scores it leaves (``win_chance``): 20 points at 95-90 are worth more than at 0-0. The
heuristic ranks the candidates; another candidate replaces its first choice only when its gain
over it, paired sample by sample, is clear of the noise.

The budget is work, not time: ``Budget.playouts`` playouts in all, so a decision is a function
of the view, the events, the budget and the seed alone. ``Budget.cap_ms`` of wall time guards
it: the search checks the clock after each sample and, cut short, answers with the best
candidate so far (before any sample, the heuristic's own choice). A budget too small for
``MIN_SAMPLES`` samples per candidate leaves the choice to the heuristic, and a candidate
overrules the heuristic's choice only with evidence (``EVIDENCE``).
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypedDict

from app.bots.evaluate import bits, costliest, melds_with
from app.bots.knock import Sampler
from app.bots.knowledge import Knowledge
from app.bots.opponent import Habits
from app.engine.cards import POINTS, SPREAD
from app.engine.melds import arrange, best_arrangement, deadwood, points
from app.engine.settlement import settle

# Fewer samples than this per candidate would be noise, not judgement: the heuristic decides.
MIN_SAMPLES = 8
# A searched candidate overrules the heuristic's choice only when its mean paired gain is this
# many standard errors above zero: fewer samples than the noise needs keep the judgement.
EVIDENCE = 1.5


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a search may do: ``playouts`` in all (the work), a wall-time ``cap_ms`` guard,
    and the ``seed`` mixed with what the seat sees to make its samples."""

    playouts: int = 400
    cap_ms: float = 150.0
    seed: int = 0

    def scaled(self, factor: float) -> Budget:
        """The same budget with ``factor`` times the work and the cap."""
        return Budget(int(self.playouts * factor), self.cap_ms * factor, self.seed)


@dataclass(frozen=True, slots=True)
class Terms:
    """What a hand's result is worth: the scoring rules of the hand and the match scores."""

    me: int
    scores: tuple[int, int]
    target: int
    gin_bonus: int
    big_gin_bonus: int
    undercut_bonus: int
    multiplier: int
    layoff: str

    @classmethod
    def of(cls, view: Mapping[str, Any]) -> Terms:
        rules = view["match"]["rules"]
        scores = view["match"]["scores"]
        return cls(
            me=int(view["you"]),
            scores=(int(scores[0]), int(scores[1])),
            target=int(rules["target"]),
            gin_bonus=int(rules["gin_bonus"]),
            big_gin_bonus=int(rules["big_gin_bonus"]),
            undercut_bonus=int(rules["undercut_bonus"]),
            multiplier=int(view["hand"]["multiplier"]),
            layoff=str(rules.get("layoff", "joint")),
        )

    def value(self, mine: int) -> float:
        """The chance of winning the match after a hand that gave me ``mine`` points (negative:
        the opponent scored ``-mine``)."""
        me, opp = self.scores[self.me], self.scores[1 - self.me]
        if mine > 0:
            me += mine
        else:
            opp -= mine
        return win_chance(self.target - me, self.target - opp, self.target)


# Points a hand's winner scores, roughly as the bots' arena spreads them (knocks of a few to
# twenty-odd points, gins and undercuts from 25 up), for the match-value table only.
_HAND_POINTS = ((4, 0.14), (9, 0.18), (14, 0.16), (20, 0.12), (30, 0.14), (40, 0.14), (55, 0.12))
# Needs above this are scaled down onto the table (targets beyond the usual 100-250).
_TABLE_SIZE = 300


@lru_cache(maxsize=8)
def _win_table(size: int) -> tuple[tuple[float, ...], ...]:
    """W[a][b]: the chance to win needing ``a`` more points against an opponent needing ``b``,
    each hand won by either side alike with points drawn from ``_HAND_POINTS``."""
    table = [[0.0] * (size + 1) for _ in range(size + 1)]
    for a in range(1, size + 1):
        for b in range(1, size + 1):
            total = 0.0
            for pts, p in _HAND_POINTS:
                total += p * (1.0 if a <= pts else table[a - pts][b])
                total += p * (0.0 if b <= pts else table[a][b - pts])
            table[a][b] = total / 2
    return tuple(tuple(row) for row in table)


def win_chance(need_me: int, need_opp: int, target: int) -> float:
    """The chance to win the match needing ``need_me`` more points, the opponent ``need_opp``."""
    if need_me <= 0:
        return 1.0
    if need_opp <= 0:
        return 0.0
    if target > _TABLE_SIZE:
        need_me = max(1, need_me * _TABLE_SIZE // target)
        need_opp = max(1, need_opp * _TABLE_SIZE // target)
    return _win_table(_TABLE_SIZE)[min(need_me, _TABLE_SIZE)][min(need_opp, _TABLE_SIZE)]


@dataclass(slots=True)
class World:
    """One determinization: both hands (``hands[0]`` is the searching seat's), the stock (top
    last) and the discard pile (top last)."""

    hands: list[int]
    stock: list[int]
    pile: list[int]


def sample_world(k: Knowledge, sample: Sampler, rng: random.Random) -> World:
    """Hidden cards dealt one way consistent with ``k``: the opponent's hand (``sample``'s),
    then the stock."""
    opp = sample(rng)
    stock = list(bits(k.unseen & ~opp))
    rng.shuffle(stock)
    return World([k.hand, opp], stock, list(k.discard_pile))


@dataclass(frozen=True, slots=True)
class Hand:
    """The rules of the hand being played out, and how long the searching seat (seat 0) waits
    for gin in a playout: with deadwood from 1 to ``wait`` it plays on while more than
    ``wait_turns`` of its draws are left (as ``HardBot`` does), else it knocks at once."""

    knock_limit: int
    dead_hand_at: int
    big_gin: bool
    wait: int = 0
    wait_turns: int = 0
    # At the upcard offer: whether a pass offers the upcard to the opponent (the searching
    # seat is offered it first) rather than sending the non-dealer to the stock.
    offer_next: bool = False
    # Whether the opponent (seat 1) waits for gin as the searching seat does (the samples
    # where the opponent model, ``app.bots.opponent``, has it wait).
    opp_waits: bool = False

    def knocks(self, turn: int, after: int, stock: int) -> bool:
        """Whether ``turn`` knocks with ``after`` deadwood and ``stock`` cards in the stock."""
        if after > self.knock_limit:
            return False
        if (turn and not self.opp_waits) or not 0 < after <= self.wait:
            return True
        return (stock - self.dead_hand_at) // 2 <= self.wait_turns


# Turns a playout may take. Two seats taking each other's discards can pass cards round for
# ever without touching the stock (the fast policy is deterministic); such a playout counts as
# a dead hand. A real hand's stock runs out within about 60 turns.
MAX_PLAYOUT_TURNS = 80


def playout(world: World, turn: int, drawn: int | None, hand: Hand, terms: Terms) -> float:
    """Play the hand out from ``turn``'s discard (``drawn``: the card it took from the pile, if
    any) with the fast policy for both seats; the match value of the result to seat 0."""
    hands, stock, pile = world.hands, world.stock, world.pile
    for _ in range(MAX_PLAYOUT_TURNS):
        h = hands[turn]
        a = best_arrangement(h)
        if a.deadwood == 0 and hand.big_gin:
            s = settle(h, hands[1 - turn], big_gin=True, **_bonuses(terms))
            return terms.value(s.points if turn == 0 else -s.points)
        loose = h & ~a.melded_mask
        if drawn is not None:
            loose &= ~(1 << drawn)
        if loose:
            drop = costliest(loose)
            after = a.deadwood - POINTS[drop]
        else:
            # Everything that may leave is melded: the discard that costs the least.
            drop, after = min(
                ((c, deadwood(h & ~(1 << c))) for c in bits(h) if c != drawn),
                key=lambda x: (x[1], x[0]),
            )
        h &= ~(1 << drop)
        if hand.knocks(turn, after, len(stock)):
            won = knock_points(h, hands[1 - turn], terms)
            return terms.value(won if turn == 0 else -won)
        hands[turn] = h
        pile.append(drop)
        if len(stock) <= hand.dead_hand_at:
            return terms.value(0)
        turn = 1 - turn
        h = hands[turn]
        top = pile[-1]
        if melds_with(h, top):
            pile.pop()
            drawn = top
        else:
            drawn = None
            top = stock.pop()
        hands[turn] = h | 1 << top
    return terms.value(0)


def knock_points(knocker: int, defender: int, terms: Terms) -> int:
    """The points of a knock (gin at no deadwood) with the 10 cards ``knocker`` against
    ``defender``, to the knocker (negative: to the defender, an undercut), settled fast for a
    playout: the knocker's melds are ``arrange``'s, and the defender lays off only its
    deadwood cards, as ``arrange_first`` layoffs do (``joint`` ones now and then lay off a
    little more; the engine's ``settle`` weighs every choice, several times slower)."""
    a = arrange(knocker)
    k = a.deadwood
    own = arrange(defender)
    if k == 0:
        return (own.deadwood + terms.gin_bonus) * terms.multiplier
    loose = own.deadwood_mask
    laid = 0
    for meld in a.meld_masks:
        lo = (meld & -meld).bit_length() - 1
        hi = meld.bit_length() - 1
        if lo >> 4 == hi >> 4:  # a run: the defender's loose cards that extend either end
            c = lo - 1
            while c & 15 != 15 and loose >> c & 1:  # below an ace the rank is 15 (or c is -1)
                laid |= 1 << c
                c -= 1
            c = hi + 1
            while c & 15 < 13 and loose >> c & 1:
                laid |= 1 << c
                c += 1
        elif meld.bit_count() == 3:
            laid |= SPREAD << (lo & 15) & ~meld & loose
    d = own.deadwood - points(laid)
    if k < d:
        return (d - k) * terms.multiplier
    return -(k - d + terms.undercut_bonus) * terms.multiplier


class _SettleTerms(TypedDict):
    gin_bonus: int
    big_gin_bonus: int
    undercut_bonus: int
    multiplier: int
    layoff: str


def _bonuses(terms: Terms) -> _SettleTerms:
    return {
        "gin_bonus": terms.gin_bonus,
        "big_gin_bonus": terms.big_gin_bonus,
        "undercut_bonus": terms.undercut_bonus,
        "multiplier": terms.multiplier,
        "layoff": terms.layoff,
    }


# A candidate move: ("draw_stock" | "draw_discard" | "take_upcard" | "pass" | "discard" |
# "knock", card or None).
Move = tuple[str, int | None]


def evaluate(move: Move, world: World, hand: Hand, terms: Terms) -> float:
    """The match value to the searching seat of ``move`` on one determinization (consumed)."""
    kind, card = move
    me = world.hands[0]
    if kind == "draw_stock":
        world.hands[0] = me | 1 << world.stock.pop()
        return playout(world, 0, None, hand, terms)
    if kind in ("draw_discard", "take_upcard"):
        top = world.pile.pop()
        world.hands[0] = me | 1 << top
        return playout(world, 0, top, hand, terms)
    if kind == "pass":
        return _passed(world, hand, terms)
    assert card is not None
    rest = me & ~(1 << card)
    if kind == "knock":
        s = settle(rest, world.hands[1], big_gin=False, **_bonuses(terms))
        return terms.value(s.points if s.knocker_won else -s.points)
    world.hands[0] = rest
    world.pile.append(card)
    if len(world.stock) <= hand.dead_hand_at:
        return terms.value(0)
    opp = world.hands[1]
    top = card
    drawn: int | None = top
    if melds_with(opp, top):
        world.pile.pop()
    else:
        drawn = None
        top = world.stock.pop()
    world.hands[1] = opp | 1 << top
    return playout(world, 1, drawn, hand, terms)


def _passed(world: World, hand: Hand, terms: Terms) -> float:
    """The match value of passing the upcard: offered it next, the opponent takes it only to
    meld it (the fast policy), else the non-dealer, who was offered it first, draws from the
    stock (the refused upcard stays put)."""
    opp, top = world.hands[1], world.pile[-1]
    if hand.offer_next and melds_with(opp, top):
        world.pile.pop()
        world.hands[1] = opp | 1 << top
        return playout(world, 1, top, hand, terms)
    drawer = 0 if hand.offer_next else 1
    world.hands[drawer] |= 1 << world.stock.pop()
    return playout(world, drawer, None, hand, terms)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a search chose, its mean values per candidate, and the work it did."""

    move: Move
    values: dict[Move, float]
    samples: int
    playouts: int
    cut_short: bool


def search(
    k: Knowledge,
    view: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]],
    candidates: Sequence[Move],
    *,
    chance: Mapping[int, float],
    extra: int,
    budget: Budget,
    started: float | None = None,
    wait: int = 0,
    wait_turns: int = 0,
    habits: Habits | None = None,
) -> Outcome:
    """The candidate (listed best first by the heuristic) with the best match value over
    samples of the hidden cards, within ``budget`` (see the module doc); the wall-time cap
    counts from ``started`` (``time.perf_counter()``; default: now); ``wait`` and ``wait_turns``:
    how the searching seat waits for gin in its playouts (see ``Hand``); ``habits``: the opponent
    model, which shapes the sampled hands and has the opponent wait for gin on its share of the
    samples (None: the opponent knocks at once, and hands are sampled by ``chance`` alone)."""
    start = time.perf_counter() if started is None else started
    rng = random.Random(_seed(view, events, budget.seed))
    terms = Terms.of(view)
    top = k.top
    offer_next = "pass" in k.actions and top is not None and not k.opp_refused >> top & 1
    hand = Hand(k.knock_limit, k.dead_hand_at, k.big_gin, wait, wait_turns, offer_next)
    waiting = Hand(k.knock_limit, k.dead_hand_at, k.big_gin, wait, wait_turns, offer_next, True)
    waits = 0.0 if habits is None else habits.waits
    totals = dict.fromkeys(candidates, 0.0)
    # Per candidate, the sum and sum of squares of its value minus the heuristic choice's on
    # the same sample: the evidence needed to overrule the heuristic.
    diffs = dict.fromkeys(candidates, 0.0)
    squares = dict.fromkeys(candidates, 0.0)
    samples = budget.playouts // len(candidates)
    if samples < MIN_SAMPLES:
        return Outcome(candidates[0], {}, 0, 0, False)
    sample = Sampler(k, chance, extra, habits)
    done = 0
    cut = False
    for _ in range(samples):
        if (time.perf_counter() - start) * 1000 > budget.cap_ms:
            cut = True
            break
        world = sample_world(k, sample, rng)
        rules = waiting if waits and rng.random() < waits else hand
        first = 0.0
        for i, move in enumerate(candidates):
            copy = World(list(world.hands), list(world.stock), list(world.pile))
            value = evaluate(move, copy, rules, terms)
            totals[move] += value
            if i == 0:
                first = value
            diffs[move] += value - first
            squares[move] += (value - first) ** 2
        done += 1
    if not done:
        return Outcome(candidates[0], {}, 0, 0, True)
    values = {m: v / done for m, v in totals.items()}
    return Outcome(
        _best(candidates, diffs, squares, done), values, done, done * len(candidates), cut
    )


def _best(
    candidates: Sequence[Move], diffs: Mapping[Move, float], squares: Mapping[Move, float], n: int
) -> Move:
    """The heuristic's choice unless another beats it by ``EVIDENCE`` standard errors of the
    paired difference; then the one that beats it by the most."""
    best, margin = candidates[0], 0.0
    for move in candidates[1:]:
        mean = diffs[move] / n
        spread = max(0.0, squares[move] / n - mean * mean)
        error = (spread / max(1, n - 1)) ** 0.5
        if mean > EVIDENCE * error and mean > margin:
            best, margin = move, mean
    return best


def _seed(view: Mapping[str, Any], events: Sequence[Mapping[str, Any]], seed: int) -> int:
    seen = json.dumps([view, list(events), seed], sort_keys=True, default=str).encode()
    return int.from_bytes(hashlib.sha256(seen).digest()[:8], "big")
