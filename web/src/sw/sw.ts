// The service worker (built to /sw.js, scope /): shows a Web Push notification while no tab of
// the client is in front, and a click on it focuses the table's tab or opens it.
// Payload: {"kind": "your_turn" | "opponent_joined" | "match_finished" | "time_running_out" |
// "rematch_offered",
// "table_id": "...", ...}, encrypted by the server (app/service/delivery/webpush.py).
export {};
declare const self: ServiceWorkerGlobalScope;

type Lang = "pt" | "en";
// What the server pushes: the notification's kind and its data (docs/notifications.md).
interface Notice {
  kind?: string;
  table_id?: string;
  player?: { name?: string };
  count?: number;
}

const TEXT: Record<Lang, Record<string, string>> = {
  pt: {
    your_turn: "Sua vez na mesa {table}",
    opponent_joined: "{name} sentou na sua mesa {table}",
    match_finished: "A partida da mesa {table} terminou",
    time_running_out: "Seu tempo está acabando na mesa {table}",
    rematch_offered: "{name} quer revanche na mesa {table}",
    your_turn_digest: "Sua vez em {count} mesas",
    other: "Novidade na mesa {table}",
  },
  en: {
    your_turn: "Your turn at table {table}",
    opponent_joined: "{name} sat down at your table {table}",
    match_finished: "The match at table {table} is over",
    time_running_out: "Your time is running out at table {table}",
    rematch_offered: "{name} wants a rematch at table {table}",
    your_turn_digest: "Your turn at {count} tables",
    other: "News at table {table}",
  },
};

/** The language the page chose (it keeps it in the Cache API, which both can read). */
async function language(): Promise<Lang> {
  try {
    const stored = await (await caches.open("ginrummy-prefs")).match("/lang");
    const value = stored ? await stored.text() : "";
    if (value === "pt" || value === "en") return value;
  } catch {
    // No Cache API here: the browser's language.
  }
  return (self.navigator.language || "pt").toLowerCase().startsWith("pt") ? "pt" : "en";
}

async function show(notice: Notice): Promise<void> {
  const url = new URL(notice.table_id ? `/t/${notice.table_id}` : "/", self.location.origin).href;
  const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  // The player is looking at this table already: its own socket told them.
  if (windows.some((w) => w.focused && w.url === url)) return;
  const text = TEXT[await language()];
  const vars: Record<string, string> = {
    table: (notice.table_id ?? "").slice(0, 6),
    name: notice.player?.name ?? "?",
    count: String(notice.count ?? ""),
  };
  const body = (text[notice.kind ?? ""] ?? text.other).replace(/\{(\w+)\}/g, (_, k: string) => vars[k] ?? "");
  await self.registration.showNotification("Gin Rummy", {
    body,
    tag: notice.table_id ?? notice.kind ?? "ginrummy",
    data: { url },
  });
}

self.addEventListener("install", () => {
  void self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener("push", (event) => {
  let notice: Notice = {};
  try {
    notice = (event.data?.json() ?? {}) as Notice;
  } catch {
    notice = {};
  }
  event.waitUntil(show(notice));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data as { url?: string } | null)?.url ?? self.location.origin;
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const same = windows.find((w) => w.url === url);
      if (same) {
        await same.focus();
        return;
      }
      const ours = windows[0];
      if (ours) {
        await ours.focus();
        await ours.navigate(url);
        return;
      }
      await self.clients.openWindow(url);
    })(),
  );
});
