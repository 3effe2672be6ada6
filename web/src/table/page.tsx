// The table page: the name gate, the invite question, the top bar (chat, menu), the board or
// the waiting room, chat, the menu, and the error toast.
import { useEffect, useMemo, useReducer, useState } from "preact/hooks";
import { api, ensurePlayer, me, rememberTable } from "../api";
import { t } from "../i18n";
import { checkInvite, type InviteCheck, InviteMismatch, InvitePrompt } from "../invite";
import { TableLive } from "../live";
import { listen, yourTurn } from "../notify";
import { beep, deckPref, setDeckPref, setSound, soundOn } from "../prefs";
import { navigate } from "../router";
import { DeckPicker, NameField } from "../start";
import type { DeckDesign } from "../types";
import { Game } from "./board";
import { Chat } from "./chat";
import { startGamepad } from "./gamepad";
import { useKeys } from "./keys";
import { useUnread } from "./unread";
import { Menu } from "./menu";
import { WaitingRoom } from "./waiting";

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

  useEffect(() => startGamepad(), []);

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

  const unread = useUnread(id, live.log, chatOpen);
  const view = live.view;
  if (live.error === "table_not_found") {
    return (
      <div class="page">
        <p class="panel">{t("notFound")}</p>
      </div>
    );
  }
  const deck = (view && view.you !== null && view.seats[view.you]?.deck_design) || deckPref();
  const chatCount = unread;
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
              {chatCount > 0 && (
                <span class="count" aria-label={t("unread", { n: chatCount })}>
                  {chatCount}
                </span>
              )}
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
