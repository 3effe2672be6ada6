// DESISTIR in the hand's strip, right above the cards (a phone's place for it), asked once more
// before the match is given up; the menu keeps its own.
import { useState } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import type { TableLive } from "../live";
import type { TableOut } from "../types";
import { nameOf } from "./names";

export function ResignHere({ view, live }: { view: TableOut; live: TableLive }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button type="button" class="danger resign-here" onClick={() => setAsking(true)}>
        {t("resign")}
      </button>
    );
  }
  return (
    <span class="resign-here confirm-inline" role="group" aria-label={t("resign")}>
      <span>{t("resignConfirm", { name: nameOf(view, 1 - (view.you ?? 0)) })}</span>
      <button
        type="button"
        class="danger"
        onClick={() => {
          setAsking(false);
          void live.command(() => api.move(view.table_id, "resign"));
        }}
      >
        {t("yesResign")}
      </button>
      <button type="button" class="action" onClick={() => setAsking(false)}>
        {t("cancel")}
      </button>
    </span>
  );
}
