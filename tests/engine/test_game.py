"""The hand and match state machine: worked examples of every rule of RULES.md §3–§9."""

from __future__ import annotations

import dataclasses

import pytest

from app.engine import (
    PRESETS,
    Action,
    MatchState,
    RuleError,
    Ruleset,
    abort,
    apply,
    legal_actions,
    make_ruleset,
    new_match,
    parse_card,
)
from app.engine.cards import FULL_DECK_MASK, card, shuffled_deck
from app.engine.game import _cards
from app.engine.state import DISCARD, DRAW, FINISHED, OVER, UPCARD_OFFER
from tests.engine.builders import legal_kinds, play, position

# Seat 0: A23C, 555, 999 and the 7C: deadwood 7 once it discards what it draws.
KNOCKER = "AC 2C 3C 5D 5H 5S 9D 9H 9S 7C"
# Seat 1: A-4D and T-KC runs, 8S and TD loose: deadwood 18, nothing to lay off on KNOCKER.
DEFENDER_18 = "AD 2D 3D 4D TC JC QC KC 8S TD"
NO_OFFER = make_ruleset("standard", {"upcard_offer": False})


def refused(state: object, seat: int, kind: str, code: str | None = None) -> str:
    with pytest.raises(RuleError) as err:
        apply(state, seat, Action(kind, None if code is None else _id(code)))  # type: ignore[arg-type]
    return err.value.code


def _id(code: str) -> int:
    return int(parse_card(code))


# --- the deal -------------------------------------------------------------------------


def test_deal_gives_ten_each_from_the_non_dealer_and_turns_the_21st_card() -> None:
    state, events = new_match(make_ruleset("standard"), "deal")
    hand = state.hand
    deck = [int(c) for c in shuffled_deck(hand.seed)]
    leader, dealer = 1 - hand.dealer, hand.dealer
    assert _cards(hand.hands[leader]) == sorted(deck[0:20:2])
    assert _cards(hand.hands[dealer]) == sorted(deck[1:20:2])
    assert hand.discard_pile == [deck[20]]
    assert hand.stock[::-1] == deck[21:]
    assert len(hand.stock) == 31
    assert events[0].type == "hand_started"
    assert hand.seed not in str(events[0].for_recipient(0))


def test_first_dealer_is_seeded_random_and_both_seats_occur() -> None:
    dealers = {new_match(make_ruleset("standard"), f"s{i}")[0].hand.dealer for i in range(20)}
    assert dealers == {0, 1}
    again = [new_match(make_ruleset("standard"), f"s{i}")[0].hand.dealer for i in range(20)]
    assert again == [new_match(make_ruleset("standard"), f"s{i}")[0].hand.dealer for i in range(20)]


def test_cardems_seat_0_leads_without_an_upcard_offer() -> None:
    state, _ = new_match(make_ruleset("cardems"), "x")
    assert (state.hand.dealer, state.hand.turn, state.hand.phase) == (1, 0, DRAW)
    assert legal_kinds(state, 0) == {"draw_stock", "draw_discard", "resign"}
    state = play(state, (0, "draw_discard", None))
    assert state.hand.phase == DISCARD


# --- the first turn -------------------------------------------------------------------


def test_non_dealer_takes_the_upcard_then_discards_and_the_dealer_plays_next() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", dealer=1)
    assert state.hand.phase == UPCARD_OFFER and state.hand.turn == 0
    assert legal_kinds(state, 0) == {"take_upcard", "pass", "resign"}
    assert refused(state, 1, "pass") == "not_your_turn"
    state = play(state, (0, "take_upcard", None))
    assert refused(state, 0, "discard", "QH") == "cannot_discard_drawn_card"
    state = play(state, (0, "discard", "7C"))
    assert (state.hand.turn, state.hand.phase) == (1, DRAW)
    assert legal_kinds(state, 1) == {"draw_stock", "draw_discard", "resign"}


def test_dealer_may_take_the_upcard_after_the_non_dealer_passes() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", dealer=1)
    state = play(state, (0, "pass", None))
    assert state.hand.turn == 1 and state.hand.phase == UPCARD_OFFER
    state = play(state, (1, "take_upcard", None), (1, "discard", "8S"))
    assert (state.hand.turn, state.hand.phase) == (0, DRAW)


def test_both_pass_then_the_non_dealer_must_draw_from_the_stock() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", dealer=1)
    state = play(state, (0, "pass", None), (1, "pass", None))
    assert (state.hand.turn, state.hand.phase) == (0, DRAW)
    assert legal_kinds(state, 0) == {"draw_stock", "resign"}
    assert refused(state, 0, "draw_discard") == "upcard_refused"
    state = play(state, (0, "draw_stock", None))
    assert state.hand.hands[0] >> _id("KD") & 1
    state = play(state, (0, "discard", "KD"))
    assert legal_kinds(state, 1) == {"draw_stock", "draw_discard", "resign"}


# --- a turn ---------------------------------------------------------------------------


def test_a_card_drawn_from_the_stock_may_be_discarded_at_once() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None), (0, "discard", "KD"))
    assert state.hand.discard_pile[-1] == _id("KD")


def test_refusals_name_their_reason_and_change_nothing() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", rules=NO_OFFER)
    before = state.to_dict()
    assert refused(state, 0, "discard", "7C") == "wrong_phase"
    assert refused(state, 1, "draw_stock") == "not_your_turn"
    assert refused(state, 0, "take_upcard") == "wrong_phase"
    assert refused(state, 0, "next_hand") == "wrong_phase"
    state2 = play(state, (0, "draw_discard", None))
    mid = state2.to_dict()
    assert refused(state2, 0, "discard", "QH") == "cannot_discard_drawn_card"
    assert refused(state2, 0, "discard", "KS") == "card_not_in_hand"
    assert refused(state2, 0, "knock", "9S") == "deadwood_too_high"
    assert refused(state2, 0, "big_gin") == "not_big_gin"
    assert refused(state2, 0, "draw_stock") == "wrong_phase"
    with pytest.raises(RuleError) as err:
        apply(state2, 2, Action("draw_stock"))
    assert err.value.code == "not_a_seat"
    assert state.to_dict() == before and state2.to_dict() == mid


def test_action_from_untrusted_input() -> None:
    assert Action.from_dict({"kind": "discard", "card": "10h"}) == Action("discard", _id("TH"))
    cases: list[tuple[dict[str, object], str]] = [
        ({"kind": "fly"}, "unknown_action"),
        ({"kind": "discard"}, "card_required"),
        ({"kind": "knock", "card": "1H"}, "invalid_card"),
        ({"kind": "knock", "card": True}, "invalid_card"),
        ({"kind": "knock", "card": [1]}, "invalid_card"),
    ]
    for bad, code in cases:
        with pytest.raises(RuleError) as err:
            Action.from_dict(bad)
        assert err.value.code == code


# --- knock, gin, big gin, undercut ----------------------------------------------------


def test_knock_with_7_against_18_scores_11() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None))
    knocks = {a.card for a in legal_actions(state, 0) if a.kind == "knock"}
    assert knocks == {_id("KD"), _id("7C")}  # leaving 7, or the king: 10
    state, events = apply(state, 0, Action("knock", _id("KD")))
    result = state.hand.result
    assert result is not None
    assert (result["outcome"], result["winner"], result["points"]) == ("knock", 0, 11)
    assert state.scores == [11, 0] and state.hand.phase == OVER
    assert [e.type for e in events] == ["knocked", "hand_over"]
    assert result["settlement"]["knocker_deadwood"] == 7
    assert result["settlement"]["defender_deadwood"] == 18


def test_tie_is_an_undercut_worth_25() -> None:
    defender_7 = "AD 2D 3D 4D TC JC QC KC 4S 3S"  # 4S 3S: deadwood 7
    state = position(KNOCKER, defender_7, "QH", stock_top="KD", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None), (0, "knock", "KD"))
    result = state.hand.result
    assert result is not None
    assert (result["outcome"], result["winner"], result["points"]) == ("undercut", 1, 25)
    assert state.next_dealer == 1  # the winner deals next


def test_classic_undercut_bonus_is_10() -> None:
    defender_5 = "AD 2D 3D 4D TC JC QC KC 2S 3S"  # deadwood 5 < 7
    state = position(
        KNOCKER,
        defender_5,
        "QH",
        stock_top="KD",
        rules=make_ruleset("classic", {"upcard_offer": False}),
    )
    state = play(state, (0, "draw_stock", None), (0, "knock", "KD"))
    assert state.hand.result is not None
    assert state.hand.result["points"] == 7 - 5 + 10


def test_gin_scores_deadwood_plus_25_and_refuses_layoffs() -> None:
    gin_hand = "AC 2C 3C 5D 5H 5S 9D 9H 9S 4C"  # A-4C, 555, 999 = gin once KD goes
    defender = "6D 7D 8D TC JC QC KC 6C 8S TD"  # 6C would lay off on A-4C? no: 5C is missing
    state = position(gin_hand, defender, "QH", stock_top="KD", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None), (0, "knock", "KD"))
    result = state.hand.result
    assert result is not None
    assert result["outcome"] == "gin"
    assert result["points"] == (6 + 8 + 10) + 25
    assert result["settlement"]["layoffs"] == []


def test_gin_leaves_a_layoff_card_counted() -> None:
    gin_hand = "AC 2C 3C 5D 5H 5S 9D 9H 9S 4C"
    defender = "6D 7D 8D JC QC KC 9C 8S TD 2H"  # 9C would join the 9s after a plain knock
    state = position(gin_hand, defender, "QH", stock_top="KD", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None), (0, "knock", "KD"))
    assert state.hand.result is not None
    assert state.hand.result["points"] == (9 + 8 + 10 + 2) + 25


def test_big_gin_needs_all_eleven_and_a_preset_that_has_it() -> None:
    eleven = "AC 2C 3C 5D 5H 5S 9D 9H 9S 4C"  # draws 5C: A-5C run + 555 + 999 = 11 melded
    state = position(eleven, DEFENDER_18, "QH", stock_top="5C", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None))
    assert "big_gin" in legal_kinds(state, 0)
    done = play(state, (0, "big_gin", None))
    assert done.hand.result is not None
    assert (done.hand.result["outcome"], done.hand.result["points"]) == ("big_gin", 18 + 31)
    classic = position(
        eleven,
        DEFENDER_18,
        "QH",
        stock_top="5C",
        rules=make_ruleset("classic", {"upcard_offer": False}),
    )
    classic = play(classic, (0, "draw_stock", None))
    assert "big_gin" not in legal_kinds(classic, 0)
    assert refused(classic, 0, "big_gin") == "big_gin_not_allowed"


def test_knocking_is_never_compulsory_even_with_gin() -> None:
    gin_hand = "AC 2C 3C 5D 5H 5S 9D 9H 9S 4C"
    state = position(gin_hand, DEFENDER_18, "QH", stock_top="KD", rules=NO_OFFER)
    state = play(state, (0, "draw_stock", None), (0, "discard", "KD"))
    assert state.hand.phase == DRAW and state.hand.turn == 1


# --- dead hand --------------------------------------------------------------------------


def test_dead_hand_at_2_scores_nothing_and_the_same_dealer_deals_again() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", rules=NO_OFFER, stock_size=3)
    state = play(state, (0, "draw_stock", None), (0, "discard", "KD"))
    result = state.hand.result
    assert result is not None and result["outcome"] == "dead_hand"
    assert len(state.hand.stock) == 2 and state.scores == [0, 0]
    assert state.next_dealer == 1
    state = play(state, (1, "next_hand", None))
    assert state.hand.dealer == 1 and state.hand.number == 2


def test_a_knock_on_the_draw_that_reaches_the_dead_hand_count_still_counts() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", rules=NO_OFFER, stock_size=3)
    state = play(state, (0, "draw_stock", None), (0, "knock", "KD"))
    assert state.hand.result is not None and state.hand.result["outcome"] == "knock"
    assert state.scores == [11, 0]


def test_cardems_plays_the_stock_to_empty() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", preset="cardems", stock_size=2)
    state = play(state, (0, "draw_stock", None), (0, "discard", "KD"))
    assert state.hand.phase == DRAW and len(state.hand.stock) == 1
    state = play(state, (1, "draw_stock", None))
    drawn = _cards(state.hand.hands[1] & ~position(KNOCKER, DEFENDER_18, "QH").hand.hands[1])
    state = play(state, (1, "discard", _code(drawn[0])))
    assert state.hand.result is not None and state.hand.result["outcome"] == "dead_hand"
    assert len(state.hand.stock) == 0


def _code(card_id: int) -> str:
    return card(card_id).code


# --- Oklahoma ---------------------------------------------------------------------------


def test_oklahoma_ace_upcard_means_gin_only_and_a_spade_doubles() -> None:
    rules = make_ruleset("oklahoma", {"upcard_offer": False})
    state = position(KNOCKER, DEFENDER_18, "AS", stock_top="KD", rules=rules)
    assert (state.hand.knock_limit, state.hand.multiplier) == (0, 2)
    state = play(state, (0, "draw_stock", None))
    assert refused(state, 0, "knock", "KD") == "deadwood_too_high"
    gin = position("AC 2C 3C 5D 5H 5S 9D 9H 9S 4C", DEFENDER_18, "AS", stock_top="KD", rules=rules)
    gin = play(gin, (0, "draw_stock", None), (0, "knock", "KD"))
    assert gin.hand.result is not None
    assert gin.hand.result["points"] == (18 + 25) * 2


def test_oklahoma_limit_is_the_upcard_value() -> None:
    rules = make_ruleset("oklahoma", {"upcard_offer": False})
    state = position(KNOCKER, DEFENDER_18, "6H", stock_top="KD", rules=rules)
    assert (state.hand.knock_limit, state.hand.multiplier) == (6, 1)
    state = play(state, (0, "draw_stock", None))
    assert refused(state, 0, "knock", "KD") == "deadwood_too_high"  # 7 > 6
    seven = position(KNOCKER, DEFENDER_18, "7D", stock_top="KD", rules=rules)
    seven = play(seven, (0, "draw_stock", None), (0, "knock", "KD"))
    assert seven.scores == [11, 0]
    queen = position(KNOCKER, DEFENDER_18, "QS", stock_top="KD", rules=rules)
    queen = play(queen, (0, "draw_stock", None), (0, "knock", "KD"))
    assert queen.scores == [22, 0]


# --- the match --------------------------------------------------------------------------


def _win_hand(
    preset: str,
    scores: tuple[int, int],
    hands_won: tuple[int, int],
    overrides: dict[str, int] | None = None,
) -> object:
    rules = make_ruleset(preset, {"upcard_offer": False, **(overrides or {})})
    state = position(KNOCKER, DEFENDER_18, "QH", stock_top="KD", rules=rules, scores=scores)
    state.hands_won = list(hands_won)
    return play(state, (0, "draw_stock", None), (0, "knock", "KD"))


def test_match_ends_at_target_with_game_and_line_bonuses() -> None:
    state = _win_hand("reino", (90, 5), (3, 1))
    assert state.status == FINISHED and state.winner == 0  # type: ignore[attr-defined]
    assert state.finish_reason == "target"  # type: ignore[attr-defined]
    assert state.scores == [101, 5]  # type: ignore[attr-defined]
    assert state.final_scores == [101 + 100 + 4 * 25, 5 + 25]  # type: ignore[attr-defined]
    assert refused(state, 1, "next_hand") == "match_over"


def test_shutout_doubles_the_game_bonus() -> None:
    state = _win_hand("reino", (90, 0), (2, 0))
    assert state.final_scores == [101 + 200 + 3 * 25, 0]  # type: ignore[attr-defined]


def test_shutout_doubles_an_overridden_game_bonus() -> None:
    # RULES.md §8: the shutout is derived from game_bonus, whatever the preset.
    state = _win_hand("standard", (90, 0), (2, 0), {"game_bonus": 100})
    assert state.final_scores == [101 + 200, 0]  # type: ignore[attr-defined]
    state = _win_hand("reino", (90, 0), (2, 0), {"game_bonus": 50})
    assert state.final_scores == [101 + 100 + 3 * 25, 0]  # type: ignore[attr-defined]
    state = _win_hand("reino", (90, 5), (2, 1), {"game_bonus": 50})
    assert state.final_scores == [101 + 50 + 3 * 25, 5 + 25]  # type: ignore[attr-defined]


def test_standard_has_no_match_bonuses() -> None:
    state = _win_hand("standard", (90, 0), (2, 0))
    assert state.final_scores == [101, 0]  # type: ignore[attr-defined]


def test_below_target_the_match_goes_on_and_the_winner_deals() -> None:
    state = _win_hand("standard", (10, 0), (1, 0))
    assert state.status == "playing"  # type: ignore[attr-defined]
    state = play(state, (1, "next_hand", None))  # type: ignore[arg-type]
    assert state.hand.dealer == 0 and state.hand.phase == DRAW and state.hand.turn == 1


def test_resign_gives_the_opponent_the_match_without_bonuses() -> None:
    state = position(KNOCKER, DEFENDER_18, "QH", preset="reino", scores=(40, 60))
    state, events = apply(state, 1, Action("resign"))
    assert (state.status, state.winner, state.finish_reason) == (FINISHED, 0, "resignation")
    assert state.final_scores == [40, 60]
    assert [e.type for e in events] == ["resigned", "match_over"]
    assert legal_actions(state, 0) == []


def test_rulesets_validate_overrides() -> None:
    assert make_ruleset("classic").undercut_bonus == 10
    assert make_ruleset("standard", {"target": 50}).target == 50
    for preset, overrides, code in [
        ("nope", None, "unknown_preset"),
        ("standard", {"colour": 1}, "invalid_ruleset"),
        ("standard", {"knock_limit": 11}, "invalid_ruleset"),
        ("standard", {"target": "100"}, "invalid_ruleset"),
        ("standard", {"upcard_offer": 1}, "invalid_ruleset"),
        ("standard", {"dead_hand_at": True}, "invalid_ruleset"),
        ("standard", {"first_dealer": "me"}, "invalid_ruleset"),
        ("standard", {"layoff": "greedy"}, "invalid_ruleset"),
        ("standard", {"target": 150.5}, "invalid_ruleset"),
        ("standard", {"shutout_bonus": 200}, "invalid_ruleset"),
    ]:
        with pytest.raises(RuleError) as err:
            make_ruleset(preset, overrides)
        assert err.value.code == code


def test_presets_match_the_rule_book() -> None:
    table = {
        "standard": (True, 31, 25, 2, 0, 0),
        "cardems": (False, 0, 25, 0, 0, 0),
        "reino": (True, 31, 25, 2, 100, 25),
        "classic": (True, 0, 10, 2, 0, 0),
        "oklahoma": (True, 31, 25, 2, 0, 0),
    }
    for name, row in table.items():
        r = make_ruleset(name)
        assert (
            r.upcard_offer,
            r.big_gin_bonus,
            r.undercut_bonus,
            r.dead_hand_at,
            r.game_bonus,
            r.line_bonus,
        ) == row
        assert (r.knock_limit, r.gin_bonus, r.target, r.winner_deals) == (10, 25, 100, True)
        assert r.layoff == ("arrange_first" if name == "cardems" else "joint")
        assert r.shutout_bonus == 2 * r.game_bonus
    assert make_ruleset("standard", {"layoff": "arrange_first"}).layoff == "arrange_first"
    assert make_ruleset("standard", {"target": 150.0}).to_dict()["target"] == 150
    assert make_ruleset("cardems", {"layoff": "joint"}).layoff == "joint"


def test_a_stored_ruleset_with_a_shutout_bonus_still_loads() -> None:
    # Tables stored before the shutout was derived from game_bonus hold the retired field.
    stored = {**make_ruleset("reino").to_dict(), "shutout_bonus": 200}
    assert Ruleset.from_dict(stored) == make_ruleset("reino")


def test_ruleset_to_dict_is_every_field_and_round_trips() -> None:
    rulesets = [*PRESETS.values(), make_ruleset("reino", {"target": 150, "first_dealer": "seat0"})]
    for r in rulesets:
        assert r.to_dict() == dataclasses.asdict(r)
        assert list(r.to_dict()) == [f.name for f in dataclasses.fields(Ruleset)]
        assert Ruleset.from_dict(r.to_dict()) == r
    # A fresh dict each time: a caller may change it without touching the ruleset.
    standard = make_ruleset("standard")
    standard.to_dict()["target"] = 5
    assert standard.to_dict()["target"] == 100


def test_full_deck_constant() -> None:
    assert FULL_DECK_MASK.bit_count() == 52


def test_a_seat_that_never_moved_may_have_the_match_aborted_without_a_winner() -> None:
    state, _ = new_match(make_ruleset("standard"), "abort")
    first = state.hand.turn
    assert state.moved == [False, False]
    state, _ = apply(state, first, Action("pass"))
    assert state.moved[first] and not state.moved[1 - first]
    assert MatchState.from_dict(state.to_dict()).moved == state.moved
    with pytest.raises(RuleError) as refused:
        abort(state, first, "timeout")
    assert refused.value.code == "seat_has_moved"
    ended, events = abort(state, 1 - first, "timeout")
    assert (ended.status, ended.winner, ended.finish_reason) == (FINISHED, None, "aborted")
    assert ended.final_scores == ended.scores == [0, 0]
    assert [e.type for e in events] == ["match_aborted", "match_over"]
    assert events[1].public["winner"] is None and events[1].public["reason"] == "aborted"
    # A snapshot from before seats' moves were kept: both count as having moved.
    old = {k: v for k, v in state.to_dict().items() if k != "moved"}
    assert MatchState.from_dict(old).moved == [True, True]
