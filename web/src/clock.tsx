// A clocked table's time (docs/clocks.md): each seat's time left, counted down from the server's
// own times (`deadline - server_time` when the view arrived), never from this device's clock.
import { useEffect, useMemo, useState } from "preact/hooks";
import { t } from "./i18n";
import type { Clock, TableOut } from "./types";

export function clockOf(view: TableOut): Clock | null {
  return view.clock.control === "none" ? null : view.clock;
}

/** "2 d 4 h", "3 h 05 min", "4:07", "0:09": as precise as the time left needs. */
export function formatSeconds(total: number): string {
  const s = Math.max(0, Math.floor(total));
  const days = Math.floor(s / 86400);
  const hours = Math.floor((s % 86400) / 3600);
  const minutes = Math.floor((s % 3600) / 60);
  const seconds = s % 60;
  if (days > 0) return t("clockDays", { d: days, h: hours });
  if (hours > 0) return t("clockHours", { h: hours, m: String(minutes).padStart(2, "0") });
  return `${minutes}:${String(seconds).padStart(2, "0")}`;
}

/** Each seat's seconds left now: the running seat's counts down from when the view arrived. */
function useRemaining(clock: Clock | null): number[] | null {
  const arrived = useMemo(() => performance.now(), [clock]);
  const [now, setNow] = useState(arrived);
  const running = clock?.running ?? null;
  useEffect(() => {
    if (running === null) return;
    const timer = window.setInterval(() => setNow(performance.now()), 500);
    return () => window.clearInterval(timer);
  }, [clock, running]);
  if (!clock) return null;
  const left = [...clock.remaining];
  if (running !== null && clock.deadline) {
    const atView = (Date.parse(clock.deadline) - Date.parse(clock.server_time)) / 1000;
    left[running] = Math.max(0, atView - (Math.max(now, arrived) - arrived) / 1000);
  }
  return left;
}

/** One seat's time, shown beside its name; `low` under a tenth of the allowance. */
export function SeatClock({ view, seat }: { view: TableOut; seat: number }) {
  const clock = clockOf(view);
  const left = useRemaining(clock);
  if (!clock || !left) return null;
  const value = left[seat] ?? 0;
  const running = clock.running === seat;
  const low = running && value < Math.min(clock.seconds, clock.cap) / 10;
  const label = t("clockLeft", { time: formatSeconds(value) });
  return (
    <span
      class={`clock${running ? " running" : ""}${low ? " low" : ""}${clock.expired === seat ? " expired" : ""}`}
      data-clock={seat}
      role="timer"
      aria-label={label}
      title={label}
    >
      <svg class="clock-icon" viewBox="0 0 16 16" width="12" height="12" aria-hidden="true">
        <circle cx="8" cy="8" r="6.5" fill="none" stroke="currentColor" stroke-width="1.6" />
        <path d="M8 4.5V8l2.5 1.5" fill="none" stroke="currentColor" stroke-width="1.6" stroke-linecap="round" />
      </svg>{" "}
      {formatSeconds(value)}
    </span>
  );
}

/** What the clock says beside the game: a time that ran out, a bot playing for someone. */
export function clockNotice(view: TableOut, nameOf: (seat: number) => string): string | null {
  const clock = clockOf(view);
  if (!clock) return null;
  if (clock.autoplay !== null) return t("clockAutoplay", { name: nameOf(clock.autoplay) });
  if (clock.expired !== null) {
    // Once the match is lost on time it is a fact: no "move now" for the one who lost.
    const over = view.game?.match.status === "finished";
    return clock.expired === view.you && !over
      ? t("clockYouExpired")
      : t("clockExpired", { name: nameOf(clock.expired) });
  }
  return null;
}

/** The waiting seat may claim the match once the opponent's time ran out at a `claim` table. */
export function canClaim(view: TableOut): boolean {
  const clock = clockOf(view);
  return !!clock && clock.policy === "claim" && view.you !== null && clock.expired === 1 - view.you;
}

/** The time controls the start page offers (any other is the API's: docs/clocks.md). */
export const TIME_CHOICES = {
  none: null,
  live: { control: "per_move", seconds: 60, policy: "claim" },
  day: { control: "per_move", seconds: 86400, policy: "claim" },
  days3: { control: "per_move", seconds: 3 * 86400, policy: "claim" },
  bank: { control: "bank", seconds: 600, bonus: 10, cap: 600, policy: "claim" },
} as const;
export type TimeChoice = keyof typeof TIME_CHOICES;
