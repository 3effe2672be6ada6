// The board of a hand in play: scores, the opponent's seat, the piles and what just happened,
// the action bar, the hand, and the result board once the hand is over.
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { CardBack, CardFace } from "../cards";
import { canClaim, clockNotice, SeatClock } from "../clock";
import { t } from "../i18n";
import type { TableLive } from "../live";
import type { GameEvent, GameView, Legal, TableOut } from "../types";
import { ActionBar } from "./actions";
import { MyHand } from "./hand";
import { HintButton } from "./hint";
import { Motion } from "./motion";
import { describe, MoveLog } from "./movelog";
import { nameOf } from "./names";
import { Piles } from "./piles";
import { ResignHere } from "./resign";
import { ResultBoard } from "./result";
import { ScoreSheet } from "./scoresheet";
import { turnTitle } from "./title";

/** What this seat may do now, in words, from the legal actions the view lists (never a rule of
 * its own): after both passed the upcard only the stock is offered, so only the stock is said. */
function turnInstruction(legal: Legal | undefined): string {
  const can = new Set(legal?.actions ?? []);
  if (can.has("take_upcard") || can.has("pass")) return t("youUpcard");
  if (can.has("draw_stock") && can.has("draw_discard")) return t("youDraw");
  if (can.has("draw_stock")) return t("youDrawStock");
  if (can.has("draw_discard")) return t("youDrawPile");
  if (can.has("discard")) return t("youDiscard");
  return "";
}

export function Game({ view, game, live }: { view: TableOut; game: GameView; live: TableLive }) {
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
  // A finished match (a resignation, a timeout) leaves no one to move: no instruction stays.
  const playing = hand.phase !== "over" && game.match.status !== "finished";
  const myTurn = playing && you !== null && hand.turn === you;
  useEffect(() => {
    turnTitle(myTurn);
  }, [myTurn]);
  useEffect(() => () => turnTitle(false), []);
  let instruction = "";
  if (playing) {
    if (myTurn) {
      instruction = turnInstruction(legal);
    } else if (hand.phase === "upcard_offer") {
      instruction = t("upcardOffer", { name: nameOf(view, hand.turn) });
    } else {
      instruction = t("theyMove", { name: nameOf(view, hand.turn) });
    }
  }
  const notice = clockNotice(view, (seat) => nameOf(view, seat));

  // Cards slide from where they were to where they are (motion.ts); a knock's pile pulses once.
  const root = useRef<HTMLDivElement>(null);
  const motion = useRef(new Motion());
  const pulsed = useRef<number | undefined>(undefined);
  useLayoutEffect(() => {
    const knock = lastEvent?.type === "knocked" && lastEvent.seq !== pulsed.current;
    if (knock) pulsed.current = lastEvent.seq;
    motion.current.after(root.current, knock);
  });

  return (
    <div ref={root} class={`game${myTurn ? " my-turn" : ""}`} data-version={view.version} data-phase={hand.phase}>
      <Scoreboard view={view} game={game} bottom={bottom} />
      <SeatZone view={view} game={game} seat={top} />
      <div class="center">
        <Piles hand={hand} actions={actions} stockEnding={stockEnding} move={move} />
        <div class="status">
          <p class="last-event" aria-live="polite">
            {describe(view, lastEvent)}
          </p>
          <p class="instruction" role="status" data-instruction>
            {instruction}
          </p>
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
          {view.hints && myTurn && <HintButton view={view} />}
          {canClaim(view) && game.match.status !== "finished" && (
            <button type="button" class="primary claim" onClick={() => move("claim")}>
              {t("claim")}
            </button>
          )}
        </div>
        <div class="table-notes">
          <MoveLog view={view} log={live.log} handNumber={hand.number} />
          <ScoreSheet view={view} game={game} order={[bottom, top]} />
        </div>
      </div>
      {legal && playing && (
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
          orderKey={`${view.table_id}:${view.match_number}:${hand.number}`}
          tools={playing && <ResignHere view={view} live={live} />}
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
        <span class="who name" title={nameOf(view, bottom)}>{nameOf(view, bottom)}</span> <b data-score={bottom}>{game.match.scores[bottom]}</b>
        {game.hand.dealer === bottom && <span class="badge">{t("dealer")}</span>}
        <SeatClock view={view} seat={bottom} />
      </span>
      {yours && (
        <span class="deadwood" title={t("deadwood")}>
          {t("deadwood")} <b data-deadwood>{yours.deadwood}</b>
        </span>
      )}
      <span class="score opp">
        <span class="who name" title={nameOf(view, top)}>{nameOf(view, top)}</span> <b data-score={top}>{game.match.scores[top]}</b>
        <SeatClock view={view} seat={top} />
      </span>
      <span class="meta">
        {t("hand", { n: game.hand.number })} · {t("to", { n: Number(game.match.rules.target ?? 100) })}
        {view.hints && <span class="badge hints-on">{t("hintsOn")}</span>}
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
        <b class="name" title={nameOf(view, seat)}>{nameOf(view, seat)}</b>
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
