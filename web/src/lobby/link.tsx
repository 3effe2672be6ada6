// The start page's way into the lobby.
import { navigate } from "../router";
import { lt } from "./strings";

export function LobbyLink() {
  return (
    <p class="lobby-link">
      <a
        class="button primary"
        href="/lobby"
        onClick={(e) => {
          e.preventDefault();
          navigate("/lobby");
        }}
      >
        {lt("lobbyLink")}
      </a>{" "}
      <span>{lt("lobbyHint")}</span>
    </p>
  );
}
