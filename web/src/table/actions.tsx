// The action bar: the moves the view lists beside the hand (take or pass the upcard, draw, gin,
// knock with a card), as one toolbar the arrow keys walk.
import { cardText } from "../cards";
import { t } from "../i18n";
import type { Legal } from "../types";
import { focusHand } from "./hand";

export function ActionBar(props: {
  legal: Legal;
  actions: Set<string>;
  selected: string | null;
  move: (path: string, body?: Record<string, unknown>) => void;
}) {
  const { legal, actions, selected, move } = props;
  const knocks = legal.knock_discards.filter((k) => k.deadwood > 0);
  const knock = knocks.find((k) => k.card === selected) ?? [...knocks].sort((a, b) => a.deadwood - b.deadwood)[0];
  const gin = legal.gin_discards.includes(selected ?? "") ? selected : legal.gin_discards[0];
  const buttons: { key: string; label: string; run: () => void; cls?: string }[] = [];
  if (actions.has("take_upcard")) buttons.push({ key: "take", label: t("takeUpcard"), run: () => move("moves/take-upcard") });
  if (actions.has("pass")) buttons.push({ key: "pass", label: t("pass"), run: () => move("moves/pass") });
  if (actions.has("draw_stock")) buttons.push({ key: "stock", label: t("drawStock"), run: () => move("moves/draw", { source: "stock" }) });
  if (actions.has("draw_discard")) buttons.push({ key: "pile", label: t("drawDiscard"), run: () => move("moves/draw", { source: "discard" }) });
  if (legal.can_big_gin) buttons.push({ key: "biggin", label: t("bigGin"), run: () => move("moves/big-gin"), cls: "gold" });
  if (gin) buttons.push({ key: "gin", label: t("gin"), run: () => move("moves/knock", { card: gin }), cls: "gold" });
  if (knock)
    buttons.push({
      key: "knock",
      label: t("knockWith", { card: cardText(knock.card), dw: knock.deadwood }),
      run: () => move("moves/knock", { card: knock.card }),
      cls: "knock",
    });
  const onKey = (e: KeyboardEvent) => {
    const all = Array.from(document.querySelectorAll<HTMLButtonElement>(".actions button"));
    const i = all.indexOf(e.currentTarget as HTMLButtonElement);
    if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      all[(i + (e.key === "ArrowRight" ? 1 : all.length - 1)) % all.length]?.focus();
    } else if (e.key === "ArrowDown") {
      e.preventDefault();
      focusHand();
    }
  };
  return (
    <div class="actions" role="toolbar" aria-label={t("actionsBar")}>
      {buttons.map((b) => (
        <button type="button" key={b.key} data-action={b.key} class={`action ${b.cls ?? ""}`} onClick={b.run} onKeyDown={onKey}>
          {b.label}
        </button>
      ))}
    </div>
  );
}
