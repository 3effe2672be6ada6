"""Schemathesis against a real server: every response is what the OpenAPI document says.

``schemathesis run --checks all`` with a bounded number of examples per operation and a fixed
seed, so a run is repeatable. The server holds a started table (``table_id``), an open invite
(``code``) and a valid token, so generated requests reach the routes' logic instead of stopping
at 404 and 401. The CLI rather than schemathesis' pytest plugin: the plugin reaches into
pytest's private node ids, which pytest 9.2 no longer has.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx

from app.service.delivery.webpush import new_private_key
from tests.api.conftest import start_server

EXAMPLES = 15
# Fixed, so a run is repeatable; SCHEMATHESIS_SEED explores another.
SEED = int(os.environ.get("SCHEMATHESIS_SEED", "8"))
SCHEMATHESIS = Path(sys.executable).parent / "schemathesis"


# Nor can it say what the lobby refuses of a well-formed seek or challenge (docs/lobby.md): a
# clock under the server's minimum (422 invalid_time_control), ``bot_after`` on a correspondence
# seek (422 bot_offer_live_only), a player over a cap (409 too_many_seeks ...), a name nobody or
# several have (404 player_not_found, 409 ambiguous_name), too many challenges (429), an id of no
# seek (404), one closed already or not yours (409, 403), marking as a bot an account that
# played (409 already_played); and 401 as for every operation, once the run has rotated or revoked
# its token.
LOBBY_REFUSALS = """
[[operations]]
include-name = "POST /v1/seeks"
checks.positive_data_acceptance.expected-statuses = [201, 401, 409, 422]

[[operations]]
include-name = "POST /v1/challenges"
checks.positive_data_acceptance.expected-statuses = [201, 401, 404, 409, 422, 429]

[[operations]]
include-name = "POST /v1/players/me/bot"
checks.positive_data_acceptance.expected-statuses = [200, 401, 409]

[[operations]]
include-path-regex = '^/v1/(seeks|challenges)/.'
checks.positive_data_acceptance.expected-statuses = [200, 401, 403, 404, 409, 422]
"""

# A schema cannot say "a point on the P-256 curve": a push subscription's p256dh that fits its
# pattern may still be refused (422 invalid_push_subscription), and that is right. Nor can it say
# "a host that resolves to a public address": a webhook URL that fits may still be refused (422
# webhook_url_refused, offline or for a private address alike). Nor "an assigned code point that
# is neither a format character nor invisible, and not a bot's name": a player's name that fits
# may still be refused (422 invalid_name, reserved_name; app/service/names.py).
FITS_YET_REFUSED = (
    """
[[operations]]
include-name = "POST /v1/players"
checks.positive_data_acceptance.expected-statuses = [201, 422]

[[operations]]
include-name = "POST /v1/players/me/push-subscriptions"
checks.positive_data_acceptance.expected-statuses = [201, 401, 404, 422]

[[operations]]
include-name = "PUT /v1/players/me/webhook"
checks.positive_data_acceptance.expected-statuses = [200, 401, 422]
# A url of many escaped characters is a body over MAX_BODY_BYTES: refused (413) before its schema.
checks.negative_data_rejection.expected-statuses = [
  400, 401, 403, 404, 405, 406, 409, 413, 415, 422, 428, 429
]
"""
    + LOBBY_REFUSALS
)


def _setup(url: str) -> tuple[str, dict[str, str]]:
    """A started table and an open invite: its creator's token and the path parameters."""
    with httpx.Client(base_url=url, timeout=30) as http:

        def player(name: str) -> str:
            r = http.post("/v1/players", json={"name": name})
            assert r.status_code == 201, r.text
            return f"Bearer {r.json()['token']}"

        ada, bo, cy = player("Ada"), player("Bo"), player("Cy")
        table = http.post("/v1/tables", json={}, headers={"Authorization": ada}).json()
        r = http.post(f"/v1/invites/{table['invite_code']}", headers={"Authorization": bo})
        assert r.status_code == 200, r.text
        table_id = table["table_id"]
        r = http.post(f"/v1/tables/{table_id}/start", headers={"Authorization": ada})
        assert r.status_code == 200, r.text
        # Another table with seat 1 open, for the invite route.
        r = http.post("/v1/tables", json={}, headers={"Authorization": cy})
    return ada, {"table_id": table_id, "code": r.json()["invite_code"]}


def test_the_server_does_what_its_document_says(tmp_path: Path) -> None:
    # With a VAPID key, so the push routes' validation is reached too.
    server = start_server(
        f"sqlite+aiosqlite:///{tmp_path / 'ginrummy.db'}",
        vapid_private_key=new_private_key(),
        vapid_subject="mailto:ops@example.com",
        # One token makes every request of the run: its limit is not under test here.
        rate_limit_token="",
    )
    try:
        token, parameters = _setup(server.url)
        config = tmp_path / "schemathesis.toml"
        lines = [f"{name} = {json.dumps(value)}" for name, value in parameters.items()]
        config.write_text("[parameters]\n" + "\n".join(lines) + "\n" + FITS_YET_REFUSED)
        run = subprocess.run(
            [
                str(SCHEMATHESIS),
                "--config-file",
                str(config),
                "run",
                f"{server.url}/openapi.json",
                "--checks",
                "all",
                "--max-examples",
                str(EXAMPLES),
                "--seed",
                str(SEED),
                "--workers",
                "1",
                "--header",
                f"Authorization: {token}",
                "--report-dir",
                str(tmp_path / "report"),
            ],
            cwd=tmp_path,  # its cache of crashes goes there, not into the repository
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        server.stop()
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-5000:]
