// An invite link (`/t/<id>?invite=<code>`): before taking a seat, say whose table it is and
// what it plays (rated or not, the clock and what a timeout does), and ask. A link whose
// invite belongs to another table than the one it names seats nobody.
import { api } from "./api";
import { t } from "./i18n";
import { navigate } from "./router";
import type { InviteOut } from "./types";

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
  const target = Number(invite.rules.target ?? 100);
  return (
    <section class="panel invite-prompt" aria-labelledby="invite-title" data-table={invite.table_id}>
      <h2 id="invite-title">{t("inviteTitle")}</h2>
      <p class="inviter">
        {invite.inviter ? t("inviteFrom", { name: invite.inviter.name }) : t("inviteSomeone")}
      </p>
      <ul class="terms">
        <li data-term="variant">{t("inviteVariant", { preset: invite.preset, n: target })}</li>
        <li data-term="rated" class={invite.rated ? "rated" : undefined}>
          {invite.rated ? t("inviteRated") : t("inviteCasual")}
        </li>
        {invite.hints && <li data-term="hints">{t("hintsOn")}</li>}
        {clockLines(invite).map((line) => (
          <li key={line} data-term="clock">
            {line}
          </li>
        ))}
        {invite.clock.control !== "none" && <li data-term="abort">{t("inviteAbortNote")}</li>}
      </ul>
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
