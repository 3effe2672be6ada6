// One tournament: countdown, join/withdraw, your table one click away, the standings (your row
// highlighted), the picture of the points over the rounds, and every round's pairings.
import { useEffect, useState } from "preact/hooks";
import { ApiError, me } from "../api";
import { t } from "../i18n";
import { navigate } from "../router";
import { ScoreChart } from "./chart";
import { clockText, enter, secondsUntil, tournament, type Pairing, type Tournament } from "./data";
import { TopBar } from "./list";
import "./tournaments.css";

const POLL_MS = 3000;

export function TournamentPage({ id, switchLang }: { id: string; switchLang: () => void }) {
  const [view, setView] = useState<Tournament | null>(null);
  const [seen, setSeen] = useState(Date.now());
  const [error, setError] = useState("");
  const [busy, setBusy] = useState(false);
  const [name, setName] = useState("");
  const [, tick] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () =>
      tournament(id).then(
        (v) => { if (live) { setView(v); setSeen(Date.now()); } },
        (err: unknown) => live && setError(err instanceof ApiError ? err.message : String(err)),
      );
    void load();
    const poll = setInterval(() => void load(), POLL_MS);
    const second = setInterval(() => tick((n) => n + 1), 1000);
    return () => { live = false; clearInterval(poll); clearInterval(second); };
  }, [id]);
  if (!view) {
    return (
      <div class="page tournaments">
        <TopBar switchLang={switchLang} />
        <main class="tour-main"><p role={error ? "alert" : undefined}>{error || t("loading")}</p></main>
      </div>
    );
  }
  const mine = view.you && !view.you.withdrawn ? view.you.entrant_id : null;
  const names = new Map(view.entrants.map((e) => [e.id, e.name]));
  const pairings = view.rounds.flatMap((r) => r.pairings);
  const myTable = mine ? pairings.find((p) => p.status === "playing" && (p.seat0 === mine || p.seat1 === mine)) : undefined;
  const until = view.status === "upcoming" ? view.starts_at : view.status === "running" ? (view.format === "arena" ? view.ends_at : view.round_deadline) : null;
  const left = secondsUntil(until, view.server_time, seen);
  const arena = view.format === "arena";
  const canJoin = view.status !== "finished" && view.admits !== "bots";
  const act = async (join: boolean) => {
    setBusy(true);
    setError("");
    try {
      setView(await enter(id, join, name || "Player"));
      setSeen(Date.now());
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    }
    setBusy(false);
  };
  return (
    <div class="page tournaments">
      <TopBar switchLang={switchLang} />
      <main class="tour-main">
        <section class="panel tour-head">
          <h2>{view.name}</h2>
          <p>
            <span class="badge">{t(arena ? "tourArena" : "tourSwiss")}</span>
            <span class="badge">{t(`tourIs_${view.status}`)}</span>
            <span class="badge">{t(`tourAdmits_${view.admits}`)}</span>
            {!arena && view.status !== "upcoming" && <span class="badge">{t("tourRoundNow", { n: view.round, of: view.rounds_total ?? 0 })}</span>}
          </p>
          {left !== null && (
            <p class="tour-countdown" aria-live="off">
              {t(view.status === "upcoming" ? "tourStartsIn" : arena ? "tourEndsIn" : "tourRoundEndsIn")} <b>{clockText(left)}</b>
            </p>
          )}
          {myTable?.table_id && (
            <button type="button" class="primary big" onClick={() => navigate(`/t/${myTable.table_id}`)}>
              {t("tourYourTable")}
            </button>
          )}
          {canJoin && !mine && (
            <div class="tour-join">
              {!me() && (
                <label class="field">
                  <span>{t("yourName")}</span>
                  <input value={name} maxLength={40} onInput={(e) => setName(e.currentTarget.value)} />
                </label>
              )}
              <button type="button" class="primary" disabled={busy} onClick={() => void act(true)}>{t("tourJoin")}</button>
            </div>
          )}
          {canJoin && mine && (
            <button type="button" class="link" disabled={busy} onClick={() => void act(false)}>
              {t(arena ? "tourPause" : "tourWithdraw")}
            </button>
          )}
          {error && <p class="error" role="alert">{error}</p>}
        </section>
        <section class="panel">
          <h3>{t("tourStandings")}</h3>
          {view.standings.length === 0 && <p>{t("tourNoEntrants")}</p>}
          {view.standings.length > 0 && (
          <table class="tour-standings">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{t("tourEntrant")}</th>
                <th scope="col">{t("score")}</th>
                {arena ? <th scope="col">{t("tourWins")}</th> : <th scope="col" title="Buchholz">Buchholz</th>}
                {arena ? <th scope="col">{t("tourStreak")}</th> : <th scope="col" title="Sonneborn-Berger">S-B</th>}
                <th scope="col">{t("tourPlayed")}</th>
              </tr>
            </thead>
            <tbody>
              {view.standings.map((s) => (
                <tr key={s.entrant_id} class={s.entrant_id === mine ? "you" : s.withdrawn ? "gone" : ""} aria-current={s.entrant_id === mine ? "true" : undefined}>
                  <td>{s.rank}</td>
                  <td>{s.name}{s.entrant_id === mine ? ` (${t("you")})` : ""}</td>
                  <td>{s.score}</td>
                  <td>{arena ? s.wins : s.buchholz}</td>
                  <td>{arena ? (s.streak >= 2 ? `🔥 ${s.streak}` : s.streak) : s.sonneborn_berger}</td>
                  <td>{s.played}</td>
                </tr>
              ))}
            </tbody>
          </table>
          )}
        </section>
        {view.standings.some((s) => s.progress.length > 0) && (
          <section class="panel">
            <ScoreChart standings={view.standings} mine={mine} arena={arena} />
          </section>
        )}
        {view.rounds.slice().reverse().map((r) => (
          <section class="panel" key={r.number}>
            <h3>{arena ? t("tourPairings") : t("tourRound", { n: r.number })}</h3>
            <ul class="tour-pairings">
              {r.pairings.slice().reverse().map((p) => (
                <PairingRow key={p.number} p={p} names={names} mine={mine} />
              ))}
            </ul>
          </section>
        ))}
      </main>
    </div>
  );
}

function PairingRow({ p, names, mine }: { p: Pairing; names: Map<string, string>; mine: string | null }) {
  const name = (id: string | null) => (id ? names.get(id) ?? id : "");
  const yours = mine !== null && (p.seat0 === mine || p.seat1 === mine);
  const who = (id: string) => (p.winner === id ? <b>{name(id)}</b> : name(id));
  return (
    <li class={yours ? "you" : ""}>
      {p.seat1 === null ? (
        <span>{name(p.seat0)} — {t("tourBye")}</span>
      ) : (
        <span>{who(p.seat0)} × {who(p.seat1)}</span>
      )}{" "}
      <span class={p.status === "playing" ? "badge hot" : "badge"}>{t(`tourPairing_${p.status}`)}</span>
      {p.table_id && (
        <a href={`/t/${p.table_id}`} onClick={(e) => { e.preventDefault(); navigate(`/t/${p.table_id!}`); }}>
          {p.status === "playing" ? (yours ? t("tourPlay") : t("tourWatch")) : t("open")}
        </a>
      )}
    </li>
  );
}
