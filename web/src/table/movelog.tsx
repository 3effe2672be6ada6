// The hand's moves in words: each event of the log since the hand was dealt, newest first.
import { cardText } from "../cards";
import { t } from "../i18n";
import type { GameEvent, TableOut } from "../types";
import { nameOf } from "./names";

/** One event of the table's log as a sentence ("TITO descartou 7♥."); "" for what is not a move. */
export function describe(view: TableOut, event: GameEvent | undefined): string {
  if (!event) return "";
  const name = nameOf(view, event.seat ?? null);
  const card = event.card ? cardText(event.card) : "";
  switch (event.type) {
    case "drew_stock":
      return card ? t("ev_drew_stock_card", { name, card }) : t("ev_drew_stock", { name });
    case "drew_discard":
      return t("ev_drew_discard", { name, card });
    case "upcard_taken":
      return t("ev_upcard_taken", { name, card });
    case "upcard_passed":
      return t("ev_upcard_passed", { name });
    case "discarded":
      return t("ev_discarded", { name, card });
    case "knocked":
      return event.gin ? t("ev_gin", { name, card }) : t("ev_knocked", { name, card });
    case "big_gin":
      return t("ev_big_gin", { name });
    case "hand_over": {
      const winner = typeof event.winner === "number" ? event.winner : null;
      if (winner === null) return t("ev_dead_hand");
      return t(Number(event.points) === 1 ? "ev_hand_won_one" : "ev_hand_won", { name: nameOf(view, winner), n: Number(event.points) });
    }
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

/** The events of the hand being played (from its deal on), oldest first; none of the chat. */
export function handEvents(log: GameEvent[], handNumber: number): GameEvent[] {
  let start = -1;
  for (let i = log.length - 1; i >= 0; i--) {
    const e = log[i];
    if (e.type === "hand_started" && Number(e.hand_number) === handNumber) {
      start = i;
      break;
    }
  }
  // A log cut short (a long table) may lack the deal: then what it holds of the hand.
  const from = start >= 0 ? log.slice(start) : log.filter((e) => e.type !== "hand_started");
  return from.filter((e) => e.type !== "chat");
}

export function MoveLog({ view, log, handNumber }: { view: TableOut; log: GameEvent[]; handNumber: number }) {
  const lines = handEvents(log, handNumber)
    .map((e) => ({ seq: e.seq, seat: e.seat, text: describe(view, e) }))
    .filter((l) => l.text)
    .reverse();
  const you = view.you;
  return (
    <section class="movelog" aria-labelledby="movelog-title">
      <h2 id="movelog-title">{t("moveLog")}</h2>
      <ol class="moves" data-count={lines.length}>
        {lines.map((l, i) => (
          <li key={l.seq ?? i} class={l.seat === you && you !== null ? "mine" : l.seat === undefined || l.seat === null ? "" : "theirs"}>
            {l.text}
          </li>
        ))}
      </ol>
    </section>
  );
}
