// The lobby's live state: the open seeks (GET /v1/seeks, then the lobby socket's seek_added /
// seek_removed), and this player's news on the same socket (seek_paired opens the table).
import { lobbyApi, me, socketTicket, wsUrl } from "../api";
import type { SeekOut } from "../types";

export type LobbyNews =
  | { type: "seek_paired"; table_id: string; seek: SeekOut }
  | { type: "seek_closed"; seek_id: string; status: string; reason: string | null }
  | { type: "bot_offered"; seek_id: string; suggested: string }
  | ({ type: "challenge_received" } & SeekOut);

export class LobbyLive {
  seeks: SeekOut[] = [];
  online = false;
  private socket: WebSocket | null = null;
  private closed = false;
  private retry = 0;
  private timer: number | undefined;
  private listeners = new Set<() => void>();
  onNews: ((news: LobbyNews) => void) | null = null;

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const listener of this.listeners) listener();
  }

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.closed = true;
    window.clearTimeout(this.timer);
    this.socket?.close();
  }

  /** Open the socket again as the player now stored (after they chose a name). */
  reconnect(): void {
    const old = this.socket;
    this.socket = null;
    old?.close();
    void this.connect();
  }

  private async connect(): Promise<void> {
    const query = new URLSearchParams();
    try {
      const ticket = me() ? await socketTicket() : null;
      if (ticket) query.set("ticket", ticket);
    } catch {
      this.later();
      return;
    }
    if (this.closed) return;
    const socket = new WebSocket(wsUrl(`/v1/lobby/ws?${query}`));
    this.socket = socket;
    socket.onopen = () => {
      this.retry = 0;
      this.online = true;
      // Subscribed first, then the list: nothing falls between the two.
      void lobbyApi.seeks().then((seeks) => {
        this.seeks = seeks;
        this.emit();
      });
    };
    socket.onmessage = (message) => this.receive(JSON.parse(String(message.data)) as { type: string });
    socket.onclose = () => {
      if (this.socket !== socket || this.closed) return;
      this.socket = null;
      this.online = false;
      this.emit();
      this.later();
    };
  }

  private later(): void {
    this.retry = Math.min(this.retry + 1, 6);
    this.timer = window.setTimeout(() => void this.connect(), 250 * 2 ** this.retry);
  }

  private receive(message: { type: string }): void {
    if (message.type === "seek_added") {
      const seek = (message as unknown as { seek: SeekOut }).seek;
      this.seeks = [...this.seeks.filter((s) => s.seek_id !== seek.seek_id), seek];
    } else if (message.type === "seek_removed") {
      const id = (message as unknown as { seek_id: string }).seek_id;
      this.seeks = this.seeks.filter((s) => s.seek_id !== id);
    } else if (["seek_paired", "seek_closed", "bot_offered", "challenge_received"].includes(message.type)) {
      this.onNews?.(message as LobbyNews);
    } else {
      return;
    }
    this.emit();
  }
}
