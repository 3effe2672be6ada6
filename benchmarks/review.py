"""What a hand's review by LUNA costs, and how long reviews queue while bots play.

    python benchmarks/review.py --hands 12 --samples 32,64,128 --queue 8

First, per budget (samples of the hidden cards per decision), the CPU seconds of one hand's
review (``app.bots.review``, in this process) over ``--hands`` seeded medium-vs-medium hands,
and their decisions. Then ``--queue`` hands asked for at once, at the server's default budget,
in a review pool as the server runs it (one worker, niceness 10): when each review was done
after it was asked (queue time included), while a bot pool (one worker, niceness 5) makes
LUNA decisions the whole time; the bots' decision times with and without the reviews running
show whether reviews slow play.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.bots import get_bot
from app.bots.review import ReviewBudget, review_hand
from app.bots.search import Budget
from app.engine import Action, Event, MatchState, apply, make_ruleset, new_match
from app.engine.replay import replay
from app.engine.views import seat_view
from app.service.workers.bot_pool import BotPool
from app.service.workers.reviews import review_job
from app.settings import Settings


def hands(count: int) -> list[tuple[MatchState, list[Event]]]:
    """First hands of seeded medium-vs-medium matches: the match at the deal, the events."""
    out = []
    bot = get_bot("medium")
    for i in range(count):
        state, events = new_match(make_ruleset("standard"), f"review-bench-{i}")
        start, log = state.copy(), list(events)
        while state.hand.phase != "over":
            seat = state.hand.turn
            move = bot.choose(seat_view(state, seat), [e.for_recipient(seat) for e in log])
            state, events = apply(state, seat, Action.from_dict(move))
            log += events
        out.append((start, log))
    return out


def cost(played: list[tuple[MatchState, list[Event]]], samples: int) -> None:
    times, decisions = [], []
    for start, log in played:
        began = time.process_time()
        review = review_hand(replay(start, log), log, ReviewBudget(samples))
        times.append(time.process_time() - began)
        decisions.append(sum(1 for d in review["decisions"] if not d["forced"]))
    print(
        f"samples {samples:4d}: CPU s per hand median {statistics.median(times):.2f} "
        f"mean {statistics.mean(times):.2f} max {max(times):.2f}; "
        f"judged decisions per hand {statistics.mean(decisions):.1f}"
    )


def bot_positions(played: list[tuple[MatchState, list[Event]]]) -> list[tuple[Any, Any]]:
    out = []
    for start, log in played:
        for step in replay(start, log):
            if step.before.hand.phase == "discard":
                seat = step.seat
                seen = [e.for_recipient(seat) for e in log[: step.seen]]
                out.append((seat_view(step.before, seat), seen))
    return out


async def bots_while(
    pool: BotPool, positions: list[tuple[Any, Any]], stop: asyncio.Event
) -> list[float]:
    """LUNA decisions one after another until ``stop``: each one's wall time."""
    times = []
    i = 0
    while not stop.is_set():
        view, seen = positions[i % len(positions)]
        began = time.perf_counter()
        await pool.choose("hard", view, seen)
        times.append(time.perf_counter() - began)
        i += 1
    return times


async def load(played: list[tuple[MatchState, list[Event]]], queue: int, seconds: float) -> None:
    settings = Settings()
    bots = BotPool(1, Budget(settings.bot_search_playouts, settings.bot_search_cap_ms), 5)
    reviews = BotPool(1, Budget(), settings.review_nice, idle=settings.review_idle)
    positions = bot_positions(played)
    try:
        await bots.choose("hard", *positions[0])  # start the workers before timing
        await reviews.run(
            review_job, played[0][0].to_dict(), [e.to_dict() for e in played[0][1]], 1, 0
        )
        stop = asyncio.Event()
        alone = asyncio.create_task(bots_while(bots, positions, stop))
        await asyncio.sleep(seconds)
        stop.set()
        quiet = await alone
        stop = asyncio.Event()
        busy = asyncio.create_task(bots_while(bots, positions, stop))
        asked = time.perf_counter()

        async def one(start: MatchState, log: list[Event]) -> float:
            await reviews.run(
                review_job, start.to_dict(), [e.to_dict() for e in log], settings.review_samples, 0
            )
            return time.perf_counter() - asked

        done = sorted(await asyncio.gather(*(one(*played[i % len(played)]) for i in range(queue))))
        stop.set()
        loaded = await busy
    finally:
        bots.close()
        reviews.close()
    print(
        f"{queue} reviews asked at once (samples {settings.review_samples}): first done after "
        f"{done[0]:.1f} s, median {statistics.median(done):.1f} s, last {done[-1]:.1f} s"
    )
    for name, times in (("alone", quiet), ("while reviewing", loaded)):
        ms = sorted(t * 1000 for t in times)
        print(
            f"LUNA decisions {name}: {len(ms)}, median {statistics.median(ms):.0f} ms, "
            f"p90 {ms[int(len(ms) * 0.9)]:.0f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hands", type=int, default=12)
    parser.add_argument("--samples", default="32,64,128")
    parser.add_argument("--queue", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0, help="bots alone, for comparison")
    args = parser.parse_args()
    played = hands(args.hands)
    for samples in (int(s) for s in args.samples.split(",")):
        cost(played, samples)
    if args.queue:
        asyncio.run(load(played, args.queue, args.seconds))


if __name__ == "__main__":
    main()
