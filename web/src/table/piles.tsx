// The stock and the discard pile: each a button when the view lists drawing from it; the whole
// pile (every card discarded and still there is public) opens under it.
import { useEffect, useRef } from "preact/hooks";
import { CardBack, CardFace } from "../cards";
import { cardName, t } from "../i18n";
import type { HandView } from "../types";

export function Piles(props: {
  hand: HandView;
  actions: Set<string>;
  stockEnding: boolean;
  move: (path: string, body?: Record<string, unknown>) => void;
}) {
  const { hand, actions, stockEnding, move } = props;
  const top_card = hand.discard_pile[hand.discard_pile.length - 1];
  const canDrawStock = actions.has("draw_stock");
  const canTakePile = actions.has("draw_discard") || actions.has("take_upcard");
  const takePile = () => move(actions.has("take_upcard") ? "moves/take-upcard" : "moves/draw", actions.has("take_upcard") ? {} : { source: "discard" });

  return (
    <>
      <div class={`pile stock${stockEnding ? " ending" : ""}`}>
        {canDrawStock ? (
          <button
            type="button"
            class="pile-button"
            data-nav="up"
            aria-label={t("stockCards", { n: hand.stock_size })}
            onClick={() => move("moves/draw", { source: "stock" })}
          >
            <CardBack />
          </button>
        ) : (
          <CardBack />
        )}
        <span class="pile-count">{t("stockCount", { n: hand.stock_size })}</span>
      </div>
      <div class="pile pile-discard" data-drop="discard">
        {top_card && canTakePile ? (
          <button type="button" class="pile-button" data-nav="up" aria-label={t("discardTop", { card: cardName(top_card) })} onClick={takePile}>
            <CardFace code={top_card} labelled={false} />
          </button>
        ) : top_card ? (
          <CardFace code={top_card} />
        ) : (
          <span class="card empty" aria-label={t("discardEmpty")} role="img" />
        )}
        <span class="pile-count">{t("discardPile")}</span>
        {hand.discard_pile.length > 1 && <WholePile cards={hand.discard_pile} />}
      </div>
    </>
  );
}

/** Every card of the pile, the first discarded first and the top last: the view's own list.
 * Open, it lies over the board: any press but on its summary, or Esc, closes it, so the
 * buttons under it are one press away. */
function WholePile({ cards }: { cards: string[] }) {
  const ref = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    const close = (e: Event) => {
      const open = ref.current;
      if (!open?.open) return;
      if (e instanceof KeyboardEvent) {
        if (e.key !== "Escape") return;
        e.stopPropagation(); // this Esc closes the list, not opens the menu (keys.ts)
      } else if (open.querySelector("summary")?.contains(e.target as Node)) return;
      open.open = false;
    };
    document.addEventListener("pointerdown", close, true);
    document.addEventListener("keydown", close, true);
    return () => {
      document.removeEventListener("pointerdown", close, true);
      document.removeEventListener("keydown", close, true);
    };
  }, []);
  return (
    <details class="pile-all" ref={ref}>
      <summary>{t("discardAll", { n: cards.length })}</summary>
      <div class="pile-all-cards" role="list" aria-label={t("discardAllTitle")}>
        {cards.map((c) => (
          <span role="listitem" key={c}>
            <CardFace code={c} small />
          </span>
        ))}
      </div>
    </details>
  );
}
