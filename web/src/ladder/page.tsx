// The bot ladder (docs/tournaments.md, "Bot ladder"): its standings, anchors included, each
// rating with its interval, and how many bots are available now. Refreshed every 10 s.
import { useEffect, useState } from "preact/hooks";
import type { components } from "@ginrummy/client/generated/api";
import { t } from "../i18n";
import { navigate } from "../router";
import { TopBar } from "../tournaments/list";
import "../tournaments/tournaments.css";
import "./ladder.css";

type S = components["schemas"];
type Row = S["LadderStandingOut"];

async function get<T>(path: string): Promise<T> {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${response.status}`);
  return (await response.json()) as T;
}

export function LadderPage({ switchLang }: { switchLang: () => void }) {
  const [rows, setRows] = useState<Row[] | null>(null);
  const [online, setOnline] = useState(0);
  const [error, setError] = useState("");
  useEffect(() => {
    const load = () => {
      get<S["LadderOut"]>("/v1/bots/ladder?limit=100").then((page) => setRows(page.standings), (err: unknown) => setError(String(err)));
      get<S["OnlineBotsOut"]>("/v1/bots/online").then((page) => setOnline(page.bots.length), () => undefined);
    };
    load();
    const timer = setInterval(load, 10_000);
    return () => clearInterval(timer);
  }, []);
  const accounts = rows?.filter((r) => r.anchor === null).length ?? 0;
  return (
    <div class="page tournaments">
      <TopBar switchLang={switchLang} />
      <main class="tour-main">
        <h2>{t("ladder")}</h2>
        <p class="tour-meta">{t("ladderIntro")}</p>
        <p>{t("ladderOnline", { n: online })}</p>
        {error && <p class="error" role="alert">{error}</p>}
        {rows === null && !error && <p>{t("loading")}</p>}
        {rows !== null && accounts === 0 && <p>{t("ladderNone")}</p>}
        {rows !== null && rows.length > 0 && (
          <table class="tour-standings ladder-standings">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{t("tourEntrant")}</th>
                <th scope="col">{t("ladderRating")}</th>
                <th scope="col">{t("ladderInterval")}</th>
                <th scope="col">{t("ladderGames")}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr key={r.entrant_id} class={r.anchor ? "anchor" : r.available ? "" : "gone"}>
                  <td>{r.rank}</td>
                  <td>
                    {r.name}
                    {r.anchor && <span class="badge">{t("ladderAnchor")}</span>}
                    {r.table_id && (
                      <a href={`/t/${r.table_id}`} onClick={(e) => { e.preventDefault(); navigate(`/t/${r.table_id}`); }} aria-label={`${t("ladderWatch")}: ${r.name}`}>
                        {t("ladderPlaying")}
                      </a>
                    )}
                  </td>
                  <td>{Math.round(r.rating)}{r.provisional ? "?" : ""}</td>
                  <td>{Math.round(r.interval[0])}–{Math.round(r.interval[1])}</td>
                  <td>{r.games}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <p class="tour-meta"><code>{t("ladderHow")}</code></p>
      </main>
    </div>
  );
}
