// The table's menu: home, sound, full screen, language, notifications, a device link, the deck
// and resigning.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, me } from "../api";
import { lang, t } from "../i18n";
import type { TableLive } from "../live";
import { askPermission } from "../notify";
import { deckPref, setDeckPref } from "../prefs";
import { PushToggle } from "../push";
import { navigate } from "../router";
import { DeckPicker } from "../start";
import type { TableOut } from "../types";
import { nameOf } from "./names";

export function Menu(props: {
  view: TableOut;
  live: TableLive;
  sound: boolean;
  onSound: () => void;
  switchLang: () => void;
  onClose: () => void;
}) {
  const { view, live, sound, onSound, switchLang, onClose } = props;
  const [confirm, setConfirm] = useState(false);
  const [copied, setCopied] = useState(false);
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    dialog.current?.querySelector<HTMLButtonElement>("button")?.focus();
  }, []);
  const playing = view.you !== null && view.game?.match.status === "playing";
  const deck = (view.you !== null && view.seats[view.you]?.deck_design) || deckPref();
  return (
    <div class="overlay" onClick={(e) => e.target === e.currentTarget && onClose()}>
      <div class="panel menu" role="dialog" aria-modal="true" aria-label={t("menu")} ref={dialog}>
        <button type="button" onClick={onClose}>
          {t("close")}
        </button>
        <button type="button" onClick={() => navigate("/")}>
          {t("home")}
        </button>
        <button type="button" onClick={onSound}>
          {t("sound")}: {sound ? t("on") : t("off")}
        </button>
        <button type="button" onClick={() => void document.documentElement.requestFullscreen?.().catch(() => undefined)}>
          {t("fullscreen")}
        </button>
        <button type="button" onClick={switchLang} lang={lang === "pt" ? "en" : "pt"}>
          {t("language")}
        </button>
        <PushToggle
          fallback={
            "Notification" in window &&
            Notification.permission === "default" && (
              <button type="button" onClick={askPermission}>
                {t("notifications")}
              </button>
            )
          }
        />
        {view.you !== null && (
          <button
            type="button"
            onClick={() => {
              // The token rides in the fragment, which never reaches a server's logs.
              const link = `${location.origin}/t/${view.table_id}#token=${me()?.token ?? ""}`;
              void navigator.clipboard?.writeText(link).then(() => setCopied(true));
            }}
          >
            {copied ? t("copied") : t("deviceLink")}
          </button>
        )}
        <DeckPicker
          value={deck}
          onPick={(d) => {
            setDeckPref(d);
            if (view.you !== null) void live.command(() => api.deck(view.table_id, d));
            else live.accept({ ...view }, true);
          }}
        />
        <p class="keys">{t("keysHelp")}</p>
        {playing && !confirm && (
          <button type="button" class="danger" onClick={() => setConfirm(true)}>
            {t("resign")}
          </button>
        )}
        {playing && confirm && (
          <div class="confirm" role="alertdialog" aria-label={t("resign")}>
            <p>{t("resignConfirm", { name: nameOf(view, 1 - (view.you ?? 0)) })}</p>
            <button
              type="button"
              class="danger"
              onClick={() => {
                void live.command(() => api.move(view.table_id, "resign"));
                onClose();
              }}
            >
              {t("yesResign")}
            </button>
            <button type="button" onClick={() => setConfirm(false)}>
              {t("cancel")}
            </button>
          </div>
        )}
      </div>
    </div>
  );
}
