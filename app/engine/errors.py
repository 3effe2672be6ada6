"""The one error type of the engine: a refused action or input, with a stable code."""

from __future__ import annotations


class RuleError(Exception):
    """A move, card or ruleset the rules refuse; ``code`` is stable and machine-readable.

    Codes: not_a_seat, not_your_turn, wrong_phase, unknown_action, card_required,
    invalid_card, card_not_in_hand, cannot_discard_drawn_card, upcard_refused,
    deadwood_too_high, not_big_gin, big_gin_not_allowed, match_over, unknown_preset,
    invalid_ruleset.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}
