// The table's chat: its lines from the log, and a seat's field to say one.
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import { t } from "../i18n";
import type { TableLive } from "../live";

export function Chat({ live, open, onClose }: { live: TableLive; open: boolean; onClose: () => void }) {
  const [text, setText] = useState("");
  const lines = live.log.filter((e) => e.type === "chat");
  const list = useRef<HTMLOListElement>(null);
  useEffect(() => {
    list.current?.scrollTo(0, list.current.scrollHeight);
  }, [lines.length]);
  const view = live.view;
  return (
    <aside class={`chat${open ? " open" : ""}`} aria-label={t("chat")}>
      <div class="chat-head">
        <h2>{t("chat")}</h2>
        <button type="button" class="link chat-close" onClick={onClose}>
          {t("close")}
        </button>
      </div>
      {lines.length === 0 && <p class="empty">{t("noChat")}</p>}
      <ol class="lines" ref={list} aria-live="polite">
        {lines.map((e) => (
          <li key={e.seq}>
            <b class="name" title={e.player?.name}>{e.player?.name ?? "?"}</b>
            : {e.text}
          </li>
        ))}
      </ol>
      {view?.role !== "seat" ? (
        <p class="empty">{t("chatSeatsOnly")}</p>
      ) : (
      <form
        class="say"
        onSubmit={(e) => {
          e.preventDefault();
          const line = text.trim();
          if (!line) return;
          setText("");
          void api.chat(live.tableId, line).catch((err: unknown) => live.fail(err));
        }}
      >
        <input aria-label={t("say")} placeholder={t("message")} value={text} maxLength={500} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit">{t("send")}</button>
      </form>
      )}
    </aside>
  );
}
