// `your_turn` from the player's socket (all their tables): a browser notification and the tab
// title while the tab is in the background.
import { PlayerSocket } from "@ginrummy/client";
import { me, sdkRest } from "./api";
import { t } from "./i18n";
import { beep } from "./prefs";
import { backgroundTurn } from "./table/title";

let socket: PlayerSocket | null = null;
let listening: string | null = null;

export function askPermission(): void {
  if ("Notification" in window && Notification.permission === "default") {
    void Notification.requestPermission();
  }
}

export function yourTurn(tableId: string): void {
  beep(880);
  if (!document.hidden) return;
  backgroundTurn();
  if ("Notification" in window && Notification.permission === "granted") {
    const player = me();
    const note = new Notification(t("notify", { name: player?.name ?? "" }), { tag: tableId });
    note.onclick = () => {
      window.focus();
      if (!location.pathname.endsWith(tableId)) location.assign(`/t/${tableId}`);
    };
  }
}

/** Listen on /v1/players/me/ws while a player is known: the SDK's PlayerSocket, which opens
 * with a ticket and reconnects on its own; a revoked token (4401) ends it quietly. */
export function listen(): void {
  const player = me();
  if (!player || (socket && listening === player.token)) return;
  socket?.close(); // a new player in this browser: listen for that one instead
  listening = player.token;
  const notes = new PlayerSocket({ baseUrl: "", rest: sdkRest });
  socket = notes;
  notes.onMessage((message) => {
    // A table's own page hears its turn on the table's socket; this covers the other tables.
    if (message.type === "your_turn" && !location.pathname.endsWith(message.table_id)) {
      yourTurn(message.table_id);
    }
  });
  notes.onEnd(() => {
    if (socket === notes) socket = null;
  });
  notes.start();
}
