"""Match records over HTTP: every preset's record verifies and fits the schema; any tampering
fails at its place; a match being played has no record; a player exports theirs as NDJSON."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from app.engine import PRESETS
from app.engine.cards import commitment
from app.engine.verify import RecordMismatchError, verify
from tests.api.conftest import sqlite_only
from tests.api.helpers import JSON, play_until, rematch, seated_table, step

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs/schemas/match-record.schema.json").read_text()
)


async def finished_record(
    client: httpx.AsyncClient, preset: str = "standard", target: int = 40
) -> JSON:
    table_id, players = await seated_table(client, preset=preset, rules={"target": target})
    await play_until(client, table_id, players)
    r = await client.get(f"/v1/matches/{table_id}-1/record")
    assert r.status_code == 200, r.text
    record: JSON = r.json()
    return record


@pytest.mark.parametrize("preset", sorted(PRESETS))
async def test_the_record_of_a_match_of_every_preset_verifies_and_fits_the_schema(
    client: httpx.AsyncClient, preset: str
) -> None:
    record = await finished_record(client, preset)
    jsonschema.validate(record, SCHEMA, format_checker=jsonschema.FormatChecker())
    done = verify(record)
    assert done.hands == len(record["hands"]) >= 1
    assert done.actions == sum(len(h["actions"]) for h in record["hands"])
    assert record["preset"] == preset and record["result"]["reason"] == "target"
    assert record["players"][0]["player"]["name"] == "Ada"


async def test_a_resigned_match_verifies_with_its_interrupted_hand(
    client: httpx.AsyncClient,
) -> None:
    table_id, players = await seated_table(client)
    for _ in range(5):
        await step(client, table_id, players)
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=players[1].auth)
    assert r.status_code == 200, r.text
    record = (await client.get(f"/v1/matches/{table_id}-1/record")).json()
    jsonschema.validate(record, SCHEMA)
    assert record["hands"][-1]["result"] is None
    assert record["hands"][-1]["actions"][-1] == {"seat": 1, "kind": "resign"}
    assert record["result"]["winner"] == 0 and record["result"]["reason"] == "resignation"
    assert verify(record).hands == 1


def _fails_at(record: JSON, where: str) -> RecordMismatchError:
    with pytest.raises(RecordMismatchError) as caught:
        verify(record)
    assert caught.value.where == where, str(caught.value)
    return caught.value


def _first(record: JSON, kind: str) -> tuple[int, int]:
    """(hand index, action index) of the first action of ``kind``."""
    for h, hand in enumerate(record["hands"]):
        for a, action in enumerate(hand["actions"]):
            if action["kind"] == kind:
                return h, a
    raise AssertionError(f"no {kind} in the record")


@sqlite_only
async def test_tampering_with_an_action_a_seed_or_a_score_fails_at_that_point(
    client: httpx.AsyncClient,
) -> None:
    record = await finished_record(client, target=60)
    assert len(record["hands"]) >= 2
    verify(record)

    # An action by the wrong seat.
    h, a = _first(record, "draw_stock")
    bad = copy.deepcopy(record)
    bad["hands"][h]["actions"][a]["seat"] ^= 1
    _fails_at(bad, f"hand {h + 1}, action {a + 1}")

    # A discard of a card the seat does not hold: the stock's bottom card, never drawn in a
    # standard hand (it ends with two cards left in the stock).
    h, a = _first(record, "discard")
    bad = copy.deepcopy(record)
    bad["hands"][h]["actions"][a]["card"] = record["hands"][h]["deal"]["stock"][-1]
    assert "card_not_in_hand" in _fails_at(bad, f"hand {h + 1}, action {a + 1}").message

    # An action dropped: the next one is out of turn.
    bad = copy.deepcopy(record)
    del bad["hands"][0]["actions"][0]
    _fails_at(bad, "hand 1, action 1")

    # A hand's seed: its commitment no longer matches.
    bad = copy.deepcopy(record)
    bad["hands"][1]["seed"] = "0" * 64
    assert "commitment" in _fails_at(bad, "hand 2").message

    # A seed and commitment made to match, but not the deal the match seed gives.
    bad = copy.deepcopy(record)
    bad["hands"][1]["seed"] = "1" * 64
    bad["hands"][1]["commitment"] = commitment("1" * 64, bad["hands"][1]["nonce"])
    assert "deal" in _fails_at(bad, "hand 2").message

    # A card of the deal.
    bad = copy.deepcopy(record)
    stock = bad["hands"][0]["deal"]["stock"]
    stock[0], stock[1] = stock[1], stock[0]
    assert "stock" in _fails_at(bad, "hand 1").message

    # A hand's points.
    bad = copy.deepcopy(record)
    last = len(bad["hands"][0]["actions"]) - 1  # next_hand; the hand ended just before it
    bad["hands"][0]["result"]["points"] += 1
    _fails_at(bad, f"hand 1, action {last}")

    # The final scores and the bonuses.
    for name in ("final_scores", "scores", "winner", "bonuses"):
        bad = copy.deepcopy(record)
        result = bad["result"]
        result[name] = [0, 0] if name != "winner" else 1 - result["winner"]
        assert name in _fails_at(bad, "result").message


@sqlite_only
async def test_verify_command_says_ok_or_where_it_differs(
    client: httpx.AsyncClient, tmp_path: Path
) -> None:
    record = await finished_record(client)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(record))
    bad_record: dict[str, Any] = copy.deepcopy(record)
    bad_record["result"]["final_scores"][0] += 5
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(bad_record))

    ok = subprocess.run(
        [sys.executable, "-m", "app.engine.verify", str(good)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert "ok (" in ok.stdout
    failed = subprocess.run(
        [sys.executable, "-m", "app.engine.verify", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 1
    assert "MISMATCH at result: final_scores differs" in failed.stderr


async def test_no_record_while_the_match_is_played_and_none_for_unknown_matches(
    client: httpx.AsyncClient,
) -> None:
    table_id, players = await seated_table(client)
    await step(client, table_id, players)
    r = await client.get(f"/v1/matches/{table_id}-1/record")
    assert r.status_code == 409 and r.json()["code"] == "match_not_finished"
    assert "seed" not in r.text
    for missing in (f"{table_id}-2", f"{table_id}-0", "nope", f"{'f' * 32}-1", f"{table_id}-x"):
        r = await client.get(f"/v1/matches/{missing}/record")
        assert r.status_code == 404, (missing, r.text)
        assert r.json()["code"] == "match_not_found"


async def test_a_player_exports_every_finished_match_as_ndjson(client: httpx.AsyncClient) -> None:
    table_id, players = await seated_table(client, rules={"target": 30})
    await play_until(client, table_id, players)
    await rematch(client, table_id, players[1], players[0])
    r = await client.post(f"/v1/tables/{table_id}/resign", headers=players[0].auth)
    assert r.status_code == 200, r.text
    # A third match, unfinished: not exported.
    await rematch(client, table_id, players[1], players[0])

    async with client.stream("GET", "/v1/players/me/matches/export", headers=players[0].auth) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/x-ndjson")
        lines = [line async for line in r.aiter_lines() if line]
    records = [json.loads(line) for line in lines]
    assert [x["match_id"] for x in records] == [f"{table_id}-1", f"{table_id}-2"]
    for record in records:
        jsonschema.validate(record, SCHEMA)
        verify(record)
    r = await client.get("/v1/players/me/matches/export")
    assert r.status_code == 401
