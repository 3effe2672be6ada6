// The waiting room: the two seats, the invite link to copy, a bot to fill the seat, and the
// start button.
import { useState } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import type { TableLive } from "../live";
import type { TableOut } from "../types";
import { BOT_LEVELS, BOT_NAMES } from "../types";
import { nameOf } from "./names";

export function WaitingRoom({ view, live }: { view: TableOut; live: TableLive }) {
  const [copied, setCopied] = useState(false);
  const link = view.invite_code ? `${location.origin}/t/${view.table_id}?invite=${view.invite_code}` : null;
  const seat1Empty = !view.seats[1]?.player && !view.seats[1]?.bot_level;
  const copy = async () => {
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      const input = document.getElementById("invite-link") as HTMLInputElement | null;
      input?.select();
      document.execCommand("copy");
    }
    setCopied(true);
  };
  return (
    <section class="panel waiting">
      <ul class="seats">
        {[0, 1].map((s) => (
          <li key={s}>
            <b class="name" title={nameOf(view, s)}>{nameOf(view, s)}</b>
            {view.seats[s]?.bot_level && <span class="badge">{t("bot")}</span>}
            {view.you === s && <span class="badge">{t("you")}</span>}
          </li>
        ))}
      </ul>
      {view.you === 0 && link && seat1Empty && (
        <div class="invite">
          <label for="invite-link">{t("inviteLink")}</label>
          <div class="row">
            <input id="invite-link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" class="primary" onClick={() => void copy()}>
              {copied ? t("copied") : t("copy")}
            </button>
          </div>
          <p>{t("waitingOpponent")}</p>
          <p>{t("fillBot")}:</p>
          <div class="bots">
            {BOT_LEVELS.map((level) => (
              <button
                type="button"
                key={level}
                class="bot"
                onClick={() => void live.command(() => api.seatBot(view.table_id, level))}
              >
                <b>{BOT_NAMES[level]}</b> <small>{t(level)}</small>
              </button>
            ))}
          </div>
        </div>
      )}
      {view.you === 0 && view.status === "ready" && (
        <button type="button" class="primary big" onClick={() => void live.command(() => api.start(view.table_id))}>
          {t("start")}
        </button>
      )}
      {view.you === 1 && <p>{t("waitingStart", { name: nameOf(view, 0) })}</p>}
      {view.you === null && <p>{t("spectating")}</p>}
    </section>
  );
}
