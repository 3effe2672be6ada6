"""The result board: the default rules' bonuses, a variant without them, every card of a dead
hand on a phone and on a desktop, and a rematch the other player answers."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import Page, expect

from tests.api.conftest import Server
from tests.web.conftest import Contexts
from tests.web.helpers import play_until, start_bot_match

JSON = dict[str, object]


def _player(client: httpx.Client, name: str) -> tuple[dict[str, str], str]:
    r = client.post("/v1/players", json={"name": name})
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    return {"Authorization": f"Bearer {token}"}, token


def _two_seated(client: httpx.Client) -> tuple[str, list[dict[str, str]], list[str]]:
    """A started table of Ada (seat 0) and Bo (seat 1): its id, their auth headers, tokens."""
    (ada, ada_token), (bo, bo_token) = _player(client, "Ada"), _player(client, "Bo")
    r = client.post("/v1/tables", json={"preset": "standard"}, headers=ada)
    assert r.status_code == 201, r.text
    table_id, code = r.json()["table_id"], r.json()["invite_code"]
    assert client.post(f"/v1/invites/{code}", headers=bo).status_code == 200
    assert client.post(f"/v1/tables/{table_id}/start", headers=ada).status_code == 200
    return table_id, [ada, bo], [ada_token, bo_token]


def _dead_hand(client: httpx.Client) -> tuple[str, str]:
    """Both seats pass the upcard, then draw from the stock and throw the card drawn until the
    stock runs out: a dead hand. The table's id and seat 0's token."""
    table_id, auth, tokens = _two_seated(client)
    drawn: dict[int, str] = {}
    for _ in range(200):
        view = client.get(f"/v1/tables/{table_id}").json()
        hand = view["game"]["hand"]
        if hand["phase"] == "over":
            assert hand["result"]["outcome"] == "dead_hand"
            return table_id, tokens[0]
        seat = hand["turn"]
        actions = client.get(f"/v1/tables/{table_id}", headers=auth[seat]).json()["game"]
        legal = actions["legal"]["actions"]
        base = f"/v1/tables/{table_id}/moves"
        if "pass" in legal:
            r = client.post(f"{base}/pass", headers=auth[seat])
        elif "draw_stock" in legal:
            r = client.post(f"{base}/draw", json={"source": "stock"}, headers=auth[seat])
            drawn[seat] = r.json()["events"][-1]["card"]
        else:
            r = client.post(f"{base}/discard", json={"card": drawn[seat]}, headers=auth[seat])
        assert r.status_code == 200, r.text
    raise AssertionError("the hand did not die")


def _cards_inside(page: Page, width: int) -> None:
    """Every card of the board lies inside its side's box and the viewport: none clipped."""
    boxes = page.eval_on_selector_all(
        ".result-board .side .card",
        """cards => cards.map(c => {
            const r = c.getBoundingClientRect(), s = c.closest('.side').getBoundingClientRect();
            return [r.left, r.right, s.left, s.right];
        })""",
    )
    assert len(boxes) == 20
    for left, right, side_left, side_right in boxes:
        assert side_left - 1 <= left and right <= side_right + 1, (
            left,
            right,
            side_left,
            side_right,
        )
        assert left >= 0 and right <= width, (left, right)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_a_dead_hand_shows_every_card_on_a_phone_and_a_desktop(
    contexts: Contexts, web_server: Server
) -> None:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        table_id, token = _dead_hand(client)
    for viewport in ({"width": 390, "height": 844}, {"width": 1280, "height": 800}):
        phone = viewport["width"] == 390
        page = contexts.new(viewport=viewport, has_touch=phone, is_mobile=phone).new_page()
        page.goto(f"/t/{table_id}#token={token}")
        expect(page.locator(".result-board [data-outcome=dead_hand]")).to_be_visible()
        _cards_inside(page, viewport["width"])


def test_the_default_rules_pay_their_bonuses_and_a_variant_without_them_shows_none(
    contexts: Contexts,
) -> None:
    page = contexts.new().new_page()
    page.goto("/")
    expect(page.locator("select[name=preset]")).to_have_value("reino")
    expect(page.locator(".preset-about")).to_contain_text("100 de bônus")
    page.select_option("select[name=preset]", "classic")
    expect(page.locator(".preset-about")).to_contain_text("undercut vale só 10")
    start_bot_match(page, "Ada", "TITO", target=1)  # the default variant
    play_until(page, "match")
    totals = page.locator(".result-board .totals")
    winner = int(page.get_attribute(".match-over [data-winner]", "data-winner") or "")
    row = totals.locator("tr").nth(winner)
    # Reached in one scoring hand, the other scored nothing: a shutout doubles the bonus.
    expect(row.locator("[data-bonus=game]")).to_contain_text("+200 bônus de partida")
    expect(row.locator("[data-bonus=line]")).to_contain_text("+25 bônus por mão")
    expect(page.locator(".match-over")).to_contain_text(re.compile(r"Mão decisiva: \d+"))

    other = contexts.new().new_page()
    start_bot_match(other, "Bia", "TITO", target=1, preset="standard")
    play_until(other, "match")
    expect(other.locator(".match-over")).to_be_visible()
    # No bonus lines (and no total beside a score it would repeat).
    assert other.locator(".result-board [data-bonus]").count() == 0
    assert "bônus" not in other.inner_text(".result-board .totals")


def _overlap(page: Page, one: str, other: str) -> bool:
    """Whether the boxes of ``one`` and ``other`` (both shown) intersect."""
    a, b = page.locator(one).bounding_box(), page.locator(other).bounding_box()
    assert a is not None and b is not None, (one, other)
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def _table_page(contexts: Contexts, table_id: str, token: str) -> Page:
    page = contexts.new().new_page()
    page.goto(f"/t/{table_id}#token={token}")
    return page


def test_a_rematch_is_asked_and_the_other_declines_then_accepts(
    contexts: Contexts, web_server: Server
) -> None:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        table_id, auth, tokens = _two_seated(client)
        r = client.post(f"/v1/tables/{table_id}/resign", headers=auth[1])
        assert r.status_code == 200, r.text
    ada, bo = (_table_page(contexts, table_id, token) for token in tokens)
    for page in (ada, bo):
        expect(page.locator(".match-over")).to_contain_text("por desistência")
        expect(page.locator(".match-over")).to_contain_text("Mão decisiva: 1")

    # Between matches the board covers neither the chat nor the menu, and the chat works.
    for covered in (".chat", ".menu-button"):
        assert not _overlap(ada, ".result-board", covered), covered
    ada.fill(".chat .say input", "boa partida")
    ada.press(".chat .say input", "Enter")
    expect(bo.locator(".chat .lines")).to_contain_text("boa partida")
    ada.click(".result-actions button:has-text('Fechar')")
    assert not _overlap(ada, ".show-result", ".chat .say button")
    ada.click(".show-result")

    ada.click(".result-actions button:has-text('REVANCHE')")
    expect(ada.locator("[data-rematch=asked]")).to_contain_text("Esperando Bo responder")
    expect(bo.locator("[data-rematch=offered]")).to_contain_text("Ada quer revanche.")
    expect(ada.locator(".match-over")).to_be_visible()  # nothing started without Bo
    bo.click(".result-actions button:has-text('Recusar')")
    expect(ada.locator("[data-rematch=declined]")).to_contain_text("Bo recusou a revanche.")
    expect(bo.locator("[data-rematch]")).to_have_count(0)
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        view = client.get(f"/v1/tables/{table_id}").json()
    assert (view["match_number"], view["rematch_offer"]) == (1, None)

    ada.click(".result-actions button:has-text('REVANCHE')")
    bo.click(".result-actions button:has-text('ACEITAR REVANCHE')")
    for page in (ada, bo):
        expect(page.locator(".result-board")).to_have_count(0)
        expect(page.locator(".hand .hand-card")).to_have_count(10)
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        view = client.get(f"/v1/tables/{table_id}").json()
    assert (view["match_number"], view["status"]) == (2, "playing")
