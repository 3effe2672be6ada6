// An invite link (`/t/<id>?invite=<code>`): before taking a seat, say whose table it is and
// what it plays (rated or not, the clock and what a timeout does), and ask. A link whose
// invite belongs to another table than the one it names seats nobody.
import { useEffect, useState } from "preact/hooks";
import { api, ensurePlayer } from "./api";
import { t } from "./i18n";
import { listen } from "./notify";
import { deckPref, setDeckPref } from "./prefs";
import { navigate } from "./router";
import { DeckPicker, NameField, presetAbout, presetName } from "./start";
import type { DeckDesign, InviteOut } from "./types";

/** What the page does with the link's invite. */
export type InviteCheck =
  | { kind: "ask"; invite: InviteOut }
  | { kind: "mismatch" }
  // Nothing to ask: already seated here, seat 1 taken, or an invite that is no more.
  | { kind: "watch" };

export async function checkInvite(tableId: string, code: string): Promise<InviteCheck> {
  let invite: InviteOut;
  try {
    invite = await api.invite(code);
  } catch {
    return { kind: "watch" };
  }
  if (invite.table_id !== tableId) return { kind: "mismatch" };
  const view = await api.table(tableId);
  if (view.you !== null || !invite.seat_open) return { kind: "watch" };
  return { kind: "ask", invite };
}

/** "45 s", "10 min", "1 h 30 min", "3 d": a time control's length. */
function duration(total: number): string {
  const s = Math.round(total);
  if (s < 60) return `${s} s`;
  if (s < 3600) return s % 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s / 60} min`;
  if (s < 86400) {
    const m = Math.floor((s % 3600) / 60);
    return m ? `${Math.floor(s / 3600)} h ${m} min` : `${Math.floor(s / 3600)} h`;
  }
  const h = Math.floor((s % 86400) / 3600);
  return h ? `${Math.floor(s / 86400)} d ${h} h` : `${Math.floor(s / 86400)} d`;
}

function clockLines(invite: InviteOut): string[] {
  const clock = invite.clock;
  if (clock.control === "none") return [t("inviteNoClock")];
  const time =
    clock.control === "per_move"
      ? t("invitePerMove", { time: duration(clock.seconds) })
      : t("inviteBank", { time: duration(clock.seconds), bonus: duration(clock.bonus) });
  return [time, t(`policy_${clock.policy}`)];
}

/** The rules a table plays, in words: the variant and its target, what sets the variant
 * apart (its bonuses, knock limit, Oklahoma, layoffs), and a knock limit changed from 10. */
function rulesLines(invite: InviteOut): string[] {
  const rules = invite.rules;
  const lines = [t("inviteVariant", { preset: presetName(invite.preset), n: Number(rules.target ?? 100) })];
  const about = presetAbout(invite.preset);
  if (about) lines.push(about);
  const knock = Number(rules.knock_limit ?? 10);
  if (!rules.oklahoma && knock !== 10) lines.push(t("inviteKnock", { n: knock }));
  return lines;
}

/** Who invites, and the table's rules and clock (what the invitee sees before choosing). */
export function InviteTerms({ invite }: { invite: InviteOut }) {
  return (
    <>
      <p class="inviter">{invite.inviter ? t("inviteFrom", { name: invite.inviter.name }) : t("inviteSomeone")}</p>
      <ul class="terms">
        {rulesLines(invite).map((line, i) => (
          <li key={line} data-term={i === 0 ? "variant" : "rules"}>
            {line}
          </li>
        ))}
        <li data-term="rated" class={invite.rated ? "rated" : undefined}>
          {invite.rated ? t("inviteRated") : t("inviteCasual")}
        </li>
        {invite.hints && <li data-term="hints">{t("hintsOn")}</li>}
        {clockLines(invite).map((line) => (
          <li key={line} data-term="clock">
            {line}
          </li>
        ))}
        {invite.clock.control !== "none" && invite.seat_open && <li data-term="abort">{t("inviteAbortNote")}</li>}
      </ul>
    </>
  );
}

/** An invite link opened by someone with no name yet: the invite's terms, a name to take the
 * seat, or watching at once without one (and a late visitor, the seat taken, just watches). */
export function InviteGate({
  tableId,
  code,
  onPlayer,
  onWatch,
}: {
  tableId: string;
  code: string;
  onPlayer: () => void;
  onWatch: () => void;
}) {
  // "none": no such invite (any more); "mismatch": another table's.
  const [invite, setInvite] = useState<InviteOut | null | "none" | "mismatch">(null);
  const [name, setName] = useState("");
  const [missing, setMissing] = useState(false);
  const [deck, setDeck] = useState<DeckDesign>(deckPref());
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void api.invite(code).then(
      (found) => setInvite(found.table_id === tableId ? found : "mismatch"),
      () => setInvite("none"),
    );
  }, [code]);
  if (invite === null) return <p class="loading">{t("loading")}</p>;
  if (invite === "mismatch") return <InviteMismatch onWatch={onWatch} />;
  const open = invite !== "none" && invite.seat_open;
  const join = async () => {
    if (!name.trim()) {
      setMissing(true);
      (document.querySelector("input[name=name]") as HTMLInputElement | null)?.focus();
      return;
    }
    setDeckPref(deck);
    try {
      await ensurePlayer(name.trim());
      listen();
      onPlayer();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  };
  return (
    <section class="panel invite-prompt invite-gate" aria-labelledby="invite-title" data-table={tableId}>
      <h2 id="invite-title">{t("inviteTitle")}</h2>
      {invite !== "none" && <InviteTerms invite={invite} />}
      {open ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void join();
          }}
        >
          <p>{t("inviteOr")}</p>
          <NameField value={name} onInput={setName} missing={missing && !name.trim()} />
          <DeckPicker value={deck} onPick={setDeck} />
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
          <div class="row">
            <button type="submit" class="primary big">
              {t("inviteAccept")}
            </button>
            <button type="button" class="link" onClick={onWatch}>
              {t("inviteWatchNoName")}
            </button>
          </div>
        </form>
      ) : (
        <div class="row">
          <button type="button" class="primary big" onClick={onWatch}>
            {t("inviteWatch")}
          </button>
        </div>
      )}
    </section>
  );
}

export function InvitePrompt({
  invite,
  busy,
  onAccept,
  onWatch,
}: {
  invite: InviteOut;
  busy: boolean;
  onAccept: () => void;
  onWatch: () => void;
}) {
  return (
    <section class="panel invite-prompt" aria-labelledby="invite-title" data-table={invite.table_id}>
      <h2 id="invite-title">{t("inviteTitle")}</h2>
      <InviteTerms invite={invite} />
      <div class="row">
        <button type="button" class="primary big" disabled={busy} onClick={onAccept}>
          {t("inviteAccept")}
        </button>
        <button type="button" class="link" disabled={busy} onClick={onWatch}>
          {t("inviteWatch")}
        </button>
      </div>
    </section>
  );
}

export function InviteMismatch({ onWatch }: { onWatch: () => void }) {
  return (
    <section class="panel invite-prompt mismatch" role="alert" aria-labelledby="mismatch-title">
      <h2 id="mismatch-title">{t("inviteMismatchTitle")}</h2>
      <p>{t("inviteMismatch")}</p>
      <div class="row">
        <button
          type="button"
          class="primary"
          onClick={() => {
            navigate("/");
          }}
        >
          {t("home")}
        </button>
        <button type="button" class="link" onClick={onWatch}>
          {t("inviteMismatchWatch")}
        </button>
      </div>
    </section>
  );
}
