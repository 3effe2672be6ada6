// Web Push: the service worker (src/sw, served at /sw.js) and "Notify me when it's my turn":
// Notification permission, PushManager.subscribe with the server's VAPID key, then the
// subscription POSTed to the server, which pushes `your_turn` and the rest to it even when no
// tab of the client is open. A server without a VAPID key says `enabled: false` (no error
// status, so no console error at each load): the control is not offered there.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, me } from "./api";
import { shareLang, t } from "./i18n";

export type PushState = "unsupported" | "disabled" | "denied" | "off" | "on";

const STORED = "ginrummy.push"; // {player, id}: this browser's subscription at the server

interface Stored {
  player: string;
  id: string;
}

function stored(): Stored | null {
  try {
    return JSON.parse(localStorage.getItem(STORED) ?? "null") as Stored | null;
  } catch {
    return null;
  }
}

function supported(): boolean {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

/** Register the service worker (at boot: it also shows pushes for a subscription made before). */
export function registerWorker(): Promise<ServiceWorkerRegistration> | null {
  if (!("serviceWorker" in navigator)) return null;
  shareLang();
  const script = import.meta.env.DEV ? "/src/sw/sw.ts" : "/sw.js";
  const registering = navigator.serviceWorker.register(script, {
    scope: "/",
    type: import.meta.env.DEV ? "module" : "classic",
  });
  registering.catch(() => undefined);
  return registering;
}

function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
  const raw = atob(base64 + "=".repeat((4 - (base64.length % 4)) % 4));
  const bytes = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

function sameKey(subscription: PushSubscription, key: Uint8Array): boolean {
  const current = subscription.options.applicationServerKey;
  if (!current) return false;
  const bytes = new Uint8Array(current);
  return bytes.length === key.length && bytes.every((b, i) => b === key[i]);
}

async function serverKey(): Promise<string | null> {
  try {
    return (await api.pushKey()).public_key ?? null;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

export async function pushState(): Promise<PushState> {
  if (!supported()) return "unsupported";
  if ((await serverKey()) === null) return "disabled";
  if (Notification.permission === "denied") return "denied";
  const registration = await navigator.serviceWorker.getRegistration("/");
  const subscription = await registration?.pushManager.getSubscription();
  const mine = stored();
  return subscription && mine && mine.player === me()?.id ? "on" : "off";
}

/** Ask for permission, subscribe this browser and hand the subscription to the server. */
export async function enablePush(): Promise<void> {
  const player = me();
  if (!player) throw new Error("no player");
  if ((await Notification.requestPermission()) !== "granted") throw new Error("denied");
  const key = await serverKey();
  if (key === null) throw new Error("push_disabled");
  await registerWorker();
  const registration = await navigator.serviceWorker.ready;
  const bytes = keyBytes(key);
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameKey(subscription, bytes)) {
    await subscription.unsubscribe(); // made with another server key: useless now
    subscription = null;
  }
  subscription ??= await registration.pushManager.subscribe({
    userVisibleOnly: true,
    applicationServerKey: bytes,
  });
  const json = subscription.toJSON();
  const created = await api.subscribePush({
    endpoint: json.endpoint ?? subscription.endpoint,
    expirationTime: json.expirationTime ?? null,
    keys: { p256dh: json.keys?.p256dh ?? "", auth: json.keys?.auth ?? "" },
  });
  localStorage.setItem(STORED, JSON.stringify({ player: player.id, id: created.id } satisfies Stored));
}

/** Forget this browser at the server and at its push service. */
export async function disablePush(): Promise<void> {
  const mine = stored();
  if (mine && mine.player === me()?.id) {
    try {
      await api.unsubscribePush(mine.id);
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 404)) throw err;
    }
  }
  localStorage.removeItem(STORED);
  const registration = await navigator.serviceWorker.getRegistration("/");
  await (await registration?.pushManager.getSubscription())?.unsubscribe();
}

/** The control: "Notify me when it's my turn", or its state and "Stop". Nothing where the
 * browser or the server has no push; `fallback` then (the in-tab alerts' permission). */
export function PushToggle({ fallback }: { fallback?: ComponentChildren }) {
  const [state, setState] = useState<PushState | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void pushState().then(setState, () => setState("unsupported"));
  }, []);
  if (state === null) return null;
  if (state === "unsupported" || state === "disabled") return <>{fallback}</>;
  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(t("pushFailed", { reason: err instanceof Error ? err.message : String(err) }));
    }
    setState(await pushState().catch((): PushState => "off"));
    setBusy(false);
  };
  return (
    <div class="push" role="group" aria-label={t("notifications")}>
      {state === "denied" && <p class="hint">{t("pushBlocked")}</p>}
      {state === "off" && (
        <button type="button" class="push-on" disabled={busy} onClick={() => void run(enablePush)}>
          {t("pushOn")}
        </button>
      )}
      {state === "on" && (
        <>
          <p class="hint" role="status">
            {t("pushActive")}
          </p>
          <button type="button" class="push-off link" disabled={busy} onClick={() => void run(disablePush)}>
            {t("pushOff")}
          </button>
        </>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
