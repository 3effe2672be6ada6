// The lobby page (/lobby): quick pairing by pace, the open seeks live, post a seek, challenge
// a player by name or by link, wait with a cancel (a bot offered after a while), and the
// table opens by itself once paired. An open challenge's link (/?challenge=<id>) lands here.
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, ensurePlayer, lobbyApi, me, rememberTable } from "../api";
import { t } from "../i18n";
import { deckPref } from "../prefs";
import { navigate } from "../router";
import { DEFAULT_PRESET, NameField, PRESETS, presetName } from "../start";
import type { BotLevel, DeclineReason, SeekCreate, SeekOut } from "../types";
import { BOT_LEVELS, BOT_NAMES } from "../types";
import { LobbyLive, type LobbyNews } from "./live";
import { lt, type LobbyKey } from "./strings";
import "./lobby.css";

type Clock = NonNullable<SeekCreate["clock"]>;
interface Pace {
  id: string;
  clock: Clock;
}

// The grid of quick pairing: live paces, then correspondence (days per move).
const LIVE: Pace[] = [
  { id: "m30", clock: { control: "per_move", seconds: 30 } },
  { id: "m60", clock: { control: "per_move", seconds: 60 } },
  { id: "b5", clock: { control: "bank", seconds: 300, bonus: 5 } },
  { id: "b10", clock: { control: "bank", seconds: 600, bonus: 10 } },
];
const DAYS: Pace[] = [
  { id: "d1", clock: { control: "per_move", seconds: 86400 } },
  { id: "d3", clock: { control: "per_move", seconds: 3 * 86400 } },
];
const PACES = [...LIVE, ...DAYS];
const REASONS: DeclineReason[] = ["generic", "later", "too_fast", "too_slow", "rated", "casual", "rules"];
// A live seek offers a bot after this many seconds without an opponent.
const BOT_AFTER = 30;

function span(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
}

/** "1 min per move", "5 min + 5 s", "3 d per move", "no clock". */
export function paceLabel(clock: Record<string, unknown> | null | undefined): string {
  if (!clock || clock.control === "none") return lt("noClock");
  const seconds = Number(clock.seconds);
  if (clock.control === "bank") return lt("bank", { time: span(seconds), bonus: Number(clock.bonus ?? 0) });
  if (seconds >= 86400) return lt("days", { n: Math.round(seconds / 86400) });
  return lt("perMove", { time: span(seconds) });
}

/** The server's rule (app/table/seeks.py): correspondence is no clock or a day or more per move. */
function isLive(clock: SeekCreate["clock"]): boolean {
  if (!clock || clock.control === "none") return false;
  return !(clock.control === "per_move" && clock.seconds >= 86400);
}

function gameLabel(seek: SeekOut): string {
  const game = seek.game;
  return `${presetName(game.preset)} · ${paceLabel(game.clock)} · ${game.rated ? lt("rated") : lt("casual")}`;
}

function message(err: unknown): string {
  return err instanceof ApiError ? err.message : String(err);
}

export function LobbyPage({ switchLang, challenge }: { switchLang: () => void; challenge: string | null }) {
  const live = useRef(new LobbyLive()).current;
  const [, redraw] = useState(0);
  const [name, setName] = useState(me()?.name ?? "");
  const [waiting, setWaiting] = useState<SeekOut | null>(null);
  const [since, setSince] = useState(0);
  const [offer, setOffer] = useState<BotLevel | null>(null);
  const [incoming, setIncoming] = useState<SeekOut[]>([]);
  const [sent, setSent] = useState<SeekOut | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const open = (tableId: string) => {
    rememberTable(tableId);
    navigate(`/t/${tableId}`);
  };

  useEffect(() => {
    const off = live.subscribe(() => redraw((n) => n + 1));
    live.onNews = (news: LobbyNews) => {
      if (news.type === "seek_paired") open(news.table_id);
      else if (news.type === "bot_offered") setOffer((news.suggested as BotLevel) ?? "medium");
      else if (news.type === "challenge_received") setIncoming((all) => [...all.filter((c) => c.seek_id !== news.seek_id), news]);
      else if (news.type === "seek_closed") {
        setIncoming((all) => all.filter((c) => c.seek_id !== news.seek_id));
        setWaiting((w) => (w && w.seek_id === news.seek_id ? null : w));
        setSent((s) => {
          if (s && s.seek_id === news.seek_id) {
            const who = s.target?.name ?? "";
            const reason = lt(`reason_${news.reason ?? "generic"}` as LobbyKey);
            setNote(news.status === "declined" ? lt("declined", { name: who, reason }) : lt(news.status === "expired" ? "expired" : "closed"));
            return null;
          }
          return s;
        });
      }
    };
    live.start();
    if (me()) void lobbyApi.mine().then((mine) => setIncoming(mine.filter((s) => s.target?.id === me()?.id)), () => undefined);
    if (challenge) void lobbyApi.challengeOf(challenge).then((c) => c.status === "open" && setIncoming((all) => [...all, c]), () => undefined);
    return () => {
      off();
      live.stop();
    };
  }, []);

  useEffect(() => {
    if (!waiting) return;
    const started = Date.now();
    setSince(0);
    const timer = window.setInterval(() => setSince(Math.floor((Date.now() - started) / 1000)), 1000);
    return () => window.clearInterval(timer);
  }, [waiting?.seek_id]);

  async function player(): Promise<boolean> {
    const trimmed = name.trim();
    if (!trimmed) {
      setError(lt("needName"));
      (document.querySelector("input[name=name]") as HTMLInputElement | null)?.focus();
      return false;
    }
    const before = me()?.token;
    const now = await ensurePlayer(trimmed);
    if (now.token !== before) live.reconnect();
    return true;
  }

  async function act(work: () => Promise<void>): Promise<void> {
    setBusy(true);
    setError(null);
    setNote(null);
    try {
      if (await player()) await work();
    } catch (err) {
      setError(message(err));
    } finally {
      setBusy(false);
    }
  }

  const seek = (body: SeekCreate) =>
    act(async () => {
      const posted = await lobbyApi.seek(isLive(body.clock) ? { ...body, bot_after: BOT_AFTER } : body);
      if (posted.table_id) open(posted.table_id);
      else setWaiting(posted);
      setOffer(null);
    });

  const cancel = () =>
    act(async () => {
      if (waiting) await lobbyApi.cancel(waiting.seek_id).catch(() => undefined);
      setWaiting(null);
      setOffer(null);
    });

  const takeBot = (level: BotLevel) =>
    act(async () => {
      if (!waiting) return;
      const taken = await lobbyApi.takeBot(waiting.seek_id, level);
      if (taken.table_id) open(taken.table_id);
    });

  const accept = (target: SeekOut) =>
    act(async () => {
      const mine = target.mode === "challenge" ? await lobbyApi.acceptChallenge(target.seek_id) : await lobbyApi.accept(target.seek_id);
      if (mine.table_id) open(mine.table_id);
    });

  const decline = (target: SeekOut, reason: DeclineReason) =>
    act(async () => {
      await lobbyApi.declineChallenge(target.seek_id, reason);
      setIncoming((all) => all.filter((c) => c.seek_id !== target.seek_id));
    });

  const mineId = me()?.id;
  return (
    <div class="page start lobby">
      <header class="topbar">
        <a class="home" href="/" onClick={(e) => { e.preventDefault(); navigate("/"); }}>
          {t("title")}
        </a>
        <span class={live.online ? "badge online" : "badge"} role="status">
          {live.online ? lt("online") : lt("offline")}
        </span>
        <button type="button" class="link" onClick={switchLang} lang={t("language") === "English" ? "en" : "pt"}>
          {t("language")}
        </button>
      </header>
      <main class="start-main">
        <h1>{lt("lobby")}</h1>
        <p class="tagline">{lt("lobbyHint")}</p>
        <div class="panel">
          <NameField value={name} onInput={setName} />
        </div>
        {incoming.map((c) => (
          <section class="panel challenge-in" key={c.seek_id} aria-live="polite">
            <p>{lt("challenged", { name: c.player.name, game: gameLabel(c) })}</p>
            <button type="button" class="primary" disabled={busy} onClick={() => void accept(c)}>
              {lt("accept")}
            </button>
            {c.target && (
              <span class="declines">
                {REASONS.map((r) => (
                  <button type="button" key={r} class="link" disabled={busy} onClick={() => void decline(c, r)}>
                    {lt("decline")}: {lt(`reason_${r}` as LobbyKey)}
                  </button>
                ))}
              </span>
            )}
          </section>
        ))}
        {waiting ? (
          <Waiting seek={waiting} since={since} offer={offer} busy={busy} onCancel={cancel} onBot={takeBot} onKeep={() => setOffer(null)} />
        ) : (
          <QuickGrid busy={busy} onPick={(pace) => void seek({ preset: DEFAULT_PRESET, clock: pace.clock, rated: false, deck_design: deckPref() })} />
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {note && (
          <p class="note" role="status">
            {note}
          </p>
        )}
        <section class="panel">
          <h2>{lt("openSeeks")}</h2>
          <SeekList seeks={live.seeks} mine={mineId} busy={busy} onAccept={(s) => void accept(s)} />
        </section>
        <section class="choices lobby-forms">
          <CreateSeek busy={busy || waiting !== null} onPost={(body) => void seek(body)} />
          <Challenge
            busy={busy}
            sent={sent}
            onSend={(to, clock) =>
              void act(async () => {
                const posted = await lobbyApi.challenge({ preset: DEFAULT_PRESET, clock, rated: false, deck_design: deckPref(), ...(to ? { to } : {}) });
                setSent(posted);
              })
            }
          />
        </section>
      </main>
    </div>
  );
}

function QuickGrid({ busy, onPick }: { busy: boolean; onPick: (pace: Pace) => void }) {
  const row = (title: string, paces: Pace[]) => (
    <div class="pace-row" role="group" aria-label={title}>
      <h3>{title}</h3>
      <div class="pace-grid">
        {paces.map((p) => (
          <button type="button" key={p.id} class="primary pace" disabled={busy} onClick={() => onPick(p)}>
            {paceLabel(p.clock)}
          </button>
        ))}
      </div>
    </div>
  );
  return (
    <section class="panel quick">
      <h2>{lt("quick")}</h2>
      <p>{lt("quickHint")}</p>
      {row(lt("live"), LIVE)}
      {row(lt("correspondence"), DAYS)}
    </section>
  );
}

function Waiting(props: {
  seek: SeekOut;
  since: number;
  offer: BotLevel | null;
  busy: boolean;
  onCancel: () => void;
  onBot: (level: BotLevel) => void;
  onKeep: () => void;
}) {
  const { seek, since, offer, busy } = props;
  return (
    <section class="panel seek-waiting" aria-live="polite">
      <h2>{gameLabel(seek)}</h2>
      <p role="status">
        <span class="spinner" aria-hidden="true" /> {lt("waiting", { s: since })}
      </p>
      {offer && (
        <div class="bot-offer">
          <p>{lt("botOffer")}</p>
          {[offer, ...BOT_LEVELS.filter((l) => l !== offer)].map((level) => (
            <button type="button" key={level} class="primary bot" disabled={busy} onClick={() => props.onBot(level)}>
              {lt("playBot", { name: BOT_NAMES[level] })} <small>{t(level)}</small>
            </button>
          ))}
          <button type="button" class="link" onClick={props.onKeep}>
            {lt("keepWaiting")}
          </button>
        </div>
      )}
      <button type="button" class="danger" disabled={busy} onClick={props.onCancel}>
        {lt("cancelSeek")}
      </button>
    </section>
  );
}

function SeekList(props: { seeks: SeekOut[]; mine: string | undefined; busy: boolean; onAccept: (s: SeekOut) => void }) {
  if (props.seeks.length === 0) return <p>{lt("noSeeks")}</p>;
  return (
    <table class="seeks">
      <thead>
        <tr>
          <th scope="col">{lt("player")}</th>
          <th scope="col">{lt("rating")}</th>
          <th scope="col">{lt("game")}</th>
          <th scope="col">
            <span class="sr-only">{lt("accept")}</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {props.seeks.map((s) => (
          <tr key={s.seek_id}>
            <td>
              {s.player.name}
              {s.player.bot && <span class="badge">{lt("bot")}</span>}
            </td>
            <td>{Math.round(s.player.rating)}</td>
            <td>{gameLabel(s)}</td>
            <td>
              {s.player.id === props.mine ? (
                <span class="badge">{lt("yours")}</span>
              ) : (
                <button
                  type="button"
                  class="primary"
                  disabled={props.busy}
                  aria-label={`${lt("accept")}: ${s.player.name}, ${gameLabel(s)}`}
                  onClick={() => props.onAccept(s)}
                >
                  {lt("accept")}
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function PaceSelect({ value, onChange, name }: { value: string; onChange: (id: string) => void; name: string }) {
  return (
    <label class="field">
      <span>{lt("clock")}</span>
      <select name={name} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
        {PACES.map((p) => (
          <option key={p.id} value={p.id}>
            {paceLabel(p.clock)}
          </option>
        ))}
      </select>
    </label>
  );
}

function paceOf(id: string): Clock {
  return (PACES.find((p) => p.id === id) ?? PACES[0]).clock;
}

function CreateSeek({ busy, onPost }: { busy: boolean; onPost: (body: SeekCreate) => void }) {
  const [preset, setPreset] = useState<(typeof PRESETS)[number]>(DEFAULT_PRESET);
  const [pace, setPace] = useState("b5");
  const [rated, setRated] = useState(false);
  return (
    <form
      class="panel"
      onSubmit={(e) => {
        e.preventDefault();
        onPost({ preset, clock: paceOf(pace), rated, deck_design: deckPref() });
      }}
    >
      <h2>{lt("create")}</h2>
      <label class="field">
        <span>{t("preset")}</span>
        <select name="seek_preset" value={preset} onChange={(e) => setPreset(e.currentTarget.value as (typeof PRESETS)[number])}>
          {PRESETS.map((p) => (
            <option key={p} value={p}>
              {presetName(p)}
            </option>
          ))}
        </select>
      </label>
      <PaceSelect name="seek_pace" value={pace} onChange={setPace} />
      <label class="check">
        <input type="checkbox" name="seek_rated" checked={rated} onChange={(e) => setRated(e.currentTarget.checked)} /> {lt("ratedField")}
      </label>
      <button type="submit" class="primary" disabled={busy}>
        {lt("publish")}
      </button>
    </form>
  );
}

function Challenge({ busy, sent, onSend }: { busy: boolean; sent: SeekOut | null; onSend: (to: string, clock: Clock) => void }) {
  const [to, setTo] = useState("");
  const [pace, setPace] = useState("d1");
  return (
    <form
      class="panel"
      onSubmit={(e) => {
        e.preventDefault();
        onSend(to.trim(), paceOf(pace));
      }}
    >
      <h2>{lt("challenge")}</h2>
      <label class="field">
        <span>{lt("challengeName")}</span>
        <input name="challenge_to" value={to} maxLength={40} onInput={(e) => setTo(e.currentTarget.value)} />
      </label>
      <PaceSelect name="challenge_pace" value={pace} onChange={setPace} />
      <button type="submit" class="primary" disabled={busy}>
        {lt("send")}
      </button>
      {sent && (
        <p role="status" class="sent">
          {sent.target ? lt("challengeSent", { name: sent.target.name }) : lt("openChallenge")}
          {!sent.target && sent.url && (
            <input class="link-box" readOnly value={sent.url} aria-label={lt("openChallenge")} onFocus={(e) => e.currentTarget.select()} />
          )}
        </p>
      )}
    </form>
  );
}
