// A table with hints on: the seat to move may ask what LUNA would play now, from its own view.
import { useState } from "preact/hooks";
import { api, ApiError } from "../api";
import { t } from "../i18n";
import { optionText } from "../replay/moves";
import type { TableOut } from "../types";
import "./hint.css";

export function HintButton({ view }: { view: TableOut }) {
  const [said, setSaid] = useState<{ version: number; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const ask = () => {
    setBusy(true);
    api.hint(view.table_id).then(
      (h) => setSaid({ version: h.version, text: t("hintSays", { move: optionText(h.move) }) }),
      (e: unknown) => setSaid({ version: view.version, text: e instanceof ApiError ? e.message : String(e) }),
    ).finally(() => setBusy(false));
  };
  return (
    <div class="hint">
      <button type="button" class="link hint-ask" disabled={busy} onClick={ask}>
        {t("askHint")}
      </button>
      {said && said.version === view.version && (
        <p class="hint-says" role="status">
          {said.text}
        </p>
      )}
    </div>
  );
}
