// Small charts drawn as SVG and CSS: a rating line, won-of-played bars, share bars.
import { t } from "../i18n";

export interface Point {
  at: string;
  rating: number;
}

/** The rating after each rated match, oldest first, as a line with its lowest and highest. */
export function RatingLine({ points, label }: { points: Point[]; label: string }) {
  const w = 320;
  const h = 120;
  const pad = 8;
  const values = points.map((p) => p.rating);
  const low = Math.min(...values, 1500) - 10;
  const high = Math.max(...values, 1500) + 10;
  const x = (i: number) => pad + (points.length < 2 ? (w - 2 * pad) / 2 : (i * (w - 2 * pad)) / (points.length - 1));
  const y = (v: number) => h - pad - ((v - low) * (h - 2 * pad)) / (high - low);
  const line = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ");
  const last = points[points.length - 1];
  return (
    <figure class="chart rating-line">
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-label={`${label}: ${values.map((v) => Math.round(v)).join(", ")}`}>
        <line x1={pad} x2={w - pad} y1={y(1500)} y2={y(1500)} class="base" />
        <path d={line} class="line" />
        {points.map((p, i) => (
          <circle key={i} cx={x(i)} cy={y(p.rating)} r={3} class="dot" />
        ))}
      </svg>
      <figcaption>
        {t("ratingNow")}: <b data-rating>{Math.round(last.rating)}</b> ({Math.round(Math.min(...values))}–{Math.round(Math.max(...values))})
      </figcaption>
    </figure>
  );
}

/** One row per group: won of played, as a bar. */
export function WonBars({ title, rows }: { title: string; rows: { label: string; won: number; played: number }[] }) {
  return (
    <figure class="chart bars">
      <figcaption>{title}</figcaption>
      {rows.map((r) => (
        <div class="bar-row" key={r.label} data-group={r.label}>
          <span class="bar-label">{r.label}</span>
          <span class="bar" aria-hidden="true">
            <span class="fill" style={{ width: r.played ? `${(100 * r.won) / r.played}%` : "0" }} />
          </span>
          <span class="bar-value">{t("wonOf", { won: r.won, played: r.played })}</span>
        </div>
      ))}
    </figure>
  );
}

/** One row per share (0..1, or null before any), as a bar with its percent. */
export function ShareBars({ title, rows }: { title: string; rows: { label: string; share: number | null }[] }) {
  return (
    <figure class="chart bars">
      <figcaption>{title}</figcaption>
      {rows.map((r) => (
        <div class="bar-row" key={r.label}>
          <span class="bar-label">{r.label}</span>
          <span class="bar" aria-hidden="true">
            <span class="fill share" style={{ width: `${100 * (r.share ?? 0)}%` }} />
          </span>
          <span class="bar-value">{r.share === null ? "—" : `${Math.round(100 * r.share)}%`}</span>
        </div>
      ))}
    </figure>
  );
}
