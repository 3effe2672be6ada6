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
import { Chat } from "./table/chat";
import { Menu } from "./table/menu";
import { nameOf } from "./table/names";
import { ResultBoard } from "./table/result";
import type { DeckDesign, GameEvent, GameView, Legal, TableOut } from "./types";
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

function ActionBar(props: {
  legal: Legal;
  actions: Set<string>;
  selected: string | null;
  move: (path: string, body?: Record<string, unknown>) => void;
}) {
  const { legal, actions, selected, move } = props;
  const knocks = legal.knock_discards.filter((k) => k.deadwood > 0);
  const knock = knocks.find((k) => k.card === selected) ?? [...knocks].sort((a, b) => a.deadwood - b.deadwood)[0];
  const gin = legal.gin_discards.includes(selected ?? "") ? selected : legal.gin_discards[0];
  const buttons: { key: string; label: string; run: () => void; cls?: string }[] = [];
  if (actions.has("take_upcard")) buttons.push({ key: "take", label: t("takeUpcard"), run: () => move("moves/take-upcard") });
  if (actions.has("pass")) buttons.push({ key: "pass", label: t("pass"), run: () => move("moves/pass") });
  if (actions.has("draw_stock")) buttons.push({ key: "stock", label: t("drawStock"), run: () => move("moves/draw", { source: "stock" }) });
  if (actions.has("draw_discard")) buttons.push({ key: "pile", label: t("drawDiscard"), run: () => move("moves/draw", { source: "discard" }) });
  if (legal.can_big_gin) buttons.push({ key: "biggin", label: t("bigGin"), run: () => move("moves/big-gin"), cls: "gold" });
  if (gin) buttons.push({ key: "gin", label: t("gin"), run: () => move("moves/knock", { card: gin }), cls: "gold" });
  if (knock)
    buttons.push({
      key: "knock",
      label: t("knockWith", { card: cardText(knock.card), dw: knock.deadwood }),
      run: () => move("moves/knock", { card: knock.card }),
      cls: "knock",
    });
  const onKey = (e: KeyboardEvent) => {
    const all = Array.from(document.querySelectorAll<HTMLButtonElement>(".actions button"));
    const i = all.indexOf(e.currentTarget as HTMLButtonElement);
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      all[(i + (e.key === "ArrowRight" ? 1 : all.length - 1)) % all.length]?.focus();
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      focusHand();
    }
  };
  return (
    <div class="actions" role="toolbar" aria-label={t("menu")}>
      {buttons.map((b) => (
        <button type="button" key={b.key} data-action={b.key} class={`action ${b.cls ?? ""}`} onClick={b.run} onKeyDown={onKey}>
          {b.label}
        </button>
      ))}
    </div>
  );
}

let handFocus = 0;
let keyboardUsed = false;
document.addEventListener("keydown", () => (keyboardUsed = true), true);
document.addEventListener("pointerdown", () => (keyboardUsed = false), true);

function focusHand(): void {
  const cards = Array.from(document.querySelectorAll<HTMLButtonElement>(".hand .hand-card"));
  cards[Math.min(handFocus, cards.length - 1)]?.focus();
}

function focusUp(): void {
  const target =
    document.querySelector<HTMLButtonElement>(".actions button") ??
    document.querySelector<HTMLButtonElement>("[data-nav=up]") ??
    document.querySelector<HTMLButtonElement>(".result-board button");
  target?.focus();
}

function MyHand(props: {
  game: GameView;
  legal: Legal | undefined;
  selected: string | null;
  onSelect: (card: string | null) => void;
  onDiscard: (card: string) => void;
  lastDrawn: string | null;
}) {
  const { game, legal, selected, onSelect, onDiscard, lastDrawn } = props;
  const yours = game.hand.yours!;
  const discardPhase = !!legal?.actions.includes("discard");
  const [focus, setFocus] = useState(Math.min(handFocus, yours.cards.length - 1));
  const drag = useRef<{ card: string; x: number; y: number; el: HTMLElement; moved: boolean } | null>(null);
  const suppressClick = useRef(false);
  handFocus = focus;

  const meldOf = new Map<string, number>();
  const meldEnd = new Set<string>();
  yours.melds.forEach((meld, i) => {
    meld.forEach((c) => meldOf.set(c, i));
    meldEnd.add(meld[meld.length - 1]);
  });

  // A keyboard player whose focused control vanished (a discard, a draw) comes back to the hand.
  useEffect(() => {
    if (keyboardUsed && (document.activeElement === document.body || !document.activeElement)) focusHand();
  });

  const click = (card: string) => {
    if (suppressClick.current) {
      suppressClick.current = false;
      return;
    }
    if (!discardPhase || card === legal?.cannot_discard) return;
    if (selected === card) onDiscard(card);
    else onSelect(card);
  };

  const onKeyDown = (e: KeyboardEvent, i: number) => {
    const n = yours.cards.length;
    let next = i;
    if (e.key === "ArrowRight") next = (i + 1) % n;
    else if (e.key === "ArrowLeft") next = (i + n - 1) % n;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = n - 1;
    else if (e.key === "ArrowUp") {
      e.preventDefault();
      focusUp();
      return;
    } else return;
    e.preventDefault();
    setFocus(next);
    handFocus = next;
    const buttons = document.querySelectorAll<HTMLButtonElement>(".hand .hand-card");
    buttons[next]?.focus();
  };

  const onPointerDown = (e: PointerEvent, card: string) => {
    if (!discardPhase || card === legal?.cannot_discard || e.button !== 0) return;
    drag.current = { card, x: e.clientX, y: e.clientY, el: e.currentTarget as HTMLElement, moved: false };
    (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
  };
  const onPointerMove = (e: PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 10) return;
    d.moved = true;
    d.el.classList.add("dragging");
    d.el.style.transform = `translate(${dx}px, ${dy}px)`;
    const over = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-drop=discard]");
    document.querySelector("[data-drop=discard]")?.classList.toggle("drop-over", !!over);
  };
  const onPointerUp = (e: PointerEvent) => {
    const d = drag.current;
    drag.current = null;
    if (!d || !d.moved) return;
    d.el.classList.remove("dragging");
    d.el.style.transform = "";
    suppressClick.current = true;
    window.setTimeout(() => (suppressClick.current = false), 0);
    const pile = document.querySelector("[data-drop=discard]");
    pile?.classList.remove("drop-over");
    d.el.style.visibility = "hidden";
    const over = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-drop=discard]");
    d.el.style.visibility = "";
    if (over) onDiscard(d.card);
  };

  return (
    <section class="my-hand" aria-label={t("you")}>
      <div class="hand" role="group" aria-label={`${t("deadwood")} ${yours.deadwood}`}>
        {yours.cards.map((c, i) => {
          const sunk = c === legal?.cannot_discard;
          const meld = meldOf.get(c);
          const cls = [
            "hand-card",
            meld !== undefined ? `in-meld meld-${meld % 4}` : "loose",
            meldEnd.has(c) ? "meld-end" : "",
            sunk ? "sunk" : "",
            selected === c ? "selected" : "",
            lastDrawn === c ? "new" : "",
          ].join(" ");
          const extra = [sunk ? t("cannotDiscard") : "", selected === c ? t("selected") : "", meldEnd.has(c) ? t("meldEnd") : ""]
            .filter(Boolean)
            .join(", ");
          return (
            <button
              type="button"
              key={c}
              class={cls}
              data-card={c}
              tabIndex={i === focus ? 0 : -1}
              aria-label={extra ? `${cardName(c)}, ${extra}` : cardName(c)}
              aria-pressed={discardPhase ? selected === c : undefined}
              aria-disabled={sunk ? "true" : undefined}
              onClick={() => click(c)}
              onFocus={() => {
                setFocus(i);
                handFocus = i;
              }}
              onKeyDown={(e) => onKeyDown(e, i)}
              onPointerDown={(e) => onPointerDown(e, c)}
              onPointerMove={onPointerMove}
              onPointerUp={onPointerUp}
              onPointerCancel={onPointerUp}
            >
              <CardFace code={c} labelled={false} />
            </button>
          );
        })}
      </div>
    </section>
  );
}
