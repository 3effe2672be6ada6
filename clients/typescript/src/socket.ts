// Both sockets (/asyncapi.json), kept open: TableSocket (a table's stream, for a seat or a
// spectator) and PlayerSocket (a player's notifications from all their tables).
//
// Each connection opens with a fresh ticket (POST /v1/ws-tickets) when there is a token. After
// a drop (a server restart, 1006, 1011, 4008 for a slow reader) the socket reconnects after a
// backoff with jitter (longer after 4429, growing while the server stays away, so that many
// clients do not come back at once), and the table socket resumes with `since` its last seq:
// each event once, in order, none lost. A refused handshake (4400, 4401, 4403, 4404) ends it
// with a SocketRefused. The server's heartbeat needs no answer; a socket silent for `idleMs`
// reconnects.
import { ApiError, ok, type RestClient } from "./rest.js";
import type {
  AckMessage,
  Action,
  ErrorMessage,
  PlayerMessage,
  PongMessage,
  ServerMessage,
  TableMessage,
} from "./messages.js";

/** Close codes after which reconnecting cannot help. */
export const REFUSED = new Set([4400, 4401, 4403, 4404, 1008]);
export const TOO_MANY = 4429;

/** The server refused the socket: its close code and the error code that said why. */
export class SocketRefused extends Error {
  constructor(
    readonly closeCode: number,
    readonly code: string | null,
    message: string | null,
  ) {
    super(`socket refused (${closeCode}): ${code ?? ""} ${message ?? ""}`.trim());
    this.name = "SocketRefused";
  }
}

/** The socket dropped before the answer came: the move may or may not have been applied. */
export class SocketLost extends Error {
  constructor() {
    super("the socket dropped");
    this.name = "SocketLost";
  }
}

export type State = "connecting" | "open" | "waiting" | "closed";

export interface SocketOptions {
  /** The server's base URL, e.g. "http://127.0.0.1:8000" ("" in a page served by it). */
  baseUrl: string;
  rest: RestClient;
  /** Whether to open with a ticket of the REST client's token (else as a spectator); a
   * function is asked at each connection. */
  authenticate?: boolean | (() => boolean);
  /** Reconnect when nothing came for this long (60 s; several heartbeats). */
  idleMs?: number;
  /** The first wait before a reconnect, doubled each time up to maxDelayMs (100 ms, 10 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** At least this long after a 4429 (2 s, times 1 to 2). */
  crowdedMs?: number;
  /** A WebSocket constructor (the global one by default: browsers, Node 22). */
  WebSocket?: typeof WebSocket;
}

type Pending = { resolve: (m: ServerMessage) => void; reject: (e: Error) => void };

/** Waits between reconnects: full jitter over a doubling ceiling; after 4429, at least crowded. */
export function backoff(attempt: number, closeCode: number | null, o: SocketOptions): number {
  const ceiling = Math.min(o.maxDelayMs ?? 10_000, (o.baseDelayMs ?? 100) * 2 ** attempt);
  const wait = ceiling / 2 + (Math.random() * ceiling) / 2;
  if (closeCode === TOO_MANY) return Math.max(wait, (o.crowdedMs ?? 2000) * (1 + Math.random()));
  return wait;
}

abstract class Socket<M extends ServerMessage> {
  state: State = "connecting";
  /** Connections opened so far. */
  connects = 0;
  private ws: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private idle: ReturnType<typeof setTimeout> | undefined;
  private lastError: ErrorMessage | null = null;
  private pending = new Map<string, Pending>();
  private ids = 0;
  private listeners = new Set<(message: M) => void>();
  private ends = new Set<(error: Error | null) => void>();
  private states = new Set<(state: State) => void>();
  private opened: Array<() => void> = [];

  constructor(protected readonly options: SocketOptions) {}

  protected abstract path(): string;

  /** Whether to hand `message` on (false: a repeat to drop). */
  protected keep(message: M): boolean {
    void message;
    return true;
  }

  /** Listen to every message; the returned function stops listening. */
  onMessage(listener: (message: M) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called at each change of `state` (open, waiting to reconnect, ...). */
  onState(listener: (state: State) => void): () => void {
    this.states.add(listener);
    return () => this.states.delete(listener);
  }

  private set(state: State): void {
    if (this.state === state) return;
    this.state = state;
    for (const listener of this.states) listener(state);
  }

  /** Called once when the socket ends: null when closed by `close()`, else why. */
  onEnd(listener: (error: Error | null) => void): () => void {
    this.ends.add(listener);
    return () => this.ends.delete(listener);
  }

  /** Messages as an async iterator, until the socket ends (a refusal is thrown). */
  async *messages(): AsyncGenerator<M> {
    const queue: M[] = [];
    let wake: (() => void) | null = null;
    let ended: Error | null | undefined;
    const stop = this.onMessage((m) => {
      queue.push(m);
      wake?.();
    });
    const stopEnd = this.onEnd((e) => {
      ended = e;
      wake?.();
    });
    try {
      for (;;) {
        const next = queue.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        if (ended !== undefined) {
          if (ended) throw ended;
          return;
        }
        await new Promise<void>((done) => (wake = done));
        wake = null;
      }
    } finally {
      stop();
      stopEnd();
    }
  }

  start(): this {
    void this.connect();
    return this;
  }

  close(): void {
    this.finish(null);
  }

  /** Cut the connection as a network would: the socket reconnects. */
  drop(): void {
    this.ws?.close(4000, "dropped by the client");
  }

  /** Send a message, waiting for a connection while reconnecting. */
  async send(message: object): Promise<void> {
    while (this.state !== "open" || this.ws === null) {
      if (this.state === "closed") throw new SocketLost();
      await new Promise<void>((done) => this.opened.push(done));
    }
    this.ws.send(JSON.stringify(message));
  }

  /** Send with a fresh id: its answer (an `error` answering it throws ApiError, status 0). */
  async request<A extends ServerMessage>(message: object): Promise<A> {
    const id = `c${++this.ids}`;
    const answer = new Promise<ServerMessage>((resolve, reject) =>
      this.pending.set(id, { resolve, reject }),
    );
    try {
      await this.send({ ...message, id });
      const reply = await answer;
      if (reply.type === "error") throw new ApiError(0, reply.code, reply.message);
      return reply as A;
    } finally {
      this.pending.delete(id);
    }
  }

  ping(): Promise<PongMessage> {
    return this.request<PongMessage>({ type: "ping" });
  }

  private async url(): Promise<string> {
    let path = this.path();
    const authenticate = this.options.authenticate ?? true;
    if (typeof authenticate === "function" ? authenticate() : authenticate) {
      const { data, response } = await this.options.rest.POST("/v1/ws-tickets");
      if (response.status === 401) throw new SocketRefused(4401, "unauthorized", null);
      const ticket = ok({ data, response }).ticket;
      path += `${path.includes("?") ? "&" : "?"}ticket=${encodeURIComponent(ticket)}`;
    }
    const base = this.options.baseUrl || globalThis.location?.origin || "";
    return base.replace(/^http/, "ws") + path;
  }

  private async connect(): Promise<void> {
    if (this.state === "closed") return;
    this.set("connecting");
    let url: string;
    try {
      url = await this.url();
    } catch (error) {
      if (error instanceof SocketRefused) return this.finish(error);
      return this.later(null);
    }
    if ((this.state as State) === "closed") return;
    const Impl = this.options.WebSocket ?? globalThis.WebSocket;
    const ws = new Impl(url);
    this.ws = ws;
    this.lastError = null;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.set("open");
      this.connects++;
      this.watch();
      for (const done of this.opened.splice(0)) done();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.watch();
      const message = JSON.parse(String(event.data)) as M;
      if (message.type === "error") this.lastError = message as ErrorMessage;
      if (!this.answer(message) || !this.keep(message)) return;
      for (const listener of this.listeners) listener(message);
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.ws = null;
      clearTimeout(this.idle);
      for (const p of this.pending.values()) p.reject(new SocketLost());
      this.pending.clear();
      if (this.state === "closed") return;
      if (REFUSED.has(event.code)) {
        const e = this.lastError;
        return this.finish(new SocketRefused(event.code, e?.code ?? null, e?.message ?? null));
      }
      this.later(event.code);
    };
  }

  private watch(): void {
    clearTimeout(this.idle);
    const ws = this.ws;
    this.idle = setTimeout(() => ws?.close(4000, "silent"), this.options.idleMs ?? 60_000);
  }

  private later(code: number | null): void {
    this.set("waiting");
    const delay = backoff(this.attempt++, code, this.options);
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private answer(message: M): boolean {
    const id = "id" in message ? message.id : undefined;
    const pending = typeof id === "string" ? this.pending.get(id) : undefined;
    if (pending && (message.type === "ack" || message.type === "error" || message.type === "pong")) {
      pending.resolve(message);
      return message.type !== "pong";
    }
    return true;
  }

  private finish(error: Error | null): void {
    if (this.state === "closed") return;
    this.set("closed");
    clearTimeout(this.timer);
    clearTimeout(this.idle);
    const ws = this.ws;
    this.ws = null;
    ws?.close(1000);
    for (const p of this.pending.values()) p.reject(new SocketLost());
    this.pending.clear();
    for (const done of this.opened.splice(0)) done();
    for (const end of this.ends) end(error);
  }
}

/** A table's stream (/v1/tables/{id}/ws): a seat's with a token, else a spectator's. */
export class TableSocket extends Socket<TableMessage> {
  /** The newest seq received (view, event or skip): what a reconnect resumes after. */
  lastSeq: number | null;

  constructor(
    options: SocketOptions,
    readonly tableId: string,
    since: number | null = null,
  ) {
    super(options);
    this.lastSeq = since;
  }

  protected path(): string {
    const since = this.lastSeq === null ? "" : `?since=${this.lastSeq}`;
    return `/v1/tables/${encodeURIComponent(this.tableId)}/ws${since}`;
  }

  protected keep(message: TableMessage): boolean {
    if (message.type === "view") this.lastSeq = message.seq;
    else if (message.type === "event" || message.type === "skip") {
      if (this.lastSeq !== null && message.seq <= this.lastSeq) return false;
      this.lastSeq = message.seq;
    }
    return true;
  }

  /** Play an action over the socket: its ack (ApiError if refused, SocketLost if cut). */
  move(action: Action, expectedVersion?: number): Promise<AckMessage> {
    return this.request<AckMessage>({
      type: "move",
      kind: action.kind,
      card: action.card ?? null,
      ...(expectedVersion === undefined ? {} : { expected_version: expectedVersion }),
    });
  }
}

/** The player's notifications (/v1/players/me/ws): needs the REST client's token. */
export class PlayerSocket extends Socket<PlayerMessage> {
  protected path(): string {
    return "/v1/players/me/ws";
  }
}
