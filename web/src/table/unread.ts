// Which chat lines this browser has read at a table: the newest seq seen while the chat was in
// view (kept in localStorage), so the chat button counts only the others' lines after it.
import { useEffect, useState } from "preact/hooks";
import { me } from "../api";
import type { GameEvent } from "../types";

const key = (tableId: string) => `ginrummy.read.${tableId}`;
// The chat is a column beside the board unless the screen is narrow (style.css, 820px).
const NARROW = "(max-width: 820px)";

function readUpTo(tableId: string): number {
  return Number(localStorage.getItem(key(tableId)) ?? 0) || 0;
}

/** How many chat lines of the others came after the last one seen; seen = shown in the chat. */
export function useUnread(tableId: string, log: GameEvent[], chatOpen: boolean): number {
  const [read, setRead] = useState(() => readUpTo(tableId));
  const lines = log.filter((e) => e.type === "chat");
  const newest = lines.reduce((m, e) => Math.max(m, e.seq ?? 0), 0);
  const inView = chatOpen || !window.matchMedia?.(NARROW).matches;
  useEffect(() => {
    if (inView && newest > read) {
      localStorage.setItem(key(tableId), String(newest));
      setRead(newest);
    }
  });
  const mine = me()?.id;
  return inView ? 0 : lines.filter((e) => (e.seq ?? 0) > read && e.player?.id !== mine).length;
}
