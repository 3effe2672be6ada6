// HTTP bodies and WebSocket messages come from the server's schemas (src/generated/, `make
// web-types`), and so does the list of deck designs. The engine's view inside `TableOut.game` is
// a free-form object there, so its shape (app/engine/views.py) is written out here.
import { type components, deckBodyDesignValues } from "@ginrummy/client/generated/api";
import type { ServerMessage as WsServerMessage, MoveMessage } from "@ginrummy/client/generated/ws";

type S = components["schemas"];
export type TableOut = Omit<S["TableOut"], "game"> & { game: GameView | null };
export type CommandOut = Omit<S["CommandOut"], "table" | "events"> & {
  table: TableOut;
  events: GameEvent[];
};
export type PlayerCreated = S["PlayerCreated"];
export type PlayerOut = S["PlayerOut"];
export type TicketOut = S["TicketOut"];
export type PushKeyOut = S["PushKeyOut"];
export type PushSubscriptionIn = S["PushSubscriptionIn"];
export type PushSubscriptionOut = S["PushSubscriptionOut"];
export type MatchRecord = S["MatchRecordOut"];
export type HandOut = S["HandOut"];
export type ReplayStep = S["ReplayStepOut"];
export type HandReview = S["HandReviewOut"];
export type MatchReview = S["MatchReviewOut"];
export type Decision = S["DecisionOut"];
export type SeatSummary = S["SeatSummaryOut"];
export type Hint = S["HintOut"];
export type Stats = S["StatsOut"];
export type ErrorOut = S["ErrorOut"];
export type TableCreate = S["TableCreate"];
export type SeekCreate = S["SeekCreate"];
export type SeekOut = S["SeekOut"];
export type ChallengeCreate = S["ChallengeCreate"];
export type DeclineReason = NonNullable<S["DeclineBody"]["reason"]>;
export type InviteOut = Omit<S["InviteOut"], "clock"> & { clock: S["NoClockOut"] | S["ClockOut"] };
export type DeckDesign = NonNullable<S["SeatOut"]["deck_design"]>;
export type BotLevel = S["BotBody"]["level"];
export type SeatOut = S["SeatOut"];
export type Clock = S["ClockOut"];
export type ActionKind = MoveMessage["kind"];
// Known messages, plus any type a newer server may add (ignored by the client).
export type ServerMessage = WsServerMessage | { type: string; seq?: number };

// The designs `PUT /v1/tables/{id}/deck` accepts, in the server's order (the picker's).
export const DECK_DESIGNS: readonly DeckDesign[] = deckBodyDesignValues;
export const BOT_LEVELS: BotLevel[] = ["easy", "medium", "hard"];
export const BOT_NAMES: Record<BotLevel, string> = { easy: "TITO", medium: "CARMEN", hard: "LUNA" };

export interface KnockDiscard {
  card: string;
  deadwood: number;
}
export interface Legal {
  actions: string[];
  discards: string[];
  cannot_discard: string | null;
  knock_discards: KnockDiscard[];
  can_knock: boolean;
  gin_discards: string[];
  can_big_gin: boolean;
}
export interface Arranged {
  cards: string[];
  melds: string[][];
  deadwood_cards: string[];
  deadwood: number;
}
export interface SeatPublic {
  seat: number;
  card_count: number;
  known_cards: string[];
  score: number;
  hands_won: number;
}
export interface Settlement {
  outcome: string;
  knocker_won: boolean;
  points: number;
  knocker_melds: string[][];
  knocker_deadwood_cards: string[];
  knocker_deadwood: number;
  defender_melds: string[][];
  defender_deadwood_cards: string[];
  defender_deadwood: number;
  layoffs: { card: string; meld: number }[];
}
export type Outcome = "knock" | "undercut" | "gin" | "big_gin" | "dead_hand";
export interface HandResult {
  hand_number: number;
  hands: string[][];
  seed: string;
  nonce: string;
  outcome: Outcome;
  knocker: number | null;
  winner: number | null;
  points: number;
  settlement?: Settlement;
  scores: number[];
}
export type Phase = "upcard_offer" | "draw" | "discard" | "over";
export interface HandView {
  number: number;
  dealer: number;
  phase: Phase;
  turn: number | null;
  stock_size: number;
  discard_pile: string[];
  upcard_refused: boolean;
  knock_limit: number;
  multiplier: number;
  seats: SeatPublic[];
  next_dealer: number | null;
  result: HandResult | null;
  yours?: Arranged;
}
export interface MatchView {
  status: "playing" | "finished";
  rules: Record<string, unknown>;
  scores: number[];
  hands_won: number[];
  winner: number | null;
  // "aborted": a seat's time ran out before its first move of the match; no winner.
  finish_reason: "target" | "resignation" | "timeout" | "abandoned" | "aborted" | null;
  bonuses: { game: number; line: number }[] | null;
  final_scores: number[] | null;
  history: { hand_number: number; outcome: Outcome; winner: number | null; points: number }[];
}
export interface GameView {
  you: number | null;
  match: MatchView;
  hand: HandView;
  legal?: Legal;
}
// An event of the log as this recipient sees it (`type` plus the event's public fields).
export interface GameEvent {
  seq?: number;
  type: string;
  seat?: number | null;
  card?: string;
  text?: string;
  player?: PlayerOut;
  [field: string]: unknown;
}
