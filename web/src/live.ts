// A table's live state: the view (server-sent, never computed here), the log it has seen, and
// its WebSocket: the SDK's TableSocket (clients/typescript), which opens with a ticket, resumes
// with `since` after a drop so no event is missed or repeated, and backs off between tries.
import { SocketRefused, TableSocket } from "@ginrummy/client";
import { api, ApiError, me, sdkRest } from "./api";
import { refusal } from "./refusals";
import type { EventMessage, ViewMessage } from "@ginrummy/client/generated/ws";
import type { CommandOut, GameEvent, ServerMessage, TableOut } from "./types";

export type Connection = "connecting" | "online" | "offline";
const LOG_LIMIT = 300;

export class TableLive {
  view: TableOut | null = null;
  log: GameEvent[] = [];
  connection: Connection = "connecting";
  error: string | null = null;
  busy = false;
  private socket: TableSocket | null = null;
  private closed = false;
  private refreshing = false;
  private refreshAgain = false;
  private listeners = new Set<() => void>();
  onYourTurn: (() => void) | null = null;
  onEvent: ((event: GameEvent) => void) | null = null;

  constructor(readonly tableId: string) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  start(): void {
    this.connect();
    // The view over HTTP at the same time: whichever answers first is drawn first.
    void this.refresh();
  }

  stop(): void {
    this.closed = true;
    this.socket?.close();
  }

  private connect(): void {
    if (this.closed || this.socket) return;
    // A seat's socket (by ticket) once this browser has a player; a spectator's before.
    const socket = new TableSocket({ baseUrl: "", rest: sdkRest, authenticate: () => me() !== null }, this.tableId);
    this.socket = socket;
    socket.onState((state) => {
      const connection: Connection = state === "open" ? "online" : state === "connecting" ? this.connection : "offline";
      if (connection === this.connection) return;
      this.connection = connection;
      this.emit();
    });
    socket.onMessage((message) => this.receive(message as ServerMessage));
    socket.onEnd((error) => {
      if (error instanceof SocketRefused && error.closeCode === 4404) {
        this.error = "table_not_found";
        this.emit();
      }
    });
    socket.start();
  }

  private receive(message: ServerMessage): void {
    switch (message.type) {
      case "view": {
        const m = message as ViewMessage;
        this.accept(m.table as TableOut, true);
        if (this.log.length === 0) void this.loadHistory(m.seq);
        break;
      }
      case "event": {
        const m = message as EventMessage;
        const event = { ...(m.event as GameEvent), seq: m.seq };
        this.record([event]);
        this.onEvent?.(event);
        if (event.type !== "chat" && (!this.view || m.seq > this.view.seq)) void this.refresh();
        break;
      }
      case "skip":
        if (this.view && (message.seq ?? 0) > this.view.seq) void this.refresh();
        break;
      case "your_turn":
        this.onYourTurn?.();
        break;
      default:
        // heartbeat, pong, and any message type a newer server adds: nothing to do.
        break;
    }
  }

  /** Keep the newest game state: a view replaces ours unless its version is older. */
  accept(view: TableOut, force = false): void {
    if (force || !this.view || view.version >= this.view.version) {
      if (this.view && !force && view.version === this.view.version && view.seq < this.view.seq) {
        return;
      }
      this.view = view;
      this.emit();
    }
  }

  private record(events: GameEvent[]): void {
    const seen = new Set(this.log.map((e) => e.seq));
    const fresh = events.filter((e) => e.seq === undefined || !seen.has(e.seq));
    if (!fresh.length) return;
    this.log = [...this.log, ...fresh].sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0)).slice(-LOG_LIMIT);
    this.emit();
  }

  /** What was said before this page opened (chat lines and the last moves). */
  private async loadHistory(upTo: number): Promise<void> {
    let since = Math.max(0, upTo - 2000);
    try {
      for (;;) {
        const page = await api.events(this.tableId, since);
        this.record(page.filter((e) => (e.seq ?? 0) <= upTo));
        if (page.length < 1000) break;
        since = page[page.length - 1].seq ?? upTo;
      }
    } catch {
      // The history is a courtesy: the live stream goes on without it.
    }
  }

  async refresh(): Promise<void> {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = true;
    try {
      do {
        this.refreshAgain = false;
        this.accept(await api.table(this.tableId));
      } while (this.refreshAgain);
    } catch (err) {
      this.fail(err);
    } finally {
      this.refreshing = false;
    }
  }

  /** Run a command; its response is this table's newest view, rendered at once. */
  async command(run: () => Promise<CommandOut>): Promise<boolean> {
    if (this.busy) return false;
    if (this.connection === "offline") {
      // The page shows why its buttons are disabled; a key pressed meanwhile is told the same.
      this.error = refusal("offline", "");
      this.emit();
      return false;
    }
    this.busy = true;
    this.error = null;
    try {
      const out = await run();
      this.accept(out.table);
      this.record(out.events.filter((e) => e.type === "chat"));
      return true;
    } catch (err) {
      this.fail(err);
      void this.refresh();
      return false;
    } finally {
      this.busy = false;
      this.emit();
    }
  }

  fail(err: unknown): void {
    this.error = err instanceof ApiError ? err.message : String(err);
    this.emit();
  }
}
