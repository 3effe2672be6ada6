// The SDK against a real server: a full match against a server bot with moves over the
// socket, through a server restart in its middle; and typed refusals.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  ApiError,
  GinRummy,
  ok,
  SocketRefused,
  type Action,
  type TableMessage,
  type TableSocket,
} from "../src/index.js";
import { Server } from "./server.js";

let server: Server;
before(async () => {
  server = await Server.start();
});
after(async () => {
  await server.stop();
});

type View = Awaited<ReturnType<GinRummy["table"]>>;
// The engine's view is a free-form object in the OpenAPI document: the fields read here.
interface Game {
  match: { status: string };
  legal: { actions: string[]; discards: string[]; knock_discards: { card: string }[] };
}
const NEW_TABLE = { preset: "standard", deck_design: "classic", rated: false } as const;

/** Knock when it can, else take the stock and shed the last legal discard. */
function choose(view: View): Action | null {
  const legal = (view.game as Game | null)?.legal;
  if (!legal) return null;
  const actions = legal.actions;
  if (actions.includes("next_hand")) return { kind: "next_hand" };
  if (legal.knock_discards.length) return { kind: "knock", card: legal.knock_discards[0].card };
  if (actions.includes("pass")) return { kind: "pass" };
  if (actions.includes("draw_stock")) return { kind: "draw_stock" };
  if (actions.includes("discard")) return { kind: "discard", card: legal.discards.at(-1) };
  return null;
}

/** Play the seat until the match is over; `moved` after each of its moves. */
async function play(client: GinRummy, socket: TableSocket, moved: (n: number) => Promise<void>) {
  let moves = 0;
  const step = async (): Promise<boolean> => {
    for (;;) {
      const view = await client.table(socket.tableId);
      if ((view.game as Game | null)?.match.status === "finished") return true;
      const action = choose(view);
      if (action === null) return false;
      await socket.move(action, view.version);
      await moved(++moves);
    }
  };
  for await (const message of socket.messages()) {
    if (!["view", "your_turn", "event", "heartbeat"].includes(message.type)) continue;
    try {
      if (await step()) return moves;
    } catch (error) {
      // The table moved on, or the server is away: the next message brings the next step.
      if (!(error instanceof ApiError) && !(error instanceof Error)) throw error;
    }
  }
  throw new Error("the socket ended");
}

test("a full match over the socket survives a server restart, every event once", async () => {
  const client = new GinRummy(server.url);
  await client.signUp("Tess");
  const table = ok(await client.rest.POST("/v1/tables", { body: { ...NEW_TABLE, rules: { target: 60 } } }));
  const params = { params: { path: { table_id: table.table_id } } };
  ok(await client.rest.POST("/v1/tables/{table_id}/bot", { ...params, body: { level: "easy" } }));
  ok(await client.rest.POST("/v1/tables/{table_id}/start", { ...params, body: {} }));
  const socket = client.tableSocket(table.table_id);
  const seen: TableMessage[] = [];
  socket.onMessage((m) => seen.push(m));
  let restarted = false;
  const moves = await play(client, socket, async (n) => {
    if (n === 4 && !restarted) {
      restarted = true;
      await server.restart();
    }
  });
  socket.close();
  assert.ok(restarted && moves > 4);
  assert.ok(socket.connects >= 2, `connects: ${socket.connects}`);
  const sequenced = seen.filter((m) => m.type === "view" || m.type === "event" || m.type === "skip");
  assert.equal(sequenced[0].type, "view");
  assert.equal(sequenced.filter((m) => m.type === "view").length, 1, "resumed with since");
  const seqs = sequenced.map((m) => m.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => seqs[0] + i), "no event lost or repeated");
  const log = ok(
    await client.rest.GET("/v1/tables/{table_id}/events", {
      params: { path: { table_id: table.table_id }, query: { since: seqs[0], limit: seqs.length - 1 } },
    }),
  );
  const read = sequenced.slice(1).map((m) => (m.type === "event" ? String(m.event.type) : "skip"));
  assert.deepEqual(read, log.map((e) => String(e.type)));
});

test("refusals are typed", async () => {
  const client = new GinRummy(server.url);
  await assert.rejects(client.table("no-such-table"), (e: unknown) => {
    return e instanceof ApiError && e.status === 404 && e.code === "table_not_found";
  });
  await client.signUp("Ugo");
  const socket = client.tableSocket("no-such-table");
  await assert.rejects(
    (async () => {
      for await (const _ of socket.messages()) void _;
    })(),
    (e: unknown) => e instanceof SocketRefused && e.closeCode === 4404 && e.code === "table_not_found",
  );
  const table = ok(await client.rest.POST("/v1/tables", { body: NEW_TABLE }));
  const own = client.tableSocket(table.table_id);
  const pong = await own.ping();
  assert.equal(pong.type, "pong");
  await assert.rejects(own.move({ kind: "pass" }), (e: unknown) => e instanceof ApiError && e.status === 0);
  own.close();
});
