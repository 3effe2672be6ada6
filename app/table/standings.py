"""Tournament standings, computed from a tournament's export alone, and the command that does it.

    python -m app.table.standings EXPORT.json [--json]

The export (``GET /v1/tournaments/{id}/export``, format ``ginrummy-tournament-export``
version 1) names the entrants, and per round each pairing: its two entrants (``seat0`` deals
the first hand), its table, the match record's id (``GET /v1/matches/{record_id}/record``,
which ``python -m app.engine.verify`` checks) and its ``winner``; a bye has no ``seat1``. The
server computes the standings it shows with ``standings(export)``, so anyone recomputes the same
table from the export.

- **Swiss**: a win 1 point, a bye 1, a pairing drawn at a round's deadline ½ each; ranked by
  points, then Buchholz (the sum of the opponents' points; a bye adds none), then
  Sonneborn-Berger (the points of the opponents beaten, plus half those of the opponents
  drawn), then rating, then entrant id.
- **Arena** (``app.table.arena``): a win 2 points, 4 from the third win in a row until the next
  loss; a match unfinished at the end counts nothing; ranked by points, then wins, then rating,
  then entrant id.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from app.table.arena import STREAK_AFTER, STREAK_WIN, WIN

FORMAT = "ginrummy-tournament-export"
VERSION = 1
COUNTED = frozenset({"finished", "drawn", "bye"})


def _result(pairing: dict[str, Any]) -> dict[str, float]:
    """Each entrant's points of one Swiss pairing (empty while it is not decided)."""
    a, b, status = pairing["seat0"], pairing.get("seat1"), pairing["status"]
    if status == "bye":
        return {a: 1.0}
    if status == "drawn" and b is not None:
        return {a: 0.5, b: 0.5}
    if status == "finished" and b is not None:
        winner = pairing["winner"]
        return {a: 1.0 if winner == a else 0.0, b: 1.0 if winner == b else 0.0}
    return {}


def standings(export: dict[str, Any]) -> list[dict[str, Any]]:
    """The ranked standings of ``export`` (see the module docstring), with each entrant's
    cumulative points after every round (Swiss) or match (arena) in ``progress``."""
    if export.get("format") != FORMAT or export.get("version") != VERSION:
        raise ValueError(f"not a {FORMAT} version {VERSION} document")
    kind = export["tournament"]["format"]
    entrants = {e["id"]: e for e in export["entrants"]}
    rows = _arena(export, entrants) if kind == "arena" else _swiss(export, entrants)
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank
    return rows


def _row(entrant: dict[str, Any]) -> dict[str, Any]:
    return {
        "entrant_id": entrant["id"],
        "name": entrant["name"],
        "rating": entrant["rating"],
        "withdrawn": entrant.get("withdrawn", False),
        "score": 0.0,
        "played": 0,
        "wins": 0,
        "buchholz": 0.0,
        "sonneborn_berger": 0.0,
        "streak": 0,
        "progress": [],
    }


def _swiss(export: dict[str, Any], entrants: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = {i: _row(e) for i, e in entrants.items()}
    met: dict[str, list[tuple[str, float]]] = defaultdict(list)  # opponent, own points
    for round_ in export["rounds"]:
        for pairing in round_["pairings"]:
            points = _result(pairing)
            for who, got in points.items():
                rows[who]["score"] += got
                if pairing["status"] != "bye":
                    rows[who]["played"] += 1
                    rows[who]["wins"] += got == 1.0
                    other = pairing["seat1"] if who == pairing["seat0"] else pairing["seat0"]
                    met[who].append((other, got))
        for row in rows.values():
            row["progress"].append(row["score"])
    for who, row in rows.items():
        row["buchholz"] = sum(rows[o]["score"] for o, _ in met[who])
        row["sonneborn_berger"] = sum(rows[o]["score"] * got for o, got in met[who])
    return sorted(
        rows.values(),
        key=lambda r: (-r["score"], -r["buchholz"], -r["sonneborn_berger"], -r["rating"],
                       r["entrant_id"]),
    )  # fmt: skip


def _arena(export: dict[str, Any], entrants: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    rows = {i: _row(e) for i, e in entrants.items()}
    for round_ in export["rounds"]:
        for pairing in round_["pairings"]:  # in the order they were paired
            if pairing["status"] != "finished" or pairing.get("seat1") is None:
                continue
            for who in (pairing["seat0"], pairing["seat1"]):
                row = rows[who]
                row["played"] += 1
                if pairing["winner"] == who:
                    row["score"] += STREAK_WIN if row["streak"] >= STREAK_AFTER else WIN
                    row["wins"] += 1
                    row["streak"] += 1
                else:
                    row["streak"] = 0
                row["progress"].append(row["score"])
    return sorted(rows.values(), key=lambda r: (-r["score"], -r["wins"], -r["rating"],
                                                r["entrant_id"]))  # fmt: skip


def main(argv: Sequence[str]) -> int:
    """Print the standings of each export named; 0 when all read, 2 on bad use or input."""
    parser = argparse.ArgumentParser(
        prog="python -m app.table.standings",
        description="Recompute a tournament's standings and tie-breaks from its export "
        "(GET /v1/tournaments/{id}/export).",
    )
    parser.add_argument("exports", nargs="+", metavar="EXPORT.json", help="a tournament export")
    parser.add_argument("--json", action="store_true", help="print the standings as JSON")
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exit_:
        return int(exit_.code or 0)
    for name in args.exports:
        try:
            rows = standings(json.loads(Path(name).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"{name}: cannot read: {e}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(rows))
            continue
        print(f"{name}:")
        print(f"{'#':>3} {'entrant':<24} {'points':>6} {'buchholz':>8} {'s-b':>6} {'played':>6}")
        for r in rows:
            print(
                f"{r['rank']:>3} {r['name'][:24]:<24} {r['score']:>6g} {r['buchholz']:>8g} "
                f"{r['sonneborn_berger']:>6g} {r['played']:>6}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
