// Each seat's review summary (accuracy, points lost, marks), and the result board's way in.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import { t } from "../i18n";
import { navigate } from "../router";
import type { HandReview, MatchReview, SeatSummary } from "../types";
import "./replay.css";

export function replayPath(tableId: string, match: number, hand: number): string {
  return `/t/${tableId}/replay/${match}/${hand}`;
}

/** The review of a hand, asked again while LUNA computes it (202 pending). */
export function useReview(tableId: string, match: number, hand: number): HandReview | null {
  const [review, setReview] = useState<HandReview | null>(null);
  useEffect(() => {
    let live = true;
    let timer = 0;
    const ask = () =>
      api.review(tableId, hand, match).then(
        (r) => {
          if (!live) return;
          setReview(r);
          if (r.status === "pending") timer = window.setTimeout(ask, 2000);
        },
        (e: unknown) => {
          // A full queue (429) is asked again later; anything else ends the asking.
          if (live && e instanceof ApiError && e.status === 429) timer = window.setTimeout(ask, 5000);
        },
      );
    void ask();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [tableId, match, hand]);
  return review;
}

export function SeatSummaries({ seats, names }: { seats: SeatSummary[]; names: string[] }) {
  return (
    <table class="review-summary">
      <thead>
        <tr>
          <th scope="col" />
          <th scope="col">{t("accuracy")}</th>
          <th scope="col">{t("pointsLost")}</th>
          <th scope="col">{t("marks")}</th>
        </tr>
      </thead>
      <tbody>
        {seats.map((s) => (
          <tr key={s.seat} data-seat={s.seat}>
            <th scope="row" class="name" title={names[s.seat]}>
              {names[s.seat]}
            </th>
            <td data-accuracy>{s.accuracy === null ? "—" : `${s.accuracy}%`}</td>
            <td>{s.points_lost}</td>
            <td class="marks">
              {s.inaccuracies > 0 && <span class="mark inaccuracy" title={t("mark_inaccuracy")}>?! {s.inaccuracies}</span>}
              {s.mistakes > 0 && <span class="mark mistake" title={t("mark_mistake")}>? {s.mistakes}</span>}
              {s.blunders > 0 && <span class="mark blunder" title={t("mark_blunder")}>?? {s.blunders}</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A match's review, asked again while some of its hands are being reviewed. */
function useMatchReview(tableId: string, match: number, on: boolean): MatchReview | null {
  const [review, setReview] = useState<MatchReview | null>(null);
  useEffect(() => {
    if (!on) return;
    let live = true;
    let timer = 0;
    const ask = () =>
      api.matchReview(tableId, match).then(
        (r) => {
          if (!live) return;
          setReview(r);
          if (r.status === "pending") timer = window.setTimeout(ask, 3000);
        },
        () => undefined,
      );
    void ask();
    return () => {
      live = false;
      window.clearTimeout(timer);
    };
  }, [tableId, match, on]);
  return review;
}

/** On the result board: the seats' summary once reviewed, and "Rever a mão"; once the match
 * is over, the seats' summary over its hands too. */
export function ReviewPanel(props: { tableId: string; match: number; hand: number; names: string[]; finished?: boolean }) {
  const { tableId, match, hand, names, finished = false } = props;
  const review = useReview(tableId, match, hand);
  const whole = useMatchReview(tableId, match, finished);
  const hands = whole?.hands.filter((h) => h.status === "done").length ?? 0;
  return (
    <section class="review-panel" aria-label={t("reviewBy")}>
      {review?.status === "done" ? (
        <SeatSummaries seats={review.seats} names={names} />
      ) : (
        <p class="muted">{t("reviewPending")}</p>
      )}
      {whole && hands > 1 && (
        <div class="match-review" data-hands={hands}>
          <p class="caption">{t("matchReview", { n: hands, of: whole.hands.length })}</p>
          <SeatSummaries seats={whole.seats} names={names} />
        </div>
      )}
      <a
        class="button-link review-open"
        href={replayPath(tableId, match, hand)}
        onClick={(e) => {
          e.preventDefault();
          navigate(replayPath(tableId, match, hand));
        }}
      >
        {t("reviewHand")}
      </a>
    </section>
  );
}
