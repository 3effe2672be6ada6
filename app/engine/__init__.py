"""The pure rules engine: no I/O, no asyncio, no clock. Everything else calls it."""

from app.engine.cards import Card, CardParseError, parse_card, parse_cards, shuffled_deck
from app.engine.deal import new_match
from app.engine.errors import RuleError
from app.engine.game import abort, apply, forfeit, knock_discards, legal_actions
from app.engine.melds import Arrangement, arrange, best_arrangement, deadwood
from app.engine.rules import PRESETS, Ruleset, make_ruleset
from app.engine.state import Action, Event, HandState, MatchState
from app.engine.views import seat_view, spectator_view, view

__all__ = [
    "PRESETS",
    "Action",
    "Arrangement",
    "Card",
    "CardParseError",
    "Event",
    "HandState",
    "MatchState",
    "RuleError",
    "Ruleset",
    "abort",
    "apply",
    "arrange",
    "best_arrangement",
    "deadwood",
    "forfeit",
    "knock_discards",
    "legal_actions",
    "make_ruleset",
    "new_match",
    "parse_card",
    "parse_cards",
    "seat_view",
    "shuffled_deck",
    "spectator_view",
    "view",
]
