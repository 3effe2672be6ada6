// The player's hand: its cards in meld order (or the player's own), picked and thrown by click,
// tap, drag or keys; moved by drag or Shift+arrows; ORGANIZAR puts the melds back together.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { CardFace } from "../cards";
import { cardName, t } from "../i18n";
import type { GameView, Legal } from "../types";
import { arrange, handOrder, moveCard, runs } from "./arrange";

let handFocus = 0;
let keyboardUsed = false;
document.addEventListener("keydown", () => (keyboardUsed = true), true);
document.addEventListener("pointerdown", () => (keyboardUsed = false), true);
// An arrow key with nothing focused (a match started with the mouse, a button that went away)
// goes to the hand, so the keys work without a Tab first.
document.addEventListener("keydown", (e) => {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) return;
  if (!["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"].includes(e.key)) return;
  if (e.target !== document.body && e.target !== document.documentElement) return;
  if (!document.querySelector(".hand .hand-card") || document.querySelector(".overlay .menu")) return;
  e.preventDefault();
  focusHand();
});

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
  /** Which hand this is (table, match, hand number): the player's order is kept per hand. */
  orderKey: string;
  /** Controls of the hand's strip besides ORGANIZAR (DESISTIR on a phone). */
  tools?: ComponentChildren;
}) {
  const { game, legal, selected, onSelect, onDiscard, lastDrawn, orderKey, tools } = props;
  const yours = game.hand.yours!;
  const discardPhase = !!legal?.actions.includes("discard");
  const [focus, setFocus] = useState(Math.min(handFocus, yours.cards.length - 1));
  const [, setOrderVersion] = useState(0);
  const [said, setSaid] = useState("");
  const drag = useRef<{ card: string; x: number; y: number; el: HTMLElement; moved: boolean } | null>(null);
  const suppressClick = useRef(false);
  const refocus = useRef<string | null>(null);
  handFocus = focus;
  const order = handOrder(orderKey, yours.cards);

  const place = (card: string, to: number) => {
    const next = moveCard(orderKey, order, card, to);
    refocus.current = card;
    const at = next.indexOf(card);
    setFocus(at);
    handFocus = at;
    setSaid(t("cardMoved", { card: cardName(card), n: at + 1, of: next.length }));
    setOrderVersion((v) => v + 1);
  };

  const meldOf = new Map<string, number>();
  const meldEnd = new Set<string>();
  yours.melds.forEach((meld, i) => meld.forEach((c) => meldOf.set(c, i)));
  const pieces = runs(order, meldOf);
  // A meld's bar is where its run of cards ends (a meld the player split has a bar per piece).
  for (const piece of pieces) if (meldOf.has(piece[0])) meldEnd.add(piece[piece.length - 1]);

  // A keyboard player whose focused control vanished (a discard, a draw) comes back to the hand;
  // a card moved by keys keeps the focus.
  useEffect(() => {
    if (refocus.current) {
      document.querySelector<HTMLButtonElement>(`.hand .hand-card[data-card="${refocus.current}"]`)?.focus();
      refocus.current = null;
      return;
    }
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
    const n = order.length;
    if (e.shiftKey && ["ArrowLeft", "ArrowRight", "Home", "End"].includes(e.key)) {
      e.preventDefault();
      const to = e.key === "ArrowLeft" ? i - 1 : e.key === "ArrowRight" ? i + 1 : e.key === "Home" ? 0 : n - 1;
      if (to >= 0 && to < n && to !== i) place(order[i], to);
      return;
    }
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
    // Any card may be dragged to another place in the hand; onto the pile only a discard.
    if (e.button !== 0) return;
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
    document.querySelector("[data-drop=discard]")?.classList.toggle("drop-over", !!over && canThrow(d.card));
  };
  const canThrow = (card: string) => discardPhase && card !== legal?.cannot_discard && !!legal?.discards.includes(card);
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
    const under = document.elementFromPoint(e.clientX, e.clientY);
    d.el.style.visibility = "";
    const over = under?.closest("[data-drop=discard]");
    if (over) {
      if (canThrow(d.card)) onDiscard(d.card);
      return;
    }
    // Dropped on another card of the hand: the card takes that place.
    const target = under?.closest<HTMLElement>(".hand .hand-card");
    const to = target?.dataset.card ? order.indexOf(target.dataset.card) : -1;
    if (to >= 0 && target?.dataset.card !== d.card) place(d.card, to);
  };

  const button = (c: string, i: number) => {
    const sunk = c === legal?.cannot_discard;
    const meld = meldOf.get(c);
    const fresh = lastDrawn === c;
    const cls = [
      "hand-card",
      meld !== undefined ? `in-meld meld-${meld % 4}` : "loose",
      meldEnd.has(c) ? "meld-end" : "",
      sunk ? "sunk" : "",
      selected === c ? "selected" : "",
      fresh ? "new" : "",
    ].join(" ");
    const extra = [
      sunk ? t("cannotDiscard") : "",
      fresh && !sunk ? t("justDrawn") : "",
      selected === c ? t("selected") : "",
      meldEnd.has(c) ? t("meldEnd") : "",
    ]
      .filter(Boolean)
      .join(", ");
    return (
      <button
        type="button"
        key={c}
        class={cls}
        data-card={c}
        data-meld={meld}
        data-new={fresh ? t("newCard") : undefined}
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
  };

  let index = 0;
  return (
    <section class="my-hand" aria-label={t("you")}>
      <div class="hand-tools">
        <button
          type="button"
          class="arrange"
          onClick={() => {
            arrange(orderKey);
            setSaid(t("arrangeDone"));
            setOrderVersion((v) => v + 1);
          }}
        >
          {t("arrange")}
        </button>
        {tools}
        {/* The scoreboard's SOBRA again, where a phone's thumb is (the scoreboard scrolls away). */}
        <span class="deadwood-here" aria-hidden="true">
          {t("deadwood")} <b>{yours.deadwood}</b>
        </span>
        <span class="sr-only" role="status">
          {said}
        </span>
      </div>
      <div class="hand" role="group" aria-label={`${t("deadwood")} ${yours.deadwood}`}>
        {pieces.map((piece) => (
          <span key={piece[0]} class={meldOf.has(piece[0]) ? "run meld-run" : "run"}>
            {piece.map((c) => button(c, index++))}
          </span>
        ))}
      </div>
    </section>
  );
}
