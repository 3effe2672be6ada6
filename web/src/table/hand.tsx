// The player's hand: its cards in meld order, picked and thrown by click, tap, drag or keys.
import { useEffect, useRef, useState } from "preact/hooks";
import { CardFace } from "../cards";
import { cardName, t } from "../i18n";
import type { GameView, Legal } from "../types";

let handFocus = 0;
let keyboardUsed = false;
document.addEventListener("keydown", () => (keyboardUsed = true), true);
document.addEventListener("pointerdown", () => (keyboardUsed = false), true);

export function focusHand(): void {
  const cards = Array.from(document.querySelectorAll<HTMLButtonElement>(".hand .hand-card"));
  cards[Math.min(handFocus, cards.length - 1)]?.focus();
}

function focusUp(): void {
  const target =
    document.querySelector<HTMLButtonElement>(".actions button") ??
    document.querySelector<HTMLButtonElement>("[data-nav=up]") ??
    document.querySelector<HTMLButtonElement>(".result-board button");
  target?.focus();
}

export function MyHand(props: {
  game: GameView;
  legal: Legal | undefined;
  selected: string | null;
  onSelect: (card: string | null) => void;
  onDiscard: (card: string) => void;
  lastDrawn: string | null;
}) {
  const { game, legal, selected, onSelect, onDiscard, lastDrawn } = props;
  const yours = game.hand.yours!;
  const discardPhase = !!legal?.actions.includes("discard");
  const [focus, setFocus] = useState(Math.min(handFocus, yours.cards.length - 1));
  const drag = useRef<{ card: string; x: number; y: number; el: HTMLElement; moved: boolean } | null>(null);
  const suppressClick = useRef(false);
  handFocus = focus;

  const meldOf = new Map<string, number>();
  const meldEnd = new Set<string>();
  yours.melds.forEach((meld, i) => {
    meld.forEach((c) => meldOf.set(c, i));
    meldEnd.add(meld[meld.length - 1]);
  });

  // A keyboard player whose focused control vanished (a discard, a draw) comes back to the hand.
  useEffect(() => {
    if (keyboardUsed && (document.activeElement === document.body || !document.activeElement)) focusHand();
  });

  const click = (card: string) => {
    if (suppressClick.current) {
      suppressClick.current = false;
      return;
    }
    if (!discardPhase || card === legal?.cannot_discard) return;
    if (selected === card) onDiscard(card);
    else onSelect(card);
  };

  const onKeyDown = (e: KeyboardEvent, i: number) => {
    const n = yours.cards.length;
    let next = i;
    if (e.key === "ArrowRight") next = (i + 1) % n;
    else if (e.key === "ArrowLeft") next = (i + n - 1) % n;
    else if (e.key === "Home") next = 0;
    else if (e.key === "End") next = n - 1;
    else if (e.key === "ArrowUp") {
      e.preventDefault();
      focusUp();
      return;
    } else return;
    e.preventDefault();
    setFocus(next);
    handFocus = next;
    const buttons = document.querySelectorAll<HTMLButtonElement>(".hand .hand-card");
    buttons[next]?.focus();
  };

  const onPointerDown = (e: PointerEvent, card: string) => {
    if (!discardPhase || card === legal?.cannot_discard || e.button !== 0) return;
    drag.current = { card, x: e.clientX, y: e.clientY, el: e.currentTarget as HTMLElement, moved: false };
    (e.currentTarget as HTMLElement).setPointerCapture?.(e.pointerId);
  };
  const onPointerMove = (e: PointerEvent) => {
    const d = drag.current;
    if (!d) return;
    const dx = e.clientX - d.x;
    const dy = e.clientY - d.y;
    if (!d.moved && Math.hypot(dx, dy) < 10) return;
    d.moved = true;
    d.el.classList.add("dragging");
    d.el.style.transform = `translate(${dx}px, ${dy}px)`;
    const over = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-drop=discard]");
    document.querySelector("[data-drop=discard]")?.classList.toggle("drop-over", !!over);
  };
  const onPointerUp = (e: PointerEvent) => {
    const d = drag.current;
    drag.current = null;
    if (!d || !d.moved) return;
    d.el.classList.remove("dragging");
    d.el.style.transform = "";
    suppressClick.current = true;
    window.setTimeout(() => (suppressClick.current = false), 0);
    const pile = document.querySelector("[data-drop=discard]");
    pile?.classList.remove("drop-over");
    d.el.style.visibility = "hidden";
    const over = document.elementFromPoint(e.clientX, e.clientY)?.closest("[data-drop=discard]");
    d.el.style.visibility = "";
    if (over) onDiscard(d.card);
  };

  return (
    <section class="my-hand" aria-label={t("you")}>
      <div class="hand" role="group" aria-label={`${t("deadwood")} ${yours.deadwood}`}>
        {yours.cards.map((c, i) => {
          const sunk = c === legal?.cannot_discard;
          const meld = meldOf.get(c);
          const cls = [
            "hand-card",
            meld !== undefined ? `in-meld meld-${meld % 4}` : "loose",
            meldEnd.has(c) ? "meld-end" : "",
            sunk ? "sunk" : "",
            selected === c ? "selected" : "",
            lastDrawn === c ? "new" : "",
          ].join(" ");
          const extra = [sunk ? t("cannotDiscard") : "", selected === c ? t("selected") : "", meldEnd.has(c) ? t("meldEnd") : ""]
            .filter(Boolean)
            .join(", ");
          return (
            <button
              type="button"
              key={c}
              class={cls}
              data-card={c}
              tabIndex={i === focus ? 0 : -1}
              aria-label={extra ? `${cardName(c)}, ${extra}` : cardName(c)}
              aria-pressed={discardPhase ? selected === c : undefined}
              aria-disabled={sunk ? "true" : undefined}
              onClick={() => click(c)}
              onFocus={() => {
                setFocus(i);
                handFocus = i;
              }}
              onKeyDown={(e) => onKeyDown(e, i)}
              onPointerDown={(e) => onPointerDown(e, c)}
              onPointerMove={onPointerMove}
              onPointerUp={onPointerUp}
              onPointerCancel={onPointerUp}
            >
              <CardFace code={c} labelled={false} />
            </button>
          );
        })}
      </div>
    </section>
  );
}
