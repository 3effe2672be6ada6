// Card faces and backs drawn with CSS (the deck design is a class on an ancestor: .deck-<name>).
import { cardName, t } from "./i18n";

const SUIT_SYMBOL: Record<string, string> = { C: "♣", D: "♦", H: "♥", S: "♠" };

export function rankLabel(code: string): string {
  return code[0] === "T" ? "10" : code[0];
}

export function suitSymbol(code: string): string {
  return SUIT_SYMBOL[code[1]] ?? "?";
}

/** "7♥": a card in running text. */
export function cardText(code: string): string {
  return rankLabel(code) + suitSymbol(code);
}

function suitClass(code: string): string {
  return `suit-${code[1]}`;
}

interface FaceProps {
  code: string;
  small?: boolean;
  extra?: string;
  /** Static cards are images for a screen reader; a card inside a button is named by it. */
  labelled?: boolean;
}

export function CardFace({ code, small, extra, labelled = true }: FaceProps) {
  const rank = rankLabel(code);
  const suit = suitSymbol(code);
  const court = "JQK".includes(code[0]);
  return (
    <span
      class={`card face ${suitClass(code)}${small ? " small" : ""}${extra ? " " + extra : ""}`}
      data-card={code}
      role={labelled ? "img" : undefined}
      aria-label={labelled ? cardName(code) : undefined}
      aria-hidden={labelled ? undefined : "true"}
    >
      {/* Drawn by CSS from data attributes: the card's only text is its name, read aloud. */}
      <span class="corner tl" data-r={rank} data-s={suit} />
      <span class={court ? "pip court" : "pip"} data-p={court ? rank : suit} />
      <span class="corner br" data-r={rank} data-s={suit} />
    </span>
  );
}

export function CardBack({ small, extra }: { small?: boolean; extra?: string }) {
  return (
    <span
      class={`card back${small ? " small" : ""}${extra ? " " + extra : ""}`}
      role="img"
      aria-label={t("hidden")}
    />
  );
}

/** A row of cards, one meld (or loose group) at a time, each group kept together. */
export function CardGroup({ cards, extra }: { cards: string[]; extra?: (code: string) => string }) {
  return (
    <span class="group">
      {cards.map((c) => (
        <CardFace key={c} code={c} small extra={extra?.(c)} />
      ))}
    </span>
  );
}
