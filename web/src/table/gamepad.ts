// A game controller (the Gamepad API, standard mapping) plays the table through the keyboard's
// own paths: the directional pad is the arrow keys (over the cards, up to the buttons and back),
// A or X chooses (a card: pick it, then throw it; a button: press it), Start is the menu (P),
// Back the sound (M). Inside the menu or the result board the pad walks their buttons.

const A = 0;
const X = 2;
const BACK = 8;
const START = 9;
const PAD: Record<number, string> = { 12: "ArrowUp", 13: "ArrowDown", 14: "ArrowLeft", 15: "ArrowRight" };

function key(name: string, target: Element = document.activeElement ?? document.body): void {
  target.dispatchEvent(new KeyboardEvent("keydown", { key: name, bubbles: true, cancelable: true }));
}

/** Within a dialog (the menu, the result board) the pad moves to the previous or next button. */
function walkDialog(dialog: Element, arrow: string): void {
  const all = Array.from(dialog.querySelectorAll<HTMLElement>("button:not([disabled]), summary, a[href], select, input"));
  if (!all.length) return;
  const i = all.indexOf(document.activeElement as HTMLElement);
  const back = arrow === "ArrowUp" || arrow === "ArrowLeft";
  const next = i < 0 ? 0 : (i + (back ? all.length - 1 : 1)) % all.length;
  all[next].focus();
}

function press(button: number): void {
  const active = document.activeElement;
  const dialog = document.querySelector(".overlay [role=dialog]");
  if (PAD[button]) {
    if (dialog) {
      walkDialog(dialog, PAD[button]);
      return;
    }
    key(PAD[button]);
  } else if (button === A || button === X) {
    if (active instanceof HTMLElement && active !== document.body) active.click();
    else key("ArrowRight"); // nothing chosen yet: go to the hand first
  } else if (button === START) {
    key("p", document.body);
  } else if (button === BACK) {
    key("m", document.body);
  }
}

/** Read the controllers each frame while one is connected; returns a stop function. */
export function startGamepad(): () => void {
  if (!("getGamepads" in navigator)) return () => undefined;
  const held = new Map<number, boolean[]>();
  let frame = 0;
  const poll = () => {
    frame = 0;
    const pads = navigator.getGamepads().filter((p): p is Gamepad => !!p);
    for (const pad of pads) {
      const before = held.get(pad.index) ?? [];
      const now = pad.buttons.map((b) => b.pressed);
      now.forEach((down, i) => {
        if (down && !before[i]) press(i);
      });
      held.set(pad.index, now);
    }
    if (pads.length) frame = requestAnimationFrame(poll);
  };
  const connected = () => {
    if (!frame) frame = requestAnimationFrame(poll);
  };
  window.addEventListener("gamepadconnected", connected);
  if (navigator.getGamepads().some((p) => !!p)) connected();
  return () => {
    window.removeEventListener("gamepadconnected", connected);
    if (frame) cancelAnimationFrame(frame);
  };
}
