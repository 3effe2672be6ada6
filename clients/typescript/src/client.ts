// One player's client: the token, the typed REST client, and the sockets made from them.
import { createRest, ok, type RestClient, type Schemas } from "./rest.js";
import type { Action } from "./messages.js";
import { PlayerSocket, TableSocket, type SocketOptions } from "./socket.js";

type SocketExtras = Omit<SocketOptions, "baseUrl" | "rest">;

// An action's HTTP endpoint under /v1/tables/{id}/ and its body.
const PLAIN = {
  take_upcard: "/v1/tables/{table_id}/moves/take-upcard",
  pass: "/v1/tables/{table_id}/moves/pass",
  big_gin: "/v1/tables/{table_id}/moves/big-gin",
  next_hand: "/v1/tables/{table_id}/next-hand",
  resign: "/v1/tables/{table_id}/resign",
} as const;

export class GinRummy {
  readonly rest: RestClient;
  token: string | null;

  constructor(
    readonly baseUrl: string,
    token: string | null = null,
    private readonly socketOptions: SocketExtras = {},
  ) {
    this.token = token;
    this.rest = createRest({ baseUrl, token: () => this.token });
  }

  /** A new player (with `bot`, a bot account: marked for good, the lobby shows it); its token
   * is this client's from now on. */
  async signUp(name: string, bot = false): Promise<Schemas["PlayerCreated"]> {
    const player = ok(await this.rest.POST("/v1/players", { body: { name, bot } }));
    this.token = player.token;
    return player;
  }

  /** Your view of a table (a spectator's without a token). */
  async table(tableId: string): Promise<Schemas["TableOut"]> {
    return ok(await this.rest.GET("/v1/tables/{table_id}", { params: { path: { table_id: tableId } } }));
  }

  /** Play an action over HTTP, with `expected_version` when given. */
  async move(tableId: string, action: Action, expectedVersion?: number): Promise<Schemas["CommandOut"]> {
    const params = { path: { table_id: tableId } };
    const pin = expectedVersion === undefined ? {} : { expected_version: expectedVersion };
    switch (action.kind) {
      case "draw_stock":
      case "draw_discard":
        return ok(
          await this.rest.POST("/v1/tables/{table_id}/moves/draw", {
            params,
            body: { source: action.kind === "draw_stock" ? "stock" : "discard", ...pin },
          }),
        );
      case "discard":
      case "knock":
        return ok(
          await this.rest.POST(`/v1/tables/{table_id}/moves/${action.kind}`, {
            params,
            body: { card: action.card ?? "", ...pin },
          }),
        );
      default: {
        const kind: keyof typeof PLAIN = action.kind;
        return ok(await this.rest.POST(PLAIN[kind], { params, body: pin }));
      }
    }
  }

  /** A table's socket, started: a seat's when this client has a token. */
  tableSocket(tableId: string, since: number | null = null): TableSocket {
    const options = { baseUrl: this.baseUrl, rest: this.rest, authenticate: this.token !== null };
    return new TableSocket({ ...options, ...this.socketOptions }, tableId, since).start();
  }

  /** The player's notifications socket, started. */
  playerSocket(): PlayerSocket {
    return new PlayerSocket({ baseUrl: this.baseUrl, rest: this.rest, ...this.socketOptions }).start();
  }
}
