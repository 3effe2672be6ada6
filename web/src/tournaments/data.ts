// Tournaments over the HTTP API (docs/tournaments.md): the list, one tournament, join/withdraw.
import type { components } from "@ginrummy/client/generated/api";
import { ApiError, ensurePlayer, me } from "../api";

type S = components["schemas"];
export type Tournament = S["TournamentOut"];
export type Summary = S["TournamentSummaryOut"];
export type Standing = S["StandingOut"];
export type Pairing = S["PairingOut"];
export type Status = Summary["status"];

async function call<T>(method: string, path: string): Promise<T> {
  const player = me();
  const headers: Record<string, string> = player ? { Authorization: `Bearer ${player.token}` } : {};
  const response = await fetch(path, { method, headers });
  const data: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const err = (data ?? {}) as { code?: string; message?: string };
    throw new ApiError(response.status, err.code ?? `http_${response.status}`, err.message ?? "");
  }
  return data as T;
}

export async function listTournaments(status: Status): Promise<Summary[]> {
  const page = await call<S["TournamentListOut"]>("GET", `/v1/tournaments?status=${status}&limit=50`);
  return page.tournaments;
}

export function tournament(id: string): Promise<Tournament> {
  return call<Tournament>("GET", `/v1/tournaments/${id}`);
}

/** Join as the stored player (a new one named ``name`` when there is none), or withdraw. */
export async function enter(id: string, join: boolean, name: string): Promise<Tournament> {
  if (join && !me()) await ensurePlayer(name);
  return call<Tournament>("POST", `/v1/tournaments/${id}/${join ? "join" : "withdraw"}`);
}

/** The seconds until ``iso`` from the server's clock of ``serverTime`` (the view's time). */
export function secondsUntil(iso: string | null, serverTime: string, since: number): number | null {
  if (!iso) return null;
  const ahead = (Date.parse(iso) - Date.parse(serverTime)) / 1000 - (Date.now() - since) / 1000;
  return Math.max(0, Math.round(ahead));
}

export function clockText(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const two = (n: number) => String(n).padStart(2, "0");
  return h ? `${h}:${two(m)}:${two(s)}` : `${m}:${two(s)}`;
}
