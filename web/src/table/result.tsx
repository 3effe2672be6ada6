// The hand result board and the match result: what the game did, as the server settled it.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { CardFace, CardGroup, cardText } from "../cards";
import { t, type Key } from "../i18n";
import type { TableLive } from "../live";
import type { GameView, HandOut, HandResult, TableOut } from "../types";
import { ReviewPanel } from "../replay/summary";
import { nameOf } from "./names";

function FairCheck({ tableId, match, hand }: { tableId: string; match: number; hand: number }) {
  const [out, setOut] = useState<HandOut | null>(null);
  const [error, setError] = useState<string | null>(null);
  if (out) {
    return (
      <span class={`fair ${out.commitment_valid ? "ok" : "bad"}`} data-fair={out.commitment_valid ? "valid" : "invalid"}>
        {out.commitment_valid ? t("fairValid") : t("fairInvalid")}{" "}
        <small>
          {t("seed")} <code>{out.seed.slice(0, 16)}…</code> · {t("commitment")} <code>{out.commitment.slice(0, 16)}…</code>
        </small>
      </span>
    );
  }
  return (
    <button
      type="button"
      class="link"
      onClick={() => void api.hand(tableId, hand, match).then(setOut, (e: unknown) => setError(String(e)))}
    >
      {t("fairCheck")} {error && <small>({error})</small>}
    </button>
  );
}

function SideHand(props: {
  view: TableOut;
  seat: number;
  melds: string[][];
  loose: string[];
  deadwood: number | null;
  layoffsOnto?: Map<number, string[]>;
  note?: string;
  /** Number the melds ("Jogo 2"): the knocker's, which the layoffs' text names. */
  numbered?: boolean;
}) {
  const { view, seat, melds, loose, deadwood, layoffsOnto, note, numbered } = props;
  return (
    <div class="side" data-seat={seat}>
      <h3>
        <span class="name" title={nameOf(view, seat)}>{nameOf(view, seat)}</span>{" "}
        {note && <span class="badge">{note}</span>}
      </h3>
      {melds.length > 0 && <span class="caption">{t("melds")}</span>}
      <div class="melds" role="group" aria-label={`${t("melds")}: ${nameOf(view, seat)}`}>
        {melds.map((meld, i) => (
          <span
            key={i}
            class={`meld-box meld-${i % 4}`}
            role="group"
            aria-label={numbered ? t("meldN", { n: i + 1 }) : t("melds")}
            data-meld={i + 1}
          >
            {numbered && (
              <span class="meld-number" aria-hidden="true">
                {i + 1}
              </span>
            )}
            <CardGroup cards={meld} />
            {layoffsOnto?.get(i)?.map((c) => (
              <CardFace key={c} code={c} small extra="laidoff" />
            ))}
          </span>
        ))}
      </div>
      {loose.length > 0 && <span class="caption">{deadwood === null ? t("handCards") : t("loose")}</span>}
      {loose.length > 0 && (
        <div class="loose-cards" role="group" aria-label={deadwood === null ? t("handCards") : t("loose")}>
          <CardGroup cards={loose} />
        </div>
      )}
      {deadwood !== null && (
        <p class="dw">
          {t("deadwood")}: <b>{deadwood}</b>
        </p>
      )}
    </div>
  );
}

function HandBoard({ view, result }: { view: TableOut; result: HandResult }) {
  const s = result.settlement;
  if (!s || result.knocker === null) {
    return (
      <div class="sides">
        {[0, 1].map((seat) => (
          <SideHand key={seat} view={view} seat={seat} melds={[]} loose={result.hands[seat] ?? []} deadwood={null} />
        ))}
      </div>
    );
  }
  const knocker = result.knocker;
  const onto = new Map<number, string[]>();
  for (const lay of s.layoffs) onto.set(lay.meld, [...(onto.get(lay.meld) ?? []), lay.card]);
  return (
    <>
      <div class="sides">
        <SideHand
          view={view}
          seat={knocker}
          melds={s.knocker_melds}
          loose={s.knocker_deadwood_cards}
          deadwood={s.knocker_deadwood}
          layoffsOnto={onto}
          note={t("knocker")}
          numbered
        />
        <SideHand
          view={view}
          seat={1 - knocker}
          melds={s.defender_melds}
          loose={s.defender_deadwood_cards}
          deadwood={s.defender_deadwood}
        />
      </div>
      {s.layoffs.length > 0 && (
        <ul class="layoffs" aria-label={t("layoffs")}>
          {s.layoffs.map((lay) => (
            <li key={lay.card}>{t("laidOff", { name: nameOf(view, 1 - knocker), card: cardText(lay.card), n: lay.meld + 1 })}</li>
          ))}
        </ul>
      )}
    </>
  );
}

export function ResultBoard({ view, game, live }: { view: TableOut; game: GameView; live: TableLive }) {
  const hand = game.hand;
  const match = game.match;
  const result = hand.result;
  const actions = new Set(game.legal?.actions ?? []);
  const finished = match.status === "finished";
  const [open, setOpen] = useState(true);
  const board = useRef<HTMLElement>(null);
  // The board is where play goes on: its first button takes the focus unless someone is typing.
  useEffect(() => {
    const active = document.activeElement;
    if (!active || !["INPUT", "TEXTAREA"].includes(active.tagName)) {
      board.current?.querySelector<HTMLButtonElement>(".result-actions button")?.focus();
    }
  }, [open, actions.has("next_hand"), finished]);
  if (!open) {
    return (
      <button type="button" class="primary show-result" onClick={() => setOpen(true)}>
        {t("result")}
      </button>
    );
  }
  // A variant's bonuses: a line it does not have is not shown (0 is then no news).
  const gameBonus = Number(view.rules.game_bonus ?? 0) > 0;
  const lineBonus = Number(view.rules.line_bonus ?? 0) > 0;
  const offer = view.rematch_offer ?? null;
  return (
    <div class="overlay result-overlay">
      <section ref={board} class="panel result-board" role="dialog" aria-modal="false" aria-labelledby="result-title">
        {result && (
          <>
            <h2 id="result-title" data-outcome={result.outcome}>
              {t(`outcome_${result.outcome}` as Key)}
              {result.winner !== null &&
                ` — ${t(result.points === 1 ? "scoresPoint" : "scoresPoints", { name: nameOf(view, result.winner), n: result.points })}`}
            </h2>
            {result.outcome === "dead_hand" && <p>{t("deadHandText")}</p>}
            {hand.multiplier > 1 && <p>×{hand.multiplier}</p>}
            <HandBoard view={view} result={result} />
            <ReviewPanel tableId={view.table_id} match={view.match_number} hand={result.hand_number} names={[0, 1].map((s) => nameOf(view, s))} finished={finished} />
          </>
        )}
        <table class="totals">
          <caption>{t("score")}</caption>
          <tbody>
            {[0, 1].map((seat) => (
              <tr key={seat}>
                <th scope="row" class="name" title={nameOf(view, seat)}>{nameOf(view, seat)}</th>
                <td>{match.scores[seat]}</td>
                {finished && match.bonuses && (gameBonus || lineBonus) && (
                  <>
                    {gameBonus && (
                      <td data-bonus="game">
                        +{match.bonuses[seat].game} <small>{t("gameBonus")}</small>
                      </td>
                    )}
                    {lineBonus && (
                      <td data-bonus="line">
                        +{match.bonuses[seat].line} <small>{t("lineBonus")}</small>
                      </td>
                    )}
                    <td>
                      <b>
                        {t("total")} {match.final_scores?.[seat]}
                      </b>
                    </td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
        {finished ? (
          <div class="match-over">
            {match.finish_reason === "aborted" ? (
              <>
                <h2 data-aborted>
                  {t("matchOver")}: {t("matchAborted")}
                </h2>
                <p>{t("matchAbortedWhy")}</p>
              </>
            ) : (
              <>
                <h2 data-winner={match.winner}>
                  {t("matchOver")}: {t("matchWinner", { name: nameOf(view, match.winner) })}
                  {match.finish_reason === "resignation" && ` (${t("byResignation")})`}
                  {match.finish_reason === "timeout" && ` (${t("byTimeout")})`}
                </h2>
                {(match.finish_reason === "timeout" || match.finish_reason === "abandoned") && match.winner !== null && (
                  <p class="time-loss" data-reason={match.finish_reason}>
                    {t(match.finish_reason === "timeout" ? "matchTimeLost" : "matchAbandoned", {
                      name: nameOf(view, 1 - match.winner),
                      winner: nameOf(view, match.winner),
                    })}
                  </p>
                )}
              </>
            )}
            {/* The hand the match ended in: the last one dealt (a resignation ends it mid-hand). */}
            <p data-deciding={hand.number}>{t("decidingHand", { n: hand.number })}</p>
          </div>
        ) : (
          hand.next_dealer !== null && <p>{t("nextDealer", { name: nameOf(view, hand.next_dealer) })}</p>
        )}
        <details class="history">
          <summary>
            {t("history")} · {t("fair")}
          </summary>
          <ol>
            {match.history.map((h) => (
              <li key={h.hand_number}>
                {t("hand", { n: h.hand_number })}: {t(`outcome_${h.outcome}` as Key)}
                {h.winner !== null && ` · ${nameOf(view, h.winner)} +${h.points}`} ·{" "}
                <FairCheck tableId={view.table_id} match={view.match_number} hand={h.hand_number} />
              </li>
            ))}
          </ol>
        </details>
        <div class="result-actions">
          {actions.has("next_hand") && (
            <button type="button" class="primary big" onClick={() => void live.command(() => api.move(view.table_id, "next-hand"))}>
              {t("nextHand")}
            </button>
          )}
          {finished && <RematchAnswer view={view} live={live} offer={offer} />}
          <button type="button" class="link" onClick={() => setOpen(false)}>
            {t("close")}
          </button>
        </div>
      </section>
    </div>
  );
}

/** REVANCHE asks the other seat (a bot accepts at once); the other seat accepts or declines. */
function RematchAnswer({ view, live, offer }: { view: TableOut; live: TableLive; offer: number | null }) {
  const you = view.you;
  if (you === null) {
    return offer === null ? null : <p class="rematch-note">{t("rematchWatch", { name: nameOf(view, offer) })}</p>;
  }
  const other = nameOf(view, 1 - you);
  if (offer === you) {
    return (
      <p class="rematch-note" role="status" data-rematch="asked">
        {t("rematchAsked", { name: other })}
      </p>
    );
  }
  if (offer === 1 - you) {
    return (
      <div class="rematch-offer" role="group" aria-label={t("rematchOffer", { name: other })} data-rematch="offered">
        <p role="status">{t("rematchOffer", { name: other })}</p>
        <button type="button" class="primary big" onClick={() => void live.command(() => api.acceptRematch(view.table_id))}>
          {t("rematchAccept")}
        </button>
        <button type="button" class="secondary" onClick={() => void live.command(() => api.declineRematch(view.table_id))}>
          {t("rematchDecline")}
        </button>
      </div>
    );
  }
  // Declined: the one who asked is told, and may ask again.
  const last = [...live.log].reverse().find((e) => e.type === "rematch_offered" || e.type === "rematch_declined");
  const declined = last?.type === "rematch_declined" && last.seat === 1 - you;
  return (
    <>
      {declined && (
        <p class="rematch-note" role="status" data-rematch="declined">
          {t("rematchDeclined", { name: other })}
        </p>
      )}
      <button type="button" class="primary big" onClick={() => void live.command(() => api.rematch(view.table_id))}>
        {t("rematch")}
      </button>
    </>
  );
}
