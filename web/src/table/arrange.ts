// The order the player keeps the hand in. The view sends the hand in its best arrangement (melds
// first); once the player moves a card by hand the page keeps that order for the hand (a card
// drawn joins at the right end), and ORGANIZAR gives the view's arrangement back.

const orders = new Map<string, string[]>();

/** The hand in the player's order, or the view's when the player has not moved a card. */
export function handOrder(key: string, arranged: string[]): string[] {
  const custom = orders.get(key);
  if (!custom) return arranged;
  const held = new Set(arranged);
  const kept = custom.filter((c) => held.has(c));
  const known = new Set(kept);
  return [...kept, ...arranged.filter((c) => !known.has(c))];
}

/** Put ``card`` at place ``to`` (0-based, among the others) and keep that order. */
export function moveCard(key: string, current: string[], card: string, to: number): string[] {
  const order = current.filter((c) => c !== card);
  order.splice(Math.max(0, Math.min(to, order.length)), 0, card);
  orders.set(key, order);
  return order;
}

/** ORGANIZAR: back to the view's arrangement, melds together. */
export function arrange(key: string): void {
  orders.delete(key);
}

/** Runs of neighbouring cards of one meld (a loose card is a run of its own): each run is laid
 * out as one piece, so a narrow screen never splits a meld across two rows. */
export function runs(order: string[], meldOf: Map<string, number>): string[][] {
  const out: string[][] = [];
  for (const c of order) {
    const last = out[out.length - 1];
    const m = meldOf.get(c);
    if (last && m !== undefined && meldOf.get(last[last.length - 1]) === m) last.push(c);
    else out.push([c]);
  }
  return out;
}
