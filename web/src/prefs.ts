// What this browser remembers besides the player: deck design and sound.
import type { DeckDesign } from "./types";
import { DECK_DESIGNS } from "./types";

export function deckPref(): DeckDesign {
  const stored = localStorage.getItem("ginrummy.deck") as DeckDesign | null;
  return stored && DECK_DESIGNS.includes(stored) ? stored : "classic";
}

export function setDeckPref(design: DeckDesign): void {
  localStorage.setItem("ginrummy.deck", design);
}

export function soundOn(): boolean {
  return localStorage.getItem("ginrummy.sound") !== "off";
}

export function setSound(on: boolean): void {
  localStorage.setItem("ginrummy.sound", on ? "on" : "off");
}

let audio: AudioContext | null = null;

/** A short tone (no audio files: the client works offline from the server alone). */
export function beep(freq = 660, ms = 90): void {
  if (!soundOn()) return;
  try {
    audio ??= new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = freq;
    gain.gain.value = 0.05;
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + ms / 1000);
  } catch {
    // No audio here: play on in silence.
  }
}
