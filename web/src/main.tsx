import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { adoptToken } from "./api";
import { lang, setLang } from "./i18n";
import { listen } from "./notify";
import { ProfilePage } from "./profile/page";
import { registerWorker } from "./push";
import { ReplayPage } from "./replay/page";
import { LobbyPage } from "./lobby/page";
import { StartPage } from "./start";
import { TablePage } from "./table/page";
import { TournamentList } from "./tournaments/list";
import { TournamentPage } from "./tournaments/page";
import { LadderPage } from "./ladder/page";
import "./style.css";

function App() {
  const [path, setPath] = useState(location.pathname + location.search);
  const [, setLangState] = useState(lang);
  useEffect(() => {
    const onPop = () => setPath(location.pathname + location.search);
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  const switchLang = () => {
    const next = lang === "pt" ? "en" : "pt";
    setLang(next);
    setLangState(next);
  };
  const replay = /^\/t\/([0-9a-f]+)\/replay\/(\d+)\/(\d+)$/.exec(location.pathname);
  if (replay) {
    const [, id, match, hand] = replay;
    return <ReplayPage key={path + lang} id={id} match={Number(match)} hand={Number(hand)} switchLang={switchLang} />;
  }
  const profile = /^\/p\/([0-9a-zA-Z_-]+)$/.exec(location.pathname);
  if (profile) return <ProfilePage key={path + lang} id={profile[1]} switchLang={switchLang} />;
  const match = /^\/t\/([0-9a-f]+)/.exec(location.pathname);
  if (match) {
    const invite = new URLSearchParams(location.search).get("invite");
    return <TablePage key={match[1] + lang} id={match[1]} invite={invite} switchLang={switchLang} />;
  }
  if (/^\/ladder\/?$/.test(location.pathname)) return <LadderPage key={lang} switchLang={switchLang} />;
  const tour = /^\/tournaments(?:\/([0-9a-f]+))?\/?$/.exec(location.pathname);
  if (tour) {
    return tour[1] ? <TournamentPage key={tour[1] + lang} id={tour[1]} switchLang={switchLang} /> : <TournamentList key={lang} switchLang={switchLang} />;
  }
  const challenge = new URLSearchParams(location.search).get("challenge");
  if (location.pathname === "/lobby" || challenge) {
    return <LobbyPage key={lang} switchLang={switchLang} challenge={challenge} />;
  }
  return <StartPage key={path + lang} switchLang={switchLang} />;
}

async function boot(): Promise<void> {
  // A link that carries the token (`#token=...`) plays as that player on this device too.
  const carried = new URLSearchParams(location.hash.slice(1)).get("token");
  if (carried) {
    await adoptToken(carried);
    history.replaceState(null, "", location.pathname + location.search);
  }
  listen();
  void registerWorker();
  render(<App />, document.getElementById("app")!);
}

void boot();
