// The tab's title says when it is this player's turn: at the table the page shows (so a player
// in another tab sees it), or at another of their tables while the tab is hidden (notify.ts).
// The one owner of document.title: shown again, the tab says the turn only if it is still ours.
import { t } from "../i18n";

const TITLE = "Gin Rummy";
let mine = false;

function turn(): string {
  return `● ${t("yourTurn")} — ${TITLE}`;
}

function apply(): void {
  document.title = mine ? turn() : TITLE;
}

export function turnTitle(myTurn: boolean): void {
  mine = myTurn;
  apply();
}

/** A turn at one of the player's tables, heard while the tab is hidden: said until it is shown. */
export function backgroundTurn(): void {
  document.title = turn();
}

document.addEventListener("visibilitychange", () => {
  if (!document.hidden) apply();
});
