// The table page: waiting room, the hand in play, the result board, chat and menu.
import { useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { api, ensurePlayer, me, rememberTable } from "./api";
import { t } from "./i18n";
import { checkInvite, type InviteCheck, InviteMismatch, InvitePrompt } from "./invite";
import { TableLive } from "./live";
import { listen, yourTurn } from "./notify";
import { beep, deckPref, setDeckPref, setSound, soundOn } from "./prefs";
import { navigate } from "./router";
import { DeckPicker, NameField } from "./start";
import { Game } from "./table/board";
import { Chat } from "./table/chat";
import { Menu } from "./table/menu";
import { nameOf } from "./table/names";
import type { DeckDesign, TableOut } from "./types";
import { BOT_LEVELS, BOT_NAMES } from "./types";

export function TablePage(props: { id: string; invite: string | null; switchLang: () => void }) {
  const [player, setPlayer] = useState(me());
  if (!player) return <NameGate onDone={() => setPlayer(me())} />;
  return <Table {...props} />;
}

function NameGate({ onDone }: { onDone: () => void }) {
  const [name, setName] = useState("");
  const [deck, setDeck] = useState<DeckDesign>(deckPref());
  return (
    <div class={`page start deck-${deck}`}>
      <header class="topbar">
        <h1>{t("title")}</h1>
      </header>
      <main class="start-main">
        <form
          class="panel"
          onSubmit={(e) => {
            e.preventDefault();
            if (!name.trim()) return;
            setDeckPref(deck);
            void ensurePlayer(name.trim()).then(() => {
              listen();
              onDone();
            });
          }}
        >
          <NameField value={name} onInput={setName} />
          <DeckPicker value={deck} onPick={setDeck} />
          <button class="primary" type="submit">
            OK
          </button>
        </form>
      </main>
    </div>
  );
}

function useKeys(handlers: Record<string, () => void>): void {
  const ref = useRef(handlers);
  ref.current = handlers;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const target = e.target as HTMLElement;
      const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
      if (e.ctrlKey || e.metaKey || e.altKey || (typing && e.key !== "Escape")) return;
      const handler = ref.current[e.key.length === 1 ? e.key.toLowerCase() : e.key];
      if (handler) {
        e.preventDefault();
        handler();
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);
}

function Table({ id, invite, switchLang }: { id: string; invite: string | null; switchLang: () => void }) {
  const live = useMemo(() => new TableLive(id), [id]);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const [menu, setMenu] = useState(false);
  const [chatOpen, setChatOpen] = useState(false);
  const [sound, setSoundState] = useState(soundOn());
  // The link's invite: checked, then asked about (or refused) before the page plays or watches.
  const [asking, setAsking] = useState<InviteCheck | "checking" | null>(invite ? "checking" : null);
  const [joining, setJoining] = useState(false);
  const watch = () => {
    history.replaceState(null, "", `/t/${id}`);
    setAsking(null);
    live.start();
  };
  const accept = async () => {
    if (!invite) return;
    setJoining(true);
    try {
      await api.join(invite, deckPref(), id);
    } catch (e) {
      // Taken meanwhile, or no longer this table's: the page watches and says why.
      live.error = e instanceof Error ? e.message : String(e);
    }
    setJoining(false);
    watch();
  };

  useEffect(() => {
    const off = live.subscribe(() => rerender(0));
    live.onYourTurn = () => yourTurn(id);
    live.onEvent = (e) => {
      if (e.type === "discarded" || e.type === "knocked") beep(440, 50);
    };
    let cancelled = false;
    void (async () => {
      rememberTable(id);
      if (invite) {
        let check: InviteCheck = { kind: "watch" };
        try {
          check = await checkInvite(id, invite);
        } catch {
          // The table cannot be read: the page shows why once it watches.
        }
        if (cancelled) return;
        if (check.kind !== "watch") {
          setAsking(check); // nothing is joined until the player says so
          return;
        }
        history.replaceState(null, "", `/t/${id}`);
        setAsking(null);
      }
      if (!cancelled) live.start();
    })();
    return () => {
      cancelled = true;
      off();
      live.stop();
    };
  }, [live]);

  useKeys({
    p: () => setMenu((m) => !m),
    Escape: () => setMenu((m) => !m),
    m: () => {
      setSound(!soundOn());
      setSoundState(soundOn());
    },
    f: () => {
      if (document.fullscreenElement) void document.exitFullscreen();
      else void document.documentElement.requestFullscreen?.().catch(() => undefined);
    },
  });

  const view = live.view;
  if (live.error === "table_not_found") {
    return (
      <div class="page">
        <p class="panel">{t("notFound")}</p>
      </div>
    );
  }
  const deck = (view && view.you !== null && view.seats[view.you]?.deck_design) || deckPref();
  const chatCount = live.log.filter((e) => e.type === "chat").length;
  return (
    <div class={`page table deck-${deck}`}>
      <header class="topbar">
        <a
          class="home"
          href="/"
          onClick={(e) => {
            e.preventDefault();
            navigate("/");
          }}
        >
          {t("title")}
        </a>
        <span class={`conn ${live.connection}`} role="status">
          {live.connection === "offline" ? t("offline") : <span class="sr-only">{t("online")}</span>}
        </span>
        {asking === null && (
          <>
            <button type="button" class="chat-toggle" aria-expanded={chatOpen} onClick={() => setChatOpen(!chatOpen)}>
              {t("chat")}
              {chatCount > 0 && <span class="count">{chatCount}</span>}
            </button>
            <button type="button" class="menu-button" aria-haspopup="dialog" onClick={() => setMenu(true)}>
              ☰ {t("menu")}
            </button>
          </>
        )}
      </header>
      <div class={asking === null ? "layout" : "layout alone"}>
        <main class="board">
          {asking !== null && asking !== "checking" && asking.kind === "ask" && (
            <InvitePrompt invite={asking.invite} busy={joining} onAccept={() => void accept()} onWatch={watch} />
          )}
          {asking !== null && asking !== "checking" && asking.kind === "mismatch" && <InviteMismatch onWatch={watch} />}
          {asking === null && !view && <p class="loading">{t("loading")}</p>}
          {asking === "checking" && <p class="loading">{t("loading")}</p>}
          {asking === null && view && !view.game && <WaitingRoom view={view} live={live} />}
          {asking === null && view && view.game && <Game view={view} game={view.game} live={live} />}
        </main>
        {asking === null && <Chat live={live} open={chatOpen} onClose={() => setChatOpen(false)} />}
      </div>
      {live.error && (
        <div class="toast" role="alert" onClick={() => ((live.error = null), rerender(0))}>
          {live.error}
        </div>
      )}
      {menu && view && (
        <Menu
          view={view}
          live={live}
          sound={sound}
          onSound={() => {
            setSound(!sound);
            setSoundState(!sound);
          }}
          switchLang={switchLang}
          onClose={() => setMenu(false)}
        />
      )}
    </div>
  );
}

function WaitingRoom({ view, live }: { view: TableOut; live: TableLive }) {
  const [copied, setCopied] = useState(false);
  const link = view.invite_code ? `${location.origin}/t/${view.table_id}?invite=${view.invite_code}` : null;
  const seat1Empty = !view.seats[1]?.player && !view.seats[1]?.bot_level;
  const copy = async () => {
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      const input = document.getElementById("invite-link") as HTMLInputElement | null;
      input?.select();
      document.execCommand("copy");
    }
    setCopied(true);
  };
  return (
    <section class="panel waiting">
      <ul class="seats">
        {[0, 1].map((s) => (
          <li key={s}>
            <b>{nameOf(view, s)}</b>
            {view.seats[s]?.bot_level && <span class="badge">{t("bot")}</span>}
            {view.you === s && <span class="badge">{t("you")}</span>}
          </li>
        ))}
      </ul>
      {view.you === 0 && link && seat1Empty && (
        <div class="invite">
          <label for="invite-link">{t("inviteLink")}</label>
          <div class="row">
            <input id="invite-link" readOnly value={link} onFocus={(e) => e.currentTarget.select()} />
            <button type="button" class="primary" onClick={() => void copy()}>
              {copied ? t("copied") : t("copy")}
            </button>
          </div>
          <p>{t("waitingOpponent")}</p>
          <p>{t("fillBot")}:</p>
          <div class="bots">
            {BOT_LEVELS.map((level) => (
              <button
                type="button"
                key={level}
                class="bot"
                onClick={() => void live.command(() => api.seatBot(view.table_id, level))}
              >
                <b>{BOT_NAMES[level]}</b> <small>{t(level)}</small>
              </button>
            ))}
          </div>
        </div>
      )}
      {view.you === 0 && view.status === "ready" && (
        <button type="button" class="primary big" onClick={() => void live.command(() => api.start(view.table_id))}>
          {t("start")}
        </button>
      )}
      {view.you === 1 && <p>{t("waitingStart", { name: nameOf(view, 0) })}</p>}
      {view.you === null && <p>{t("spectating")}</p>}
    </section>
  );
}
