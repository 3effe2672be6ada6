// Card motion: a card that changed place between two renders (drawn, discarded, taken from the
// pile, knocked with) slides from where it was to where it is now, in 260 ms. A new card with
// no earlier place comes from the stock (a draw) or from the opponent's seat (a discard); the
// opponent's new face-down card slides from the stock. Any key or touch ends the motions at
// once; with `prefers-reduced-motion` nothing moves.

type Place = "hand" | "pile" | "known";
interface Seen {
  place: Place;
  rect: DOMRect;
}

const DURATION = 260;
const running = new Set<Animation>();
const still = () => window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;

function skipAll(): void {
  for (const a of running) a.finish();
  running.clear();
}
document.addEventListener("pointerdown", skipAll, true);
document.addEventListener("keydown", skipAll, true);

function placeOf(el: Element): Place | null {
  if (el.closest(".pile-all, .result-board")) return null;
  if (el.closest(".hand")) return "hand";
  if (el.closest(".pile-discard")) return "pile";
  if (el.closest(".known")) return "known";
  return null;
}

/** The cards on the board now, by code: the element that moves (the face) and its place. */
function cardsIn(root: HTMLElement): Map<string, { el: HTMLElement; place: Place }> {
  const out = new Map<string, { el: HTMLElement; place: Place }>();
  for (const el of Array.from(root.querySelectorAll<HTMLElement>(".card.face[data-card]"))) {
    const place = placeOf(el);
    const code = el.dataset.card;
    if (place && code && !out.has(code)) out.set(code, { el, place });
  }
  return out;
}

function slide(el: HTMLElement, from: DOMRect, to: DOMRect): void {
  const dx = from.left + from.width / 2 - (to.left + to.width / 2);
  const dy = from.top + from.height / 2 - (to.top + to.height / 2);
  if (Math.abs(dx) < 3 && Math.abs(dy) < 3) return;
  const a = el.animate([{ transform: `translate(${dx}px, ${dy}px)`, zIndex: 8 }, { transform: "translate(0, 0)", zIndex: 8 }], {
    duration: DURATION,
    easing: "cubic-bezier(.2,.7,.3,1)",
  });
  running.add(a);
  a.onfinish = a.oncancel = () => running.delete(a);
}

/** One board's memory of where its cards were at the last render. */
export class Motion {
  private seen = new Map<string, Seen>();
  private backs = -1;
  private first = true;

  /** Call after each render (a layout effect): slide what moved, then remember where all is. */
  after(root: HTMLElement | null, knocked: boolean): void {
    if (!root) return;
    // Where everything is without motion: what is still moving stops at its place first.
    for (const a of running) a.cancel();
    running.clear();
    const now = new Map([...cardsIn(root)].map(([code, c]) => [code, { ...c, rect: c.el.getBoundingClientRect() }]));
    const stock = root.querySelector(".pile.stock .card")?.getBoundingClientRect();
    const opponent = root.querySelector(".seat-zone .backs, .seat-zone")?.getBoundingClientRect();
    const backs = Array.from(root.querySelectorAll<HTMLElement>(".seat-zone .backs .card"));
    if (!this.first && !still()) {
      const arrived = [...now.keys()].filter((c) => !this.seen.has(c));
      // A deal or a reload brings many cards at once: those appear where they are.
      const dealt = arrived.length > 2;
      for (const [code, { el, place, rect }] of now) {
        const before = this.seen.get(code);
        if (before) {
          // A card that stayed in the hand only slides when it changed its place in the row.
          if (before.place !== place || (place === "hand" && Math.abs(before.rect.left - rect.left) > 4)) slide(el, before.rect, rect);
        } else if (!dealt) {
          const from = place === "hand" ? stock : place === "pile" ? opponent : undefined;
          if (from) slide(el, from, rect);
        }
      }
      const last = backs[backs.length - 1];
      if (!dealt && this.backs >= 0 && backs.length === this.backs + 1 && stock && last) slide(last, stock, last.getBoundingClientRect());
      if (knocked) {
        const pile = root.querySelector<HTMLElement>(".pile-discard");
        const a = pile?.animate([{ transform: "scale(1)" }, { transform: "scale(1.12)" }, { transform: "scale(1)" }], { duration: 420 });
        if (a) {
          running.add(a);
          a.onfinish = a.oncancel = () => running.delete(a);
        }
      }
    }
    this.first = false;
    this.backs = backs.length;
    this.seen = new Map([...now].map(([code, { place, rect }]) => [code, { place, rect }]));
  }
}
