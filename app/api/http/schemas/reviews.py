"""The bodies of a finished hand's replay steps, its review by LUNA, a match's review, a hint."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from app.api.http.schemas.common import TABLE_ID, _example

Mark = Literal["inaccuracy", "mistake", "blunder"]
MoveKind = Literal[
    "take_upcard", "pass", "draw_stock", "draw_discard", "discard", "knock", "big_gin", "resign"
]


class ArrangedHandOut(BaseModel):
    """A hand in best-arrangement order: its melds, then its deadwood cards by rank."""

    cards: list[str]
    melds: list[list[str]]
    deadwood_cards: list[str]
    deadwood: int


class MoveOut(BaseModel):
    """A move: its kind and, for a discard or a knock, the card."""

    kind: MoveKind
    card: str | None = None


class ReplayStepOut(BaseModel):
    """One move of a finished hand and the table after it."""

    index: int = Field(description="0 for the hand's first move")
    seq: int = Field(description="the log's event this move wrote first")
    seat: int
    action: MoveOut
    phase: str = Field(description="the phase the move was made in")
    hands: list[ArrangedHandOut] = Field(description="both seats' hands after the move")
    discard_pile: list[str] = Field(description="bottom first")
    stock_size: int


class OptionOut(MoveOut):
    """One option of a decision and its expected points to the seat (negative: to the
    opponent), as LUNA judges them from that seat's information."""

    points: float


class DecisionOut(BaseModel):
    """One decision of one seat: what it could do, what LUNA would do, what it did and cost."""

    index: int = Field(description="the replay step of this move")
    seat: int
    phase: str
    forced: bool = Field(description="no real choice (or a resignation): not judged")
    options: list[OptionOut] = Field(description="best first")
    chosen: MoveOut
    best: MoveOut = Field(description="LUNA's choice")
    cost: float = Field(description="expected points lost against LUNA's choice")
    mark: Mark | None


class SeatSummaryOut(BaseModel):
    """A seat's judged decisions and what they cost (docs/review.md)."""

    seat: int
    decisions: int
    accuracy: float | None = Field(description="percent of decisions that lost under 2 points")
    points_lost: float
    points_lost_per_hand: float
    inaccuracies: int
    mistakes: int
    blunders: int


class BudgetOut(BaseModel):
    samples: int = Field(description="samples of the hidden cards per decision")
    seed: int


_SEAT_SUMMARY = {
    "seat": 0,
    "decisions": 17,
    "accuracy": 82.4,
    "points_lost": 14.3,
    "points_lost_per_hand": 14.3,
    "inaccuracies": 1,
    "mistakes": 1,
    "blunders": 0,
}


class HandReviewOut(BaseModel):
    """A finished hand's review (200 ``done``), or 202 ``pending`` while it is computed."""

    model_config = _example(
        {
            "table_id": TABLE_ID,
            "match_number": 1,
            "hand_number": 1,
            "status": "done",
            "budget": {"samples": 64, "seed": 24301},
            "decisions": [
                {
                    "index": 3,
                    "seat": 0,
                    "phase": "draw",
                    "forced": False,
                    "options": [
                        {"kind": "draw_discard", "points": 4.1},
                        {"kind": "draw_stock", "points": -2.3},
                    ],
                    "chosen": {"kind": "draw_stock"},
                    "best": {"kind": "draw_discard"},
                    "cost": 6.4,
                    "mark": "mistake",
                }
            ],
            "seats": [_SEAT_SUMMARY, {**_SEAT_SUMMARY, "seat": 1}],
        }
    )

    table_id: str
    match_number: int
    hand_number: int
    status: Literal["done", "pending"]
    queued: int | None = Field(None, description="pending: hands queued or being reviewed")
    budget: BudgetOut
    decisions: list[DecisionOut]
    seats: list[SeatSummaryOut]


class HandSummaryOut(BaseModel):
    hand_number: int
    status: Literal["done", "pending"]
    seats: list[SeatSummaryOut] | None


class MatchReviewOut(BaseModel):
    """Each finished hand of a match: its seats' summary once reviewed (those not yet are
    started), and the seats' summary over the reviewed hands."""

    model_config = _example(
        {
            "table_id": TABLE_ID,
            "match_number": 1,
            "status": "done",
            "hands": [
                {
                    "hand_number": 1,
                    "status": "done",
                    "seats": [_SEAT_SUMMARY, {**_SEAT_SUMMARY, "seat": 1}],
                }
            ],
            "seats": [_SEAT_SUMMARY, {**_SEAT_SUMMARY, "seat": 1}],
        }
    )

    table_id: str
    match_number: int
    status: Literal["done", "pending"]
    hands: list[HandSummaryOut]
    seats: list[SeatSummaryOut]


class HintBudgetOut(BaseModel):
    playouts: int = Field(description="the search's playouts (fewer while hints queue)")


class HintOut(BaseModel):
    """What LUNA would play now for your seat, judged from your view alone."""

    model_config = _example(
        {
            "table_id": TABLE_ID,
            "seat": 0,
            "version": 12,
            "move": {"kind": "discard", "card": "KS"},
            "budget": {"playouts": 200},
        }
    )

    table_id: str
    seat: int
    version: int = Field(description="the table's version the hint is for")
    move: MoveOut
    budget: HintBudgetOut
