// The public HTTP API, with the player's token kept in localStorage. The sockets' ticket and the
// table's view go through the SDK's typed client (clients/typescript), as the sockets do.
import { ApiError as SdkError, createRest, ok } from "@ginrummy/client";
import { refusal } from "./refusals";
import type {
  BotLevel,
  ChallengeCreate,
  CommandOut,
  DeclineReason,
  DeckDesign,
  GameEvent,
  HandOut,
  HandReview,
  Hint,
  MatchReview,
  Stats,
  InviteOut,
  MatchRecord,
  PlayerCreated,
  PlayerOut,
  PushKeyOut,
  PushSubscriptionIn,
  PushSubscriptionOut,
  SeekCreate,
  SeekOut,
  TableCreate,
  TableOut,
} from "./types";

const KEY = "ginrummy.player";
const TABLES_KEY = "ginrummy.tables";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface Me {
  id: string;
  name: string;
  token: string;
}

export function me(): Me | null {
  try {
    const raw = localStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Me) : null;
  } catch {
    return null;
  }
}

function saveMe(player: Me): void {
  localStorage.setItem(KEY, JSON.stringify(player));
}

async function call<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
  const headers: Record<string, string> = {};
  const player = me();
  if (auth && player) headers.Authorization = `Bearer ${player.token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    // No answer at all (offline, server down): said in words, not "TypeError: Failed to fetch".
    throw new ApiError(0, "offline", refusal("offline", ""));
  }
  const text = await response.text();
  let data: unknown = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // Not JSON (a proxy's error page): the status says what happened.
  }
  if (!response.ok) {
    const err = (data ?? {}) as { code?: string; message?: string };
    const code = err.code ?? "http_" + response.status;
    // The message in the page's language; the server's English only for a code it has no words for.
    throw new ApiError(response.status, code, refusal(code, err.message ?? text));
  }
  return data as T;
}

/** The SDK's typed REST client, as the stored player (a 429 or 503 retried after Retry-After). */
export const sdkRest = createRest({ baseUrl: "", token: () => me()?.token ?? null, retries: 2 });

/** An SDK call's data; its refusal as this module's ApiError, in the page's words as call()'s
 * are (no answer at all is "offline", never "TypeError: Failed to fetch"). */
async function typed<T>(result: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let answer: { data?: T; error?: unknown; response: Response };
  try {
    answer = await result;
  } catch {
    throw new ApiError(0, "offline", refusal("offline", ""));
  }
  try {
    return ok(answer);
  } catch (e) {
    throw e instanceof SdkError ? new ApiError(e.status, e.code, refusal(e.code, e.reason)) : e;
  }
}

/** A single-use ticket that opens one socket as the stored player (null without one): the
 * socket's URL then carries no long-lived secret. */
export async function socketTicket(): Promise<string | null> {
  if (!me()) return null;
  const created = await typed(sdkRest.POST("/v1/ws-tickets"));
  return created.ticket;
}

/** A player with this name: the stored one, or a new one (names never change on the server). */
export async function ensurePlayer(name: string): Promise<Me> {
  const current = me();
  if (current && current.name === name) return current;
  const created = await call<PlayerCreated>("POST", "/v1/players", { name }, false);
  const player = { id: created.id, name: created.name, token: created.token };
  saveMe(player);
  return player;
}

/** Adopt a token carried by a link (`#token=`), so another device plays as the same player. */
export async function adoptToken(token: string): Promise<Me | null> {
  const response = await fetch("/v1/players/me", { headers: { Authorization: `Bearer ${token}` } });
  if (!response.ok) return null;
  const player = (await response.json()) as PlayerOut;
  const adopted = { id: player.id, name: player.name, token };
  saveMe(adopted);
  return adopted;
}

export const api = {
  createTable: (body: TableCreate) => call<TableOut>("POST", "/v1/tables", body),
  table: (id: string): Promise<TableOut> =>
    typed(sdkRest.GET("/v1/tables/{table_id}", { params: { path: { table_id: id } } })) as Promise<TableOut>,
  /** What an invite offers (whose table, its rules and clock), before accepting it. */
  invite: (code: string) => call<InviteOut>("GET", `/v1/invites/${encodeURIComponent(code)}`),
  /** Take seat 1, only at `tableId` (the table the link named: 409 invite_mismatch otherwise). */
  join: (code: string, deck: DeckDesign, tableId: string) =>
    call<CommandOut>("POST", `/v1/invites/${encodeURIComponent(code)}`, { deck_design: deck, table_id: tableId }),
  seatBot: (id: string, level: BotLevel) => call<CommandOut>("POST", `/v1/tables/${id}/bot`, { level }),
  removeBot: (id: string) => call<CommandOut>("DELETE", `/v1/tables/${id}/bot`),
  start: (id: string) => call<CommandOut>("POST", `/v1/tables/${id}/start`, {}),
  rematch: (id: string) => call<CommandOut>("POST", `/v1/tables/${id}/rematch`, {}),
  /** Answer the rematch the other seat asked for. */
  acceptRematch: (id: string) => call<CommandOut>("POST", `/v1/tables/${id}/rematch/accept`, {}),
  declineRematch: (id: string) => call<CommandOut>("POST", `/v1/tables/${id}/rematch/decline`, {}),
  deck: (id: string, design: DeckDesign) => call<CommandOut>("PUT", `/v1/tables/${id}/deck`, { design }),
  chat: (id: string, text: string) => call<CommandOut>("POST", `/v1/tables/${id}/chat`, { text }),
  events: (id: string, since: number) =>
    call<GameEvent[]>("GET", `/v1/tables/${id}/events?since=${since}&limit=1000`),
  hand: (id: string, number: number, match: number) =>
    call<HandOut>("GET", `/v1/tables/${id}/hands/${number}?match=${match}`, undefined, false),
  matches: (limit: number) => call<MatchRecord[]>("GET", `/v1/players/me/matches?limit=${limit}`),
  /** A finished hand's review by LUNA: `status` "pending" (a 202) while it is computed. */
  review: (id: string, number: number, match: number) =>
    call<HandReview>("GET", `/v1/tables/${id}/hands/${number}/review?match=${match}`, undefined, false),
  matchReview: (id: string, match: number) =>
    call<MatchReview>("GET", `/v1/tables/${id}/matches/${match}/review`, undefined, false),
  /** What LUNA would play now for your seat (tables with hints on). */
  hint: (id: string) => call<Hint>("GET", `/v1/tables/${id}/hint`),
  stats: (playerId: string) =>
    call<Stats>("GET", `/v1/players/${encodeURIComponent(playerId)}/stats`, undefined, false),
  pushKey: () => call<PushKeyOut>("GET", "/v1/push/key", undefined, false),
  subscribePush: (body: PushSubscriptionIn) =>
    call<PushSubscriptionOut>("POST", "/v1/players/me/push-subscriptions", body),
  unsubscribePush: (id: string) =>
    call<PushSubscriptionOut[]>("DELETE", `/v1/players/me/push-subscriptions/${encodeURIComponent(id)}`),
  /** One move: the path of its route and its body. */
  move: (id: string, path: string, body: Record<string, unknown> = {}) =>
    call<CommandOut>("POST", `/v1/tables/${id}/${path}`, body),
};

/** The tables this browser has sat at or watched, newest first (the API keeps no such list). */
export function rememberedTables(): string[] {
  try {
    return JSON.parse(localStorage.getItem(TABLES_KEY) ?? "[]") as string[];
  } catch {
    return [];
  }
}

export function rememberTable(id: string): void {
  const ids = [id, ...rememberedTables().filter((t) => t !== id)].slice(0, 20);
  localStorage.setItem(TABLES_KEY, JSON.stringify(ids));
}

export function wsUrl(path: string): string {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  return `${proto}//${location.host}${path}`;
}

/** The lobby: seeks, the open ones, challenges, a bot offered (docs/lobby.md). */
export const lobbyApi = {
  seek: (body: SeekCreate) => call<SeekOut>("POST", "/v1/seeks", body),
  seeks: () => call<SeekOut[]>("GET", "/v1/seeks", undefined, false),
  mine: () => call<SeekOut[]>("GET", "/v1/players/me/seeks"),
  get: (id: string) => call<SeekOut>("GET", `/v1/seeks/${encodeURIComponent(id)}`, undefined, false),
  cancel: (id: string) => call<SeekOut>("DELETE", `/v1/seeks/${encodeURIComponent(id)}`),
  accept: (id: string) => call<SeekOut>("POST", `/v1/seeks/${encodeURIComponent(id)}/accept`),
  takeBot: (id: string, level: BotLevel) =>
    call<SeekOut>("POST", `/v1/seeks/${encodeURIComponent(id)}/bot`, { level }),
  challenge: (body: ChallengeCreate) => call<SeekOut>("POST", "/v1/challenges", body),
  challengeOf: (id: string) =>
    call<SeekOut>("GET", `/v1/challenges/${encodeURIComponent(id)}`, undefined, false),
  acceptChallenge: (id: string) =>
    call<SeekOut>("POST", `/v1/challenges/${encodeURIComponent(id)}/accept`),
  declineChallenge: (id: string, reason: DeclineReason) =>
    call<SeekOut>("POST", `/v1/challenges/${encodeURIComponent(id)}/decline`, { reason }),
  withdraw: (id: string) => call<SeekOut>("DELETE", `/v1/challenges/${encodeURIComponent(id)}`),
};
