// The score sheet, as paper scoring keeps it: each hand's points under its winner, the running
// totals below (the match's history as the view gives it; nothing is computed but the sums).
import { t } from "../i18n";
import type { GameView, TableOut } from "../types";
import { nameOf } from "./names";

export function ScoreSheet({ view, game, order }: { view: TableOut; game: GameView; order: number[] }) {
  const history = game.match.history;
  return (
    <section class={`scoresheet${history.length ? "" : " empty"}`} aria-labelledby="scoresheet-title">
      <div class="sheet">
      <table>
        <caption id="scoresheet-title">{t("scoreSheet")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("handShort")}</th>
            {order.map((seat) => (
              <th scope="col" key={seat}>
                <span class="name" title={nameOf(view, seat)}>
                  {nameOf(view, seat)}
                </span>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {history.map((h) => (
            <tr key={h.hand_number} data-hand={h.hand_number}>
              <th scope="row">{h.hand_number}</th>
              {order.map((seat) => (
                <td key={seat} data-seat={seat}>
                  {h.winner === null ? "—" : h.winner === seat ? h.points : 0}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
        <tfoot>
          <tr>
            <th scope="row">{t("total")}</th>
            {order.map((seat) => (
              <td key={seat} data-total={seat}>
                {game.match.scores[seat]}
              </td>
            ))}
          </tr>
        </tfoot>
      </table>
      </div>
    </section>
  );
}
