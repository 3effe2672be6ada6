// A seat as the table names it: its player, its bot, or a dash while empty.
import type { TableOut } from "../types";

export function nameOf(view: TableOut, seat: number | null | undefined): string {
  if (seat === null || seat === undefined) return "?";
  const s = view.seats[seat];
  return s?.player?.name ?? s?.bot_name ?? "—";
}
