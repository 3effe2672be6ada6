// A finished hand replayed move by move (the server's steps), with LUNA's review of each move:
// the table at the chosen move, the move list beside it, steps by keys and buttons.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api";
import { CardFace, CardGroup } from "../cards";
import { t, type Key } from "../i18n";
import { navigate } from "../router";
import { nameOf } from "../table/names";
import type { Decision, HandOut, HandResult, ReplayStep, TableOut } from "../types";
import { markText, optionText, sameMove, stepText } from "./moves";
import { SeatSummaries, useReview } from "./summary";
import "./replay.css";

interface Shown {
  melds: string[][];
  loose: string[];
  deadwood: number | null;
}

function handAt(out: HandOut, steps: ReplayStep[], at: number, seat: number): Shown {
  if (at === 0) {
    const h = out.dealt[seat];
    return { melds: h.melds, loose: h.deadwood_cards, deadwood: h.deadwood };
  }
  const h = steps[at - 1].hands[seat];
  return { melds: h.melds, loose: h.deadwood_cards, deadwood: h.deadwood };
}

function pileAt(out: HandOut, steps: ReplayStep[], at: number): string[] {
  return at === 0 ? [String(out.deal.upcard)] : steps[at - 1].discard_pile;
}

function stockAt(out: HandOut, steps: ReplayStep[], at: number): number {
  return at === 0 ? (out.deal.stock as string[]).length : steps[at - 1].stock_size;
}

function SeatHand({ name, shown, dealer }: { name: string; shown: Shown; dealer: boolean }) {
  return (
    <div class="replay-seat">
      <h3>
        <span class="name" title={name}>
          {name}
        </span>
        {dealer && <span class="badge">{t("dealer")}</span>}
        {shown.deadwood !== null && (
          <span class="badge">
            {t("deadwood")} {shown.deadwood}
          </span>
        )}
      </h3>
      <div class="replay-cards">
        {shown.melds.map((m, i) => (
          <span key={i} class={`meld-box meld-${i % 4}`}>
            <CardGroup cards={m} />
          </span>
        ))}
        {shown.loose.length > 0 && <CardGroup cards={shown.loose} />}
      </div>
    </div>
  );
}

/** The hand's settlement, at its last move. */
function Settled({ result, names }: { result: HandResult; names: string[] }) {
  const s = result.settlement;
  return (
    <p class="replay-result" data-outcome={result.outcome}>
      <b>{t(`outcome_${result.outcome}` as Key)}</b>
      {result.winner !== null && ` — ${t("scoresPoints", { name: names[result.winner], n: result.points })}`}
      {s && result.knocker !== null &&
        ` · ${t("deadwood")}: ${names[result.knocker]} ${s.knocker_deadwood}, ${names[1 - result.knocker]} ${s.defender_deadwood}`}
    </p>
  );
}

function DecisionPanel({ decision, name }: { decision: Decision | undefined; name: string }) {
  if (!decision) return <p class="muted">{t("reviewPending")}</p>;
  if (decision.forced) return <p class="muted">{t("reviewForced")}</p>;
  const good = sameMove(decision.chosen, decision.best);
  return (
    <div class="decision" data-mark={decision.mark ?? "none"}>
      <p>
        <b>{name}</b> · {t("reviewChosen")}: <b>{optionText(decision.chosen)}</b>
        {decision.mark && <span class={`mark ${decision.mark}`}>{markText(decision)}</span>}
      </p>
      <p data-luna>
        {t("reviewLuna")}: <b>{optionText(decision.best)}</b>
        {good ? ` (${t("reviewBest")})` : ` · ${t("reviewCost", { n: decision.cost })}`}
      </p>
      <details>
        <summary>{t("reviewOptions")}</summary>
        <ol class="options">
          {decision.options.map((o) => (
            <li key={`${o.kind}${o.card ?? ""}`} class={sameMove(o, decision.chosen) ? "chosen" : ""}>
              {optionText(o)}: <b>{o.points > 0 ? `+${o.points}` : o.points}</b>
            </li>
          ))}
        </ol>
      </details>
    </div>
  );
}

export function ReplayPage(props: { id: string; match: number; hand: number; switchLang: () => void }) {
  const { id, match, hand, switchLang } = props;
  const [out, setOut] = useState<HandOut | null>(null);
  const [view, setView] = useState<TableOut | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [at, setAt] = useState(0);
  const review = useReview(id, match, hand);
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    api.hand(id, hand, match).then(setOut, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
    api.table(id).then(setView, () => undefined);
  }, [id, match, hand]);
  const steps = out?.steps ?? [];
  const last = steps.length;
  const go = (next: number) => setAt(Math.max(0, Math.min(last, next)));
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement | null;
      if (target && ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName)) return;
      const moves: Record<string, number> = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: last };
      if (!(e.key in moves)) return;
      e.preventDefault();
      go(moves[e.key]);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  });
  useEffect(() => {
    list.current?.querySelector<HTMLElement>("[aria-current=step]")?.scrollIntoView({ block: "nearest" });
  }, [at]);
  const names = [0, 1].map((s) => (view ? nameOf(view, s) : `${s + 1}`));
  const decisions = review?.status === "done" ? review.decisions : [];
  const bottom = view?.you ?? 0;
  const deck = view?.seats[bottom]?.deck_design ?? "classic";
  const step = at > 0 ? steps[at - 1] : null;
  const pile = out ? pileAt(out, steps, at) : [];
  return (
    <div class={`page replay deck-${deck}`}>
      <header class="topbar">
        <a
          class="home"
          href={`/t/${id}`}
          onClick={(e) => {
            e.preventDefault();
            navigate(`/t/${id}`);
          }}
        >
          ← {t("replayBack")}
        </a>
        <button type="button" class="link" onClick={switchLang}>
          {t("language")}
        </button>
      </header>
      <main class="replay-main">
        <h1>{t("replayTitle", { n: hand })}</h1>
        {error && (
          <p class="error" role="alert">
            {t("replayFailed", { reason: error })}
          </p>
        )}
        {review?.status === "done" ? (
          <SeatSummaries seats={review.seats} names={names} />
        ) : (
          <p class="muted" role="status">
            {t("reviewPending")}
          </p>
        )}
        {out && (
          <div class="replay-layout">
            <section class="replay-table panel" aria-label={t("replayHands")}>
              {[1 - bottom, bottom].map((seat) => (
                <SeatHand key={seat} name={names[seat]} shown={handAt(out, steps, at, seat)} dealer={out.dealer === seat} />
              ))}
              <div class="replay-piles">
                <span>{t("stockCount", { n: stockAt(out, steps, at) })}</span>
                <span class="replay-pile" aria-label={t("discardPile")}>
                  {pile.slice(-4).map((c) => (
                    <CardFace key={c} code={c} small />
                  ))}
                </span>
              </div>
              <p class="replay-now" aria-live="polite">
                {step ? `${t("replayAt", { i: at, n: last })}: ${stepText(step, names[step.seat], pileAt(out, steps, at - 1))}` : t("replayDeal")}
              </p>
              {at === last && out.result && <Settled result={out.result as unknown as HandResult} names={names} />}
              {step && <DecisionPanel decision={decisions[at - 1]} name={names[step.seat]} />}
              <div class="replay-controls" role="toolbar" aria-label={t("replayMoves")}>
                <button type="button" data-step="first" onClick={() => go(0)} disabled={at === 0} aria-label={t("replayFirst")}>
                  «
                </button>
                <button type="button" data-step="prev" onClick={() => go(at - 1)} disabled={at === 0} aria-label={t("replayPrev")}>
                  ◀
                </button>
                <button type="button" data-step="next" onClick={() => go(at + 1)} disabled={at === last} aria-label={t("replayNext")}>
                  ▶
                </button>
                <button type="button" data-step="last" onClick={() => go(last)} disabled={at === last} aria-label={t("replayLast")}>
                  »
                </button>
              </div>
              <p class="muted small">{t("replayKeys")}</p>
            </section>
            <nav class="replay-moves panel" aria-label={t("replayMoves")}>
              <h2>{t("replayMoves")}</h2>
              <ol ref={list}>
                <li>
                  <button type="button" aria-current={at === 0 ? "step" : undefined} onClick={() => go(0)}>
                    {t("replayDeal")}
                  </button>
                </li>
                {steps.map((s, i) => {
                  const d = decisions[i];
                  return (
                    <li key={s.index} data-seat={s.seat}>
                      <button type="button" aria-current={at === i + 1 ? "step" : undefined} onClick={() => go(i + 1)}>
                        <span class="move-text">{stepText(s, names[s.seat], pileAt(out, steps, i))}</span>
                        {d?.mark && <span class={`mark ${d.mark}`}>{markText(d)}</span>}
                        {d && !d.forced && !sameMove(d.chosen, d.best) && d.cost > 0 && <span class="cost">−{d.cost}</span>}
                      </button>
                    </li>
                  );
                })}
              </ol>
            </nav>
          </div>
        )}
      </main>
    </div>
  );
}
