// Each entrant's points over the rounds (an arena: over its matches), as lines: one picture of
// who led when. Your line is drawn thicker; the same figures are in the standings table.
import { t } from "../i18n";
import type { Standing } from "./data";

const COLOURS = ["#ffd166", "#06d6a0", "#ef476f", "#118ab2", "#f78c6b", "#c3a6ff", "#9ef01a", "#f4f1e8"];
const H = 260;
const PAD = { left: 36, right: 120, top: 14, bottom: 40 };
const LABEL_GAP = 14;

export function ScoreChart({ standings, mine, arena }: { standings: Standing[]; mine: string | null; arena: boolean }) {
  // A narrow drawing on a phone, so that its text keeps a readable size when scaled to fit.
  const W = window.innerWidth < 600 ? 360 : 640;
  const shown = standings.slice(0, COLOURS.length);
  const steps = Math.max(1, ...shown.map((s) => s.progress.length));
  const top = Math.max(1, ...shown.map((s) => Math.max(0, ...s.progress)));
  const x = (i: number) => PAD.left + (i / steps) * (W - PAD.left - PAD.right);
  const y = (v: number) => H - PAD.bottom - (v / top) * (H - PAD.top - PAD.bottom);
  const label = arena ? t("tourMatches") : t("tourRounds");
  // Lines of equal points would hide each other: each is nudged a little; the names at the
  // right end are spread so that none covers another.
  const nudge = (k: number) => (k - (shown.length - 1) / 2) * 2;
  const ends = shown.map((s, k) => ({ k, y: y(s.progress[s.progress.length - 1] ?? 0) + nudge(k) }));
  ends.sort((a, b) => a.y - b.y);
  const labelY = new Map<number, number>();
  let previous = -Infinity;
  for (const end of ends) {
    const at = Math.max(end.y, previous + LABEL_GAP);
    labelY.set(end.k, at);
    previous = at;
  }
  return (
    <figure class="tour-chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={t("tourChart")}>
        <line x1={PAD.left} y1={y(0)} x2={W - PAD.right} y2={y(0)} class="axis" />
        <line x1={PAD.left} y1={y(0)} x2={PAD.left} y2={PAD.top} class="axis" />
        <text x={PAD.left - 6} y={y(top) + 4} text-anchor="end" class="tick">{top}</text>
        <text x={PAD.left - 6} y={y(0) + 4} text-anchor="end" class="tick">0</text>
        <text x={(PAD.left + W - PAD.right) / 2} y={H - 4} text-anchor="middle" class="tick">{label}</text>
        {Array.from({ length: steps }, (_, i) => (
          <text key={i} x={x(i + 1)} y={y(0) + 14} text-anchor="middle" class="tick">{i + 1}</text>
        ))}
        {shown.map((s, k) => {
          const points = [[x(0), y(0)], ...s.progress.map((v, i) => [x(i + 1), y(v) + nudge(k)])];
          const path = points.map(([px, py], i) => `${i ? "L" : "M"}${px.toFixed(1)},${py.toFixed(1)}`).join(" ");
          const last = points[points.length - 1];
          const you = s.entrant_id === mine;
          return (
            <g key={s.entrant_id} class={you ? "line you" : "line"}>
              <path d={path} stroke={COLOURS[k]} fill="none" stroke-width={you ? 4 : 2} />
              <text x={last[0] + 6} y={(labelY.get(k) ?? last[1]) + 4} fill={COLOURS[k]} class="name">
                {s.name} ({s.score})
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>{t("tourChart")}</figcaption>
    </figure>
  );
}
