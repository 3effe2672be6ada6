// The start page: name, deck design, rules; play a bot or create an invite; my tables.
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, ensurePlayer, me, rememberedTables, rememberTable } from "./api";
import { CardBack, CardFace } from "./cards";
import { TIME_CHOICES, type TimeChoice } from "./clock";
import { t, type Key } from "./i18n";
import { navigate } from "./router";
import { askPermission, listen } from "./notify";
import { deckPref, setDeckPref } from "./prefs";
import { LobbyLink } from "./lobby/link";
import { PushToggle } from "./push";
import type { BotLevel, DeckDesign, MatchRecord, TableCreate, TableOut } from "./types";
import { BOT_LEVELS, BOT_NAMES, DECK_DESIGNS } from "./types";

type Preset = NonNullable<TableCreate["preset"]>;
// The invite tables' own rules come first and are the default (seed 001: a 100 match bonus,
// 200 on a shutout, 25 per hand won).
export const PRESETS: Preset[] = ["reino", "standard", "classic", "cardems", "oklahoma"];
export const DEFAULT_PRESET: Preset = "reino";

/** "Reino (a da casa)": a preset's name in words. */
export function presetName(preset: string): string {
  return (PRESETS as string[]).includes(preset) ? t(`presetName_${preset}` as Key) : preset;
}

/** What sets a preset apart: its bonuses, knock limit, Oklahoma, layoffs. */
export function presetAbout(preset: string): string | null {
  return (PRESETS as string[]).includes(preset) ? t(`presetAbout_${preset}` as Key) : null;
}

export function DeckPicker({ value, onPick }: { value: DeckDesign; onPick: (d: DeckDesign) => void }) {
  return (
    <div class="deck-picker" role="radiogroup" aria-label={t("deck")}>
      {DECK_DESIGNS.map((d) => (
        <button
          type="button"
          key={d}
          role="radio"
          aria-checked={value === d}
          class={`deck-choice deck-${d}${value === d ? " chosen" : ""}`}
          onClick={() => onPick(d)}
        >
          <span class="deck-sample" aria-hidden="true">
            <CardFace code="QH" small labelled={false} />
            <CardBack small />
          </span>
          <span>{t(`deckDesign_${d}` as Key)}</span>
        </button>
      ))}
    </div>
  );
}

export function NameField({
  value,
  onInput,
  missing = false,
}: {
  value: string;
  onInput: (v: string) => void;
  /** Asked to play without a name: say what to do, beside the field. */
  missing?: boolean;
}) {
  return (
    <label class="field">
      <span>{t("yourName")}</span>
      <input
        name="name"
        value={value}
        maxLength={40}
        autoComplete="nickname"
        required
        aria-invalid={missing || undefined}
        aria-describedby={missing ? "name-needed" : undefined}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      {missing && (
        <span id="name-needed" class="error" role="alert">
          {t("nameNeeded")}
        </span>
      )}
    </label>
  );
}

export function StartPage({ switchLang }: { switchLang: () => void }) {
  const [name, setName] = useState(me()?.name ?? "");
  const [deck, setDeck] = useState<DeckDesign>(deckPref());
  const [preset, setPreset] = useState<Preset>(DEFAULT_PRESET);
  const [target, setTarget] = useState(100);
  const [knockLimit, setKnockLimit] = useState(10);
  const [time, setTime] = useState<TimeChoice>("none");
  const [hints, setHints] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [nameMissing, setNameMissing] = useState(false);
  const [busy, setBusy] = useState(false);

  const pickDeck = (d: DeckDesign) => {
    setDeck(d);
    setDeckPref(d);
  };

  async function create(bot: BotLevel | null): Promise<void> {
    const trimmed = name.trim();
    if (!trimmed) {
      setNameMissing(true);
      (document.querySelector("input[name=name]") as HTMLInputElement | null)?.focus();
      return;
    }
    askPermission();
    setBusy(true);
    setError(null);
    setNameMissing(false);
    try {
      await ensurePlayer(trimmed);
      listen();
      const rules: Record<string, number> = {};
      if (target !== 100) rules.target = target;
      if (knockLimit !== 10 && preset !== "oklahoma") rules.knock_limit = knockLimit;
      const clock = TIME_CHOICES[time];
      const table = await api.createTable({
        preset,
        rules,
        deck_design: deck,
        rated: false,
        hints,
        ...(clock ? { clock: { ...clock } } : {}),
      });
      rememberTable(table.table_id);
      if (bot) {
        await api.seatBot(table.table_id, bot);
        await api.start(table.table_id);
      }
      navigate(`/t/${table.table_id}`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
      setBusy(false);
    }
  }

  return (
    <div class={`page start deck-${deck}`}>
      <header class="topbar">
        <h1>{t("title")}</h1>
        <button type="button" class="link" onClick={switchLang} lang={t("language") === "English" ? "en" : "pt"}>
          {t("language")}
        </button>
      </header>
      <main class="start-main">
        <p class="tagline">{t("tagline")}</p>
        <LobbyLink />
        <a class="tour-entry" href="/tournaments" onClick={(e) => { e.preventDefault(); navigate("/tournaments"); }}>{t("tournaments")} →</a>
        <form class="panel" onSubmit={(e) => e.preventDefault()}>
          <NameField value={name} onInput={setName} missing={nameMissing && !name.trim()} />
          <fieldset>
            <legend>{t("deck")}</legend>
            <DeckPicker value={deck} onPick={pickDeck} />
          </fieldset>
          <fieldset class="rules">
            <legend>{t("rules")}</legend>
            <label class="field">
              <span>{t("preset")}</span>
              <select
                name="preset"
                value={preset}
                aria-describedby="preset-about"
                onChange={(e) => setPreset(e.currentTarget.value as Preset)}
              >
                {PRESETS.map((p) => (
                  <option key={p} value={p}>
                    {presetName(p)}
                  </option>
                ))}
              </select>
            </label>
            <p id="preset-about" class="preset-about" data-preset={preset} aria-live="polite">
              {presetAbout(preset)}
            </p>
            <label class="field">
              <span>{t("target")}</span>
              <input
                name="target"
                type="number"
                min={1}
                max={1000}
                value={target}
                onInput={(e) => setTarget(Number(e.currentTarget.value) || 100)}
              />
            </label>
            <label class="field">
              <span>{t("timeControl")}</span>
              <select name="time" value={time} onChange={(e) => setTime(e.currentTarget.value as TimeChoice)}>
                {(Object.keys(TIME_CHOICES) as TimeChoice[]).map((c) => (
                  <option key={c} value={c}>
                    {t(`time_${c}` as Key)}
                  </option>
                ))}
              </select>
            </label>
            {preset !== "oklahoma" && (
              <label class="field">
                <span>{t("knockLimit")}</span>
                <input
                  name="knock_limit"
                  type="number"
                  min={0}
                  max={10}
                  value={knockLimit}
                  onInput={(e) => setKnockLimit(Number(e.currentTarget.value))}
                />
              </label>
            )}
            <label class="check">
              <input name="hints" type="checkbox" checked={hints} onChange={(e) => setHints(e.currentTarget.checked)} />
              <span>{t("hintsOption")}</span>
            </label>
          </fieldset>
          <section class="choices">
            <div>
              <h2>{t("playBot")}</h2>
              <div class="bots">
                {BOT_LEVELS.map((level) => (
                  <button type="button" key={level} class="primary bot" disabled={busy} onClick={() => void create(level)}>
                    <b>{BOT_NAMES[level]}</b>
                    <small>{t(level)}</small>
                  </button>
                ))}
              </div>
            </div>
            <div>
              <h2>{t("invite")}</h2>
              <button type="button" class="primary" disabled={busy} onClick={() => void create(null)}>
                {t("createInvite")}
              </button>
            </div>
          </section>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
        </form>
        {me() && (
          <p class="profile-link">
            <a href={`/p/${me()!.id}`} onClick={(e) => { e.preventDefault(); navigate(`/p/${me()!.id}`); }}>
              {t("myProfile")}
            </a>
          </p>
        )}
        {me() && <MyTables />}
      </main>
    </div>
  );
}

function seatLabel(table: TableOut, seat: number): string {
  const s = table.seats[seat];
  return s?.player?.name ?? s?.bot_name ?? "—";
}

function MyTables() {
  const [tables, setTables] = useState<TableOut[]>([]);
  const [matches, setMatches] = useState<MatchRecord[]>([]);
  useEffect(() => {
    void Promise.all(rememberedTables().map((id) => api.table(id).catch(() => null))).then((all) =>
      setTables(all.filter((x): x is TableOut => x !== null)),
    );
    void api.matches(10).then(setMatches, () => setMatches([]));
  }, []);
  const status = (table: TableOut): string => {
    const game = table.game;
    if (!game) return t("waiting");
    if (game.match.status === "finished") return t("over");
    const turn = game.hand.phase === "over" ? null : game.hand.turn;
    if (turn === null) return t("result");
    return turn === table.you ? t("yourTurn") : t("theirTurn", { name: seatLabel(table, turn) });
  };
  return (
    <section class="panel lists">
      <div>
        <h2>{t("myTables")}</h2>
        {tables.length === 0 && <p>{t("noTables")}</p>}
        <ul class="tables">
          {tables.map((table) => {
            const s = status(table);
            const opp = table.you === null ? `${seatLabel(table, 0)} × ${seatLabel(table, 1)}` : seatLabel(table, 1 - table.you);
            return (
              <li key={table.table_id}>
                <a href={`/t/${table.table_id}`} onClick={(e) => { e.preventDefault(); navigate(`/t/${table.table_id}`); }}>
                  {t("vs")} {opp}
                </a>{" "}
                <span class={s === t("yourTurn") ? "badge hot" : "badge"}>{s}</span>
              </li>
            );
          })}
        </ul>
        <PushToggle />
      </div>
      <div>
        <h2>{t("finished")}</h2>
        {matches.length === 0 && <p>{t("noMatches")}</p>}
        <ul class="matches">
          {matches.map((m) => (
            <li key={`${m.table_id}-${m.match_number}`}>
              <span class={m.result === "win" ? "badge win" : "badge"}>{t(m.result === "win" ? "won" : "lost")}</span>{" "}
              {t("vs")} {m.opponent?.name ?? m.opponent_bot?.name ?? "?"} · {m.final_scores.you}–{m.final_scores.opponent}
              {m.reason === "resignation" ? ` (${t("byResignation")})` : ""}
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
