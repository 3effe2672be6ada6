"""Two people play through the copied invite link while a third watches and chats."""

from __future__ import annotations

import time

import httpx
from playwright.sync_api import Page, WebSocket, expect

from tests.api.conftest import Server
from tests.web.conftest import Contexts
from tests.web.helpers import ACTIONABLE, click_turn, hand_cards

RANKS = {"A": "ás", "T": "dez", "J": "valete", "Q": "dama", "K": "rei", "2": "dois", "3": "três"}
RANKS |= {"4": "quatro", "5": "cinco", "6": "seis", "7": "sete", "8": "oito", "9": "nove"}
SUITS = {"C": "paus", "D": "ouros", "H": "copas", "S": "espadas"}


def card_name(code: str) -> str:
    return f"{RANKS[code[0]]} de {SUITS[code[1]]}"


def say(page: Page, text: str) -> None:
    page.fill(".chat .say input", text)
    page.press(".chat .say input", "Enter")


def same_version(pages: list[Page]) -> str:
    """Wait until every page shows the same version of the table; that version."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        versions = {p.get_attribute(".game", "data-version") for p in pages}
        if len(versions) == 1:
            return versions.pop() or ""
        time.sleep(0.05)
    raise AssertionError(f"the pages disagree: {versions}")


def play(players: list[Page], moves: int | None = None) -> int:
    """Alternate the two players' clicks: ``moves`` moves, or until the hand is over."""
    done = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if players[0].get_attribute(".game", "data-phase") == "over":
            return done
        if moves is not None and done >= moves:
            return done
        for page in players:
            mine = page.locator(".hand-card[aria-pressed], .actions button").count()
            if mine and click_turn(page):
                done += 1
                break
        else:
            time.sleep(0.05)
    raise AssertionError("the hand did not end")


def test_two_players_by_invite_link_a_spectator_watches_and_chat_goes_both_ways(
    contexts: Contexts,
) -> None:
    ada = contexts.new(permissions=["clipboard-read", "clipboard-write"]).new_page()
    ada.goto("/")
    ada.fill("input[name=name]", "Ada")
    ada.click("button:has-text('CRIAR CONVITE')")
    ada.click("button:has-text('COPIAR')")
    expect(ada.locator("button:has-text('Copiado!')")).to_be_visible()
    link = str(ada.evaluate("navigator.clipboard.readText()"))
    assert "/t/" in link and "invite=" in link

    bo = contexts.new().new_page()
    bo.goto(link)
    # The invitee's page names the inviter and the rules before asking a name.
    expect(bo.locator(".invite-prompt")).to_contain_text("Ada convida você para Gin Rummy")
    expect(bo.locator(".invite-prompt")).to_contain_text("Reino (a da casa), até 100 pontos")
    bo.fill("input[name=name]", "Bo")
    bo.click("button:has-text('SENTAR E JOGAR')")  # the name given, the seat is taken at once
    expect(bo.locator(".waiting")).to_contain_text("Esperando Ada começar")
    ada.click("button:has-text('COMEÇAR A PARTIDA')")

    frames: list[str] = []

    def on_socket(ws: WebSocket) -> None:
        ws.on("framereceived", lambda payload: frames.append(str(payload)))

    cy = contexts.new().new_page()
    cy.on("websocket", on_socket)
    cy.goto(link)
    # A late visitor, the seat taken, watches without a name, and is told so.
    expect(cy.locator(".invite-prompt")).to_contain_text("Ada convida você para Gin Rummy")
    assert cy.locator("input[name=name]").count() == 0
    cy.click("button:has-text('Só assistir')")
    cy.wait_for_selector(".game")
    expect(cy.locator(".watching-note")).to_contain_text("Você está assistindo")
    assert cy.locator(".hand .hand-card").count() == 0  # no hand of its own: watching

    say(ada, "boa sorte, Bo")
    expect(bo.locator(".chat .lines")).to_contain_text("boa sorte, Bo")
    say(bo, "obrigado, Ada")
    expect(ada.locator(".chat .lines")).to_contain_text("obrigado, Ada")
    for page in (ada, bo):
        expect(page.locator(".chat .lines")).to_contain_text("boa sorte, Bo")
        expect(page.locator(".chat .lines")).to_contain_text("obrigado, Ada")
    # The chat is the seats' own: the spectator has no box to write in and sees no line.
    expect(cy.locator(".chat")).to_contain_text("quem assiste não a vê")
    assert cy.locator(".chat form.say").count() == 0
    assert cy.locator(".chat .lines li").count() == 0

    players = [ada, bo]
    assert play(players, moves=8) == 8
    same_version([ada, bo, cy])
    assert ada.get_attribute(".game", "data-phase") != "over"
    known = set(cy.eval_on_selector_all(".known [data-card]", "e => e.map(x => x.dataset.card)"))
    held = set(hand_cards(ada)) | set(hand_cards(bo))
    assert len(held) == 20 or len(held) == 21
    hidden = held - known
    assert len(hidden) >= 17
    html = cy.content()
    for card in hidden:
        assert f'data-card="{card}"' not in html
        assert card_name(card) not in html
    assert frames
    for payload in frames:
        assert '"yours"' not in payload
        leaked = [card for card in hidden if f'"{card}"' in payload]
        assert not leaked, (leaked, payload[:300])
    # The spectator sees the public part: both card counts and the pile.
    expect(cy.locator(".seat-zone")).to_have_count(2)

    play(players)
    for page in (ada, bo, cy):
        expect(page.locator(".result-board [data-outcome]")).to_be_visible()
    assert ada.locator(ACTIONABLE).count() > 0


def _player(client: httpx.Client, name: str) -> dict[str, str]:
    r = client.post("/v1/players", json={"name": name})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['token']}"}


def _table(client: httpx.Client, auth: dict[str, str], **body: object) -> dict[str, str]:
    r = client.post("/v1/tables", json=body, headers=auth)
    assert r.status_code == 201, r.text
    return {"table_id": r.json()["table_id"], "invite_code": r.json()["invite_code"]}


def _seat1(client: httpx.Client, table_id: str) -> object:
    return client.get(f"/v1/tables/{table_id}").json()["seats"][1]["player"]


def test_an_invite_link_names_the_inviter_and_the_terms_and_seats_only_on_a_click(
    contexts: Contexts, web_server: Server
) -> None:
    """Opening a link seats nobody: the page says who invites, whether the table is rated and
    what its clock does, and the visitor takes the seat with a button."""
    clock = {"control": "per_move", "seconds": 60, "policy": "forfeit"}
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        ada = _player(client, "Ada")
        table = _table(client, ada, rated=True, clock=clock)
    link = f"/t/{table['table_id']}?invite={table['invite_code']}"

    bo = contexts.new().new_page()
    bo.goto(link)
    prompt = bo.locator(".invite-prompt")
    expect(prompt).to_contain_text("Ada convida você para Gin Rummy")
    expect(prompt).to_contain_text("Valendo rating")
    expect(prompt).to_contain_text("1 min por jogada")
    expect(prompt).to_contain_text("você perde a partida na hora")
    expect(prompt).to_contain_text("a partida é anulada, sem rating")
    time.sleep(1.0)  # room for a join the page should not make
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        assert _seat1(client, table["table_id"]) is None
    assert "invite=" in bo.url
    # The language switch is there, and says the same in English.
    bo.click("button:has-text('English')")
    expect(prompt).to_contain_text("Ada invites you to Gin Rummy")
    expect(prompt).to_contain_text("Rated")
    bo.click("button:has-text('Português')")

    bo.fill("input[name=name]", "Bo")
    bo.click("button:has-text('SENTAR E JOGAR')")
    expect(bo.locator(".waiting")).to_contain_text("Esperando Ada começar")
    assert bo.url.endswith(f"/t/{table['table_id']}")
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        seat = _seat1(client, table["table_id"])
    assert isinstance(seat, dict) and seat["name"] == "Bo"


def test_a_link_whose_invite_belongs_to_another_table_is_refused_and_seats_nobody(
    contexts: Contexts, web_server: Server
) -> None:
    """`/t/<shown>?invite=<another table's code>`: the page says the link does not add up and
    joins neither table; the server refuses such a join too."""
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        ada = _player(client, "Ada")
        shown = _table(client, ada)
        mallory = _player(client, "Mallory")
        other = _table(client, mallory, rated=True)
    link = f"/t/{shown['table_id']}?invite={other['invite_code']}"

    cy = contexts.new().new_page()
    cy.goto(link)
    expect(cy.locator(".invite-prompt.mismatch")).to_contain_text("O convite é de outra mesa")
    assert cy.locator("button:has-text('SENTAR E JOGAR')").count() == 0
    time.sleep(1.0)
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        assert _seat1(client, shown["table_id"]) is None
        assert _seat1(client, other["table_id"]) is None
        # The join endpoint, told which table the link named, refuses too.
        cy_auth = _player(client, "Cy")
        r = client.post(
            f"/v1/invites/{other['invite_code']}",
            json={"table_id": shown["table_id"]},
            headers=cy_auth,
        )
        assert r.status_code == 409 and r.json()["code"] == "invite_mismatch"
        assert _seat1(client, other["table_id"]) is None
    cy.click("button:has-text('Assistir esta mesa')")
    expect(cy.locator(".waiting")).to_contain_text("Você está assistindo")
