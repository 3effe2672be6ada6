// The table page: waiting room, the hand in play, the result board, chat and menu.
import { useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { api, ensurePlayer, me, rememberTable } from "./api";
import { CardBack, CardFace, cardText } from "./cards";
import { canClaim, clockNotice, SeatClock } from "./clock";
import { cardName, t } from "./i18n";
import { checkInvite, type InviteCheck, InviteMismatch, InvitePrompt } from "./invite";
import { TableLive } from "./live";
import { listen, yourTurn } from "./notify";
import { beep, deckPref, setDeckPref, setSound, soundOn } from "./prefs";
import { navigate } from "./router";
import { DeckPicker, NameField } from "./start";
import { ActionBar } from "./table/actions";
import { Chat } from "./table/chat";
import { MyHand } from "./table/hand";
import { Menu } from "./table/menu";
import { nameOf } from "./table/names";
import { ResultBoard } from "./table/result";
import type { DeckDesign, GameEvent, GameView, TableOut } from "./types";
import { BOT_LEVELS, BOT_NAMES } from "./types";

export function TablePage(props: { id: string; invite: string | null; switchLang: () => void }) {
  const [player, setPlayer] = useState(me());
  if (!player) return <NameGate onDone={() => setPlayer(me())} />;
  return <Table {...props} />;
}

function NameGate({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  const [deck, setDeck] = useState<DeckDesign>(deckPref());
  return (
    <div class={`page start deck-${deck}`}>
      <header class="topbar">
        <h1>{t("title")}</h1>
      </header>
      <main class="start-main">
        <form
          class="panel"
          onSubmit={(e) => {
            e.preventDefault();
            if (!name.trim()) return;
            setDeckPref(deck);
            void ensurePlayer(name.trim()).then(() => {
              listen();
              onDone();
            });
          }}
        >
          <NameField value={name} onInput={setName} />
          <DeckPicker value={deck} onPick={setDeck} />
          <button class="primary" type="submit">
            OK
          </button>
        </form>
      </main>
    </div>
  );
}

function useKeys(handlers: Record<string, () => void>): void {
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
      if (e.ctrlKey || e.metaKey || e.altKey || (typing && e.key !== "Escape")) return;
      const handler = ref.current[e.key.length === 1 ? e.key.toLowerCase() : e.key];
      if (handler) {
        e.preventDefault();
        handler();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}

function Table({ id, invite, switchLang }: { id: string; invite: string | null; switchLang: () => void }) {
  const live = useMemo(() => new TableLive(id), [id]);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const [menu, setMenu] = useState(false);
  const [chatOpen, setChatOpen] = useState(false);
  const [sound, setSoundState] = useState(soundOn());
  // The link's invite: checked, then asked about (or refused) before the page plays or watches.
  const [asking, setAsking] = useState<InviteCheck | "checking" | null>(invite ? "checking" : null);
  const [joining, setJoining] = useState(false);
  const watch = () => {
    history.replaceState(null, "", `/t/${id}`);
    setAsking(null);
    live.start();
  };
  const accept = async () => {
    if (!invite) return;
    setJoining(true);
    try {
      await api.join(invite, deckPref(), id);
    } catch (e) {
      // Taken meanwhile, or no longer this table's: the page watches and says why.
      live.error = e instanceof Error ? e.message : String(e);
    }
    setJoining(false);
    watch();
  };

  useEffect(() => {
    const off = live.subscribe(() => rerender(0));
    live.onYourTurn = () => yourTurn(id);
    live.onEvent = (e) => {
      if (e.type === "discarded" || e.type === "knocked") beep(440, 50);
    };
    let cancelled = false;
    void (async () => {
      rememberTable(id);
      if (invite) {
        let check: InviteCheck = { kind: "watch" };
        try {
          check = await checkInvite(id, invite);
        } catch {
          // The table cannot be read: the page shows why once it watches.
        }
        if (cancelled) return;
        if (check.kind !== "watch") {
          setAsking(check); // nothing is joined until the player says so
          return;
        }
        history.replaceState(null, "", `/t/${id}`);
        setAsking(null);
      }
      if (!cancelled) live.start();
    })();
    return () => {
      cancelled = true;
      off();
      live.stop();
    };
  }, [live]);

  useKeys({
    p: () => setMenu((m) => !m),
    Escape: () => setMenu((m) => !m),
    m: () => {
      setSound(!soundOn());
      setSoundState(soundOn());
    },
    f: () => {
      if (document.fullscreenElement) void document.exitFullscreen();
      else void document.documentElement.requestFullscreen?.().catch(() => undefined);
    },
  });

  const view = live.view;
  if (live.error === "table_not_found") {
    return (
      <div class="page">
        <p class="panel">{t("notFound")}</p>
      </div>
    );
  }
  const deck = (view && view.you !== null && view.seats[view.you]?.deck_design) || deckPref();
  const chatCount = live.log.filter((e) => e.type === "chat").length;
  return (
    <div class={`page table deck-${deck}`}>
      <header class="topbar">
        <a
          class="home"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            navigate("/");
          }}
        >
          {t("title")}
        </a>
        <span class={`conn ${live.connection}`} role="status">
          {live.connection === "offline" ? t("offline") : <span class="sr-only">{t("online")}</span>}
        </span>
        {asking === null && (
          <>
            <button type="button" class="chat-toggle" aria-expanded={chatOpen} onClick={() => setChatOpen(!chatOpen)}>
              {t("chat")}
              {chatCount > 0 && <span class="count">{chatCount}</span>}
            </button>
            <button type="button" class="menu-button" aria-haspopup="dialog" onClick={() => setMenu(true)}>
              ☰ {t("menu")}
            </button>
          </>
        )}
      </header>
      <div class={asking === null ? "layout" : "layout alone"}>
        <main class="board">
          {asking !== null && asking !== "checking" && asking.kind === "ask" && (
            <InvitePrompt invite={asking.invite} busy={joining} onAccept={() => void accept()} onWatch={watch} />
          )}
          {asking !== null && asking !== "checking" && asking.kind === "mismatch" && <InviteMismatch onWatch={watch} />}
          {asking === null && !view && <p class="loading">{t("loading")}</p>}
          {asking === "checking" && <p class="loading">{t("loading")}</p>}
          {asking === null && view && !view.game && <WaitingRoom view={view} live={live} />}
          {asking === null && view && view.game && <Game view={view} game={view.game} live={live} />}
        </main>
        {asking === null && <Chat live={live} open={chatOpen} onClose={() => setChatOpen(false)} />}
      </div>
      {live.error && (
        <div class="toast" role="alert" onClick={() => ((live.error = null), rerender(0))}>
          {live.error}
        </div>
      )}
      {menu && view && (
        <Menu
          view={view}
          live={live}
          sound={sound}
          onSound={() => {
            setSound(!sound);
            setSoundState(!sound);
          }}
          switchLang={switchLang}
          onClose={() => setMenu(false)}
        />
      )}
    </div>
  );
}

function WaitingRoom({ view, live }: { view: TableOut; live: TableLive }) {
  const [copied, setCopied] = useState(false);
  const link = view.invite_code ? `${location.origin}/t/${view.table_id}?invite=${view.invite_code}` : null;
  const seat1Empty = !view.seats[1]?.player && !view.seats[1]?.bot_level;
  const copy = async () => {
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      const input = document.getElementById("invite-link") as HTMLInputElement | null;
      input?.select();
      document.execCommand("copy");
    }
    setCopied(true);
  };
  return (
    <section class="panel waiting">
      <ul class="seats">
        {[0, 1].map((s) => (
          <li key={s}>
            <b>{nameOf(view, s)}</b>
            {view.seats[s]?.bot_level && <span class="badge">{t("bot")}</span>}
            {view.you === s && <span class="badge">{t("you")}</span>}
          </li>
        ))}
      </ul>
      {view.you === 0 && link && seat1Empty && (
        <div class="invite">
          <label for="invite-link">{t("inviteLink")}</label>
          <div class="row">
            <input id="invite-link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" class="primary" onClick={() => void copy()}>
              {copied ? t("copied") : t("copy")}
            </button>
          </div>
          <p>{t("waitingOpponent")}</p>
          <p>{t("fillBot")}:</p>
          <div class="bots">
            {BOT_LEVELS.map((level) => (
              <button
                type="button"
                key={level}
                class="bot"
                onClick={() => void live.command(() => api.seatBot(view.table_id, level))}
              >
                <b>{BOT_NAMES[level]}</b> <small>{t(level)}</small>
              </button>
            ))}
          </div>
        </div>
      )}
      {view.you === 0 && view.status === "ready" && (
        <button type="button" class="primary big" onClick={() => void live.command(() => api.start(view.table_id))}>
          {t("start")}
        </button>
      )}
      {view.you === 1 && <p>{t("waitingStart", { name: nameOf(view, 0) })}</p>}
      {view.you === null && <p>{t("spectating")}</p>}
    </section>
  );
}

function describe(view: TableOut, event: GameEvent | undefined): string {
  if (!event) return "";
  const name = nameOf(view, event.seat ?? null);
  const card = event.card ? cardText(event.card) : "";
  switch (event.type) {
    case "drew_stock":
      return t("ev_drew_stock", { name });
    case "drew_discard":
      return t("ev_drew_discard", { name, card });
    case "upcard_taken":
      return t("ev_upcard_taken", { name, card });
    case "upcard_passed":
      return t("ev_upcard_passed", { name });
    case "discarded":
      return t("ev_discarded", { name, card });
    case "knocked":
      return t("ev_knocked", { name, card });
    case "big_gin":
      return t("ev_big_gin", { name });
    case "resigned":
      return t("ev_resigned", { name });
    case "time_expired":
      return t("ev_time_expired", { name });
    case "timed_out":
      return t("ev_timed_out", { name });
    case "match_aborted":
      return t("ev_match_aborted", { name });
    case "hand_started":
      return t("ev_hand_started", { n: Number(event.hand_number), name: nameOf(view, Number(event.dealer)) });
    default:
      return "";
  }
}

function Game({ view, game, live }: { view: TableOut; game: GameView; live: TableLive }) {
  const hand = game.hand;
  const you = view.you;
  const bottom = you ?? 0;
  const top = 1 - bottom;
  const legal = game.legal;
  const actions = new Set(legal?.actions ?? []);
  const [selected, setSelected] = useState<string | null>(null);
  const cards = hand.yours?.cards ?? [];
  const discardPhase = actions.has("discard");
  if (selected && (!discardPhase || !cards.includes(selected))) setSelected(null);

  const move = (path: string, body: Record<string, unknown> = {}) =>
    void live.command(() => api.move(view.table_id, path, body));
  const discard = (card: string) => {
    if (!legal?.discards.includes(card)) return;
    setSelected(null);
    move("moves/discard", { card });
  };

  const lastEvent = [...live.log].reverse().find((e) => e.type !== "chat" && describe(view, e));
  const deadAt = Number(game.match.rules.dead_hand_at ?? 0);
  const stockEnding = hand.phase !== "over" && hand.stock_size <= deadAt + 2;
  const myTurn = you !== null && hand.turn === you && hand.phase !== "over";
  let instruction = "";
  if (hand.phase !== "over") {
    if (myTurn) {
      instruction = hand.phase === "upcard_offer" ? t("youUpcard") : hand.phase === "draw" ? t("youDraw") : t("youDiscard");
    } else if (hand.phase === "upcard_offer") {
      instruction = t("upcardOffer", { name: nameOf(view, hand.turn) });
    } else {
      instruction = t("theyMove", { name: nameOf(view, hand.turn) });
    }
  }
  const notice = clockNotice(view, (seat) => nameOf(view, seat));
  const top_card = hand.discard_pile[hand.discard_pile.length - 1];
  const canDrawStock = actions.has("draw_stock");
  const canTakePile = actions.has("draw_discard") || actions.has("take_upcard");
  const takePile = () => move(actions.has("take_upcard") ? "moves/take-upcard" : "moves/draw", actions.has("take_upcard") ? {} : { source: "discard" });

  return (
    <div class={`game${myTurn ? " my-turn" : ""}`} data-version={view.version} data-phase={hand.phase}>
      <Scoreboard view={view} game={game} bottom={bottom} />
      <SeatZone view={view} game={game} seat={top} />
      <div class="center">
        <div class={`pile stock${stockEnding ? " ending" : ""}`}>
          {canDrawStock ? (
            <button
              type="button"
              class="pile-button"
              data-nav="up"
              aria-label={t("stockCards", { n: hand.stock_size })}
              onClick={() => move("moves/draw", { source: "stock" })}
            >
              <CardBack />
            </button>
          ) : (
            <CardBack />
          )}
          <span class="pile-count">{t("stockCount", { n: hand.stock_size })}</span>
        </div>
        <div class="pile pile-discard" data-drop="discard">
          {top_card && canTakePile ? (
            <button type="button" class="pile-button" data-nav="up" aria-label={t("discardTop", { card: cardName(top_card) })} onClick={takePile}>
              <CardFace code={top_card} labelled={false} />
            </button>
          ) : top_card ? (
            <CardFace code={top_card} />
          ) : (
            <span class="card empty" aria-label={t("discardEmpty")} role="img" />
          )}
          <span class="pile-count">{t("discardPile")}</span>
        </div>
        <div class="status">
          <p class="last-event" aria-live="polite">
            {describe(view, lastEvent)}
          </p>
          <p class="instruction">{instruction}</p>
          {stockEnding && (
            <p class="warning" role="status">
              ⚠ {t("stockEnding", { n: deadAt })}
            </p>
          )}
          {notice && (
            <p class="warning clock-notice" role="status">
              {notice}
            </p>
          )}
          {canClaim(view) && game.match.status !== "finished" && (
            <button type="button" class="primary claim" onClick={() => move("claim")}>
              {t("claim")}
            </button>
          )}
        </div>
      </div>
      {legal && hand.phase !== "over" && (
        <ActionBar legal={legal} actions={actions} selected={selected} move={move} />
      )}
      {you !== null && hand.yours ? (
        <MyHand
          game={game}
          legal={legal}
          selected={selected}
          onSelect={setSelected}
          onDiscard={discard}
          lastDrawn={lastDrawn(live.log, you, hand.phase)}
        />
      ) : (
        <SeatZone view={view} game={game} seat={bottom} />
      )}
      {(hand.phase === "over" || game.match.status === "finished") && <ResultBoard view={view} game={game} live={live} />}
    </div>
  );
}

function lastDrawn(log: GameEvent[], you: number, phase: string): string | null {
  if (phase !== "discard") return null;
  const last = [...log].reverse().find((e) => e.type !== "chat");
  if (!last || last.seat !== you) return null;
  return ["drew_stock", "drew_discard", "upcard_taken"].includes(last.type) ? (last.card ?? null) : null;
}

function Scoreboard({ view, game, bottom }: { view: TableOut; game: GameView; bottom: number }) {
  const top = 1 - bottom;
  const yours = game.hand.yours;
  return (
    <div class="scoreboard">
      <span class="score me">
        <span class="who">{nameOf(view, bottom)}</span> <b data-score={bottom}>{game.match.scores[bottom]}</b>
        {game.hand.dealer === bottom && <span class="badge">{t("dealer")}</span>}
        <SeatClock view={view} seat={bottom} />
      </span>
      {yours && (
        <span class="deadwood" title={t("deadwood")}>
          {t("deadwood")} <b data-deadwood>{yours.deadwood}</b>
        </span>
      )}
      <span class="score opp">
        <span class="who">{nameOf(view, top)}</span> <b data-score={top}>{game.match.scores[top]}</b>
        <SeatClock view={view} seat={top} />
      </span>
      <span class="meta">
        {t("hand", { n: game.hand.number })} · {t("to", { n: Number(game.match.rules.target ?? 100) })}
      </span>
    </div>
  );
}

function SeatZone({ view, game, seat }: { view: TableOut; game: GameView; seat: number }) {
  const info = game.hand.seats[seat];
  const known = info?.known_cards ?? [];
  const hidden = Math.max(0, (info?.card_count ?? 0) - known.length);
  const turn = game.hand.turn === seat && game.hand.phase !== "over";
  return (
    <section class={`seat-zone${turn ? " turn" : ""}`} aria-label={nameOf(view, seat)}>
      <div class="seat-name">
        <b>{nameOf(view, seat)}</b>
        {view.seats[seat]?.bot_level && <span class="badge">{t("bot")}</span>}
        {game.hand.dealer === seat && <span class="badge">{t("dealer")}</span>}
        <span class="card-count">{t("cardsInHand", { n: info?.card_count ?? 0 })}</span>
      </div>
      <div class="backs" aria-hidden="true">
        {Array.from({ length: hidden }, (_, i) => (
          <CardBack key={i} small />
        ))}
      </div>
      {known.length > 0 && (
        <div class="known" aria-label={t("known")}>
          <span class="label">{t("known")}:</span>
          {known.map((c) => (
            <CardFace key={c} code={c} small />
          ))}
        </div>
      )}
    </section>
  );
}
