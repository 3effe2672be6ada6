// Words for a move and a review's mark: the replay's move list and the review's options.
import { cardText } from "../cards";
import { t, type Key } from "../i18n";
import type { Decision, ReplayStep } from "../types";

interface Move {
  kind: string;
  card?: string | null;
}

/** "descartar 7♥": an option, without the player's name. */
export function optionText(move: Move): string {
  return t(`opt_${move.kind}` as Key, { card: move.card ? cardText(move.card) : "" });
}

const EVENT_OF: Record<string, string> = {
  take_upcard: "ev_upcard_taken",
  pass: "ev_upcard_passed",
  draw_stock: "ev_drew_stock",
  draw_discard: "ev_drew_discard",
  discard: "ev_discarded",
  knock: "ev_knocked",
  big_gin: "ev_big_gin",
  resign: "ev_resigned",
};

/** "Ada descartou 7♥.": a replay step, with the card a draw from the pile took. */
export function stepText(step: ReplayStep, name: string, before: string[]): string {
  const key = EVENT_OF[step.action.kind] ?? "ev_resigned";
  const taken = ["take_upcard", "draw_discard"].includes(step.action.kind) ? before[before.length - 1] : undefined;
  const card = step.action.card ?? taken;
  return t(key as Key, { name, card: card ? cardText(card) : "" });
}

export function sameMove(a: Move, b: Move): boolean {
  return a.kind === b.kind && (a.card ?? null) === (b.card ?? null);
}

/** The mark's words, or "" for none. */
export function markText(decision: Decision | undefined): string {
  return decision?.mark ? t(`mark_${decision.mark}` as Key) : "";
}
