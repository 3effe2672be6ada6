// The tab's title says when it is this player's turn at the table the page shows, so a player
// in another tab sees it; it goes back to the plain title once the turn passes.
import { t } from "../i18n";

const TITLE = "Gin Rummy";
let mine = false;

function apply(): void {
  const turn = `● ${t("yourTurn")} — ${TITLE}`;
  if (mine) document.title = turn;
  else if (document.title === turn) document.title = TITLE;
}

export function turnTitle(myTurn: boolean): void {
  mine = myTurn;
  apply();
}

// notify.ts puts the plain title back when the tab is shown again: the turn, if still ours, stays.
document.addEventListener("visibilitychange", apply);
