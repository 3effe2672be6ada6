// The tournament list: upcoming, running and finished, each naming its format and who may enter.
import { useEffect, useState } from "preact/hooks";
import { t } from "../i18n";
import { navigate } from "../router";
import { listTournaments, type Status, type Summary } from "./data";
import "./tournaments.css";

const TABS: Status[] = ["running", "upcoming", "finished"];

export function TournamentList({ switchLang }: { switchLang: () => void }) {
  const [tab, setTab] = useState<Status>("running");
  const [items, setItems] = useState<Summary[] | null>(null);
  const [error, setError] = useState("");
  useEffect(() => {
    setItems(null);
    listTournaments(tab).then(setItems, (err: unknown) => setError(String(err)));
  }, [tab]);
  return (
    <div class="page tournaments">
      <TopBar switchLang={switchLang} />
      <main class="tour-main">
        <h2>{t("tournaments")}</h2>
        <a class="tour-entry" href="/ladder" onClick={(e) => { e.preventDefault(); navigate("/ladder"); }}>
          {t("ladder")} →
        </a>
        <div class="tour-tabs" role="tablist">
          {TABS.map((s) => (
            <button key={s} type="button" role="tab" aria-selected={tab === s} class={tab === s ? "tab on" : "tab"} onClick={() => setTab(s)}>
              {t(`tourStatus_${s}`)}
            </button>
          ))}
        </div>
        {error && <p class="error" role="alert">{error}</p>}
        {items === null && !error && <p>{t("loading")}</p>}
        {items?.length === 0 && <p>{t("tourNone")}</p>}
        <ul class="tour-list">
          {items?.map((x) => (
            <li key={x.tournament_id} class="panel">
              <a href={`/tournaments/${x.tournament_id}`} onClick={(e) => { e.preventDefault(); navigate(`/tournaments/${x.tournament_id}`); }}>
                {x.name}
              </a>
              <span class="badge">{t(x.format === "arena" ? "tourArena" : "tourSwiss")}</span>
              <span class="badge">{t(`tourAdmits_${x.admits}`)}</span>
              <p class="tour-meta">
                {t("tourEntrants", { n: x.entrant_count, cap: x.capacity })} ·{" "}
                {x.format === "swiss" ? t("tourRoundsOf", { n: x.rounds_total ?? 0 }) : t("tourMinutes", { n: Math.round((x.duration ?? 0) / 60) })} ·{" "}
                {x.starts_at ? new Date(x.starts_at).toLocaleString() : ""}
              </p>
            </li>
          ))}
        </ul>
      </main>
    </div>
  );
}

export function TopBar({ switchLang }: { switchLang: () => void }) {
  return (
    <header class="topbar">
      <a class="home" href="/" onClick={(e) => { e.preventDefault(); navigate("/"); }}>
        {t("title")}
      </a>
      <a class="tour-link" href="/tournaments" onClick={(e) => { e.preventDefault(); navigate("/tournaments"); }}>
        {t("tournaments")}
      </a>
      <button type="button" class="link" onClick={switchLang} lang={t("language") === "English" ? "en" : "pt"}>
        {t("language")}
      </button>
    </header>
  );
}
