// `your_turn` from the player's socket (all their tables): a browser notification and the tab
// title while the tab is in the background.
import { ApiError, me, socketTicket, wsUrl } from "./api";
import { t } from "./i18n";
import { beep } from "./prefs";

const TITLE = "Gin Rummy";
let socket: WebSocket | null = null;
let listening: string | null = null;
let opening = false; // a ticket is being fetched for ``listening``
let retry = 0;

export function askPermission(): void {
  if ("Notification" in window && Notification.permission === "default") {
    void Notification.requestPermission();
  }
}

export function yourTurn(tableId: string): void {
  beep(880);
  if (!document.hidden) return;
  document.title = `● ${t("yourTurn")} — ${TITLE}`;
  if ("Notification" in window && Notification.permission === "granted") {
    const player = me();
    const note = new Notification(t("notify", { name: player?.name ?? "" }), { tag: tableId });
    note.onclick = () => {
      window.focus();
      if (!location.pathname.endsWith(tableId)) location.assign(`/t/${tableId}`);
    };
  }
}

document.addEventListener("visibilitychange", () => {
  if (!document.hidden) document.title = TITLE;
});

/** Listen on /v1/players/me/ws while a player is known; reconnects on its own. */
export function listen(): void {
  const player = me();
  if (!player || ((socket || opening) && listening === player.token)) return;
  if (socket) {
    socket.onclose = null; // a new player in this browser: listen for that one instead
    socket.close();
  }
  listening = player.token;
  void open(player.token);
}

async function open(token: string): Promise<void> {
  let ticket: string | null = null;
  opening = true;
  try {
    ticket = await socketTicket();
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return; // a revoked token: stay quiet
  } finally {
    opening = false;
  }
  if (listening !== token) return; // another player meanwhile
  if (!ticket) {
    window.setTimeout(listen, Math.min(10000, 500 * 2 ** retry++));
    return;
  }
  const ws = new WebSocket(wsUrl(`/v1/players/me/ws?ticket=${encodeURIComponent(ticket)}`));
  socket = ws;
  ws.onopen = () => (retry = 0);
  ws.onmessage = (message) => {
    const data = JSON.parse(String(message.data)) as { type: string; table_id?: string };
    // A table's own page hears its turn on the table's socket; this covers the other tables.
    if (data.type === "your_turn" && data.table_id && !location.pathname.endsWith(data.table_id)) {
      yourTurn(data.table_id);
    }
  };
  ws.onclose = (close) => {
    if (socket !== ws) return;
    socket = null;
    if (close.code === 4401) return;
    window.setTimeout(listen, Math.min(10000, 500 * 2 ** retry++));
  };
}
