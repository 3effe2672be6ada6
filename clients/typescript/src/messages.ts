// The socket messages, typed from the models the server builds them with (src/generated/ws.ts,
// written by json-schema-to-typescript from the same schema as /asyncapi.json's payloads),
// each with its `type` required so that a switch on it narrows.
import type * as ws from "./generated/ws.js";

type Typed<T, K extends string> = Omit<T, "type"> & { type: K };

export type ViewMessage = Typed<ws.ViewMessage, "view">;
export type EventMessage = Typed<ws.EventMessage, "event">;
export type SkipMessage = Typed<ws.SkipMessage, "skip">;
export type YourTurnMessage = Typed<ws.YourTurnMessage, "your_turn">;
export type OpponentJoinedMessage = Typed<ws.OpponentJoinedMessage, "opponent_joined">;
export type MatchFinishedMessage = Typed<ws.MatchFinishedMessage, "match_finished">;
export type HeartbeatMessage = Typed<ws.HeartbeatMessage, "heartbeat">;
export type AckMessage = Typed<ws.AckMessage, "ack">;
export type PongMessage = Typed<ws.PongMessage, "pong">;
export type ErrorMessage = Typed<ws.ErrorMessage, "error">;
export type MoveMessage = Typed<ws.MoveMessage, "move">;
export type PingMessage = Typed<ws.PingMessage, "ping">;
export type TableOut = ws.TableOut;
export type ActionKind = ws.MoveMessage["kind"];

/** What the table socket sends. */
export type TableMessage =
  | ViewMessage
  | EventMessage
  | SkipMessage
  | YourTurnMessage
  | HeartbeatMessage
  | AckMessage
  | PongMessage
  | ErrorMessage;
/** What the player socket sends. */
export type PlayerMessage =
  | YourTurnMessage
  | OpponentJoinedMessage
  | MatchFinishedMessage
  | HeartbeatMessage
  | PongMessage
  | ErrorMessage;
export type ServerMessage = TableMessage | PlayerMessage;
export type ClientMessage = MoveMessage | PingMessage;

/** An engine action as a move takes it: `{kind: "discard", card: "QC"}`. */
export interface Action {
  kind: ActionKind;
  card?: string | null;
}
