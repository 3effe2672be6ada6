import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { adoptToken } from "./api";
import { lang, setLang } from "./i18n";
import { listen } from "./notify";
import { registerWorker } from "./push";
import { LobbyPage } from "./lobby/page";
import { StartPage } from "./start";
import { TablePage } from "./table/page";
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
  const match = /^\/t\/([0-9a-f]+)/.exec(location.pathname);
  if (match) {
    const invite = new URLSearchParams(location.search).get("invite");
    return <TablePage key={match[1] + lang} id={match[1]} invite={invite} switchLang={switchLang} />;
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
