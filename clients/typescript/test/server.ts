// A real server for the tests: `python -m app` of the repository (GINRUMMY_PYTHON, else
// ../../.venv/bin/python) on a SQLite file, restartable on the same port.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// Run from the package (npm test): the repository is two folders up.
const ROOT = process.env.GINRUMMY_ROOT ?? resolve(process.cwd(), "..", "..");
const PYTHON = process.env.GINRUMMY_PYTHON ?? join(ROOT, ".venv", "bin", "python");

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once("error", fail);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => done(port));
    });
  });
}

export class Server {
  private process: ChildProcess | null = null;
  private constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(settings: Record<string, string> = {}): Promise<Server> {
    const port = await freePort();
    const db = join(mkdtempSync(join(tmpdir(), "ginrummy-ts-")), "ts.db");
    const server = new Server(port, {
      DATABASE_URL: `sqlite+aiosqlite:///${db}`,
      PORT: String(port),
      HOST: "127.0.0.1",
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      BOT_DRAW_DELAY: "0",
      BOT_DISCARD_DELAY: "0",
      RATE_LIMIT_PLAYERS_IP: "",
      WS_HEARTBEAT: "1",
      ...settings,
    });
    await server.run();
    return server;
  }

  async run(): Promise<void> {
    this.process = spawn(PYTHON, ["-m", "app"], {
      cwd: ROOT,
      env: { ...process.env, ...this.env },
      stdio: ["ignore", "ignore", "inherit"],
    });
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (this.process.exitCode !== null) throw new Error("the server exited");
      if (Date.now() > deadline) throw new Error("the server did not start");
      try {
        if ((await fetch(`${this.url}/livez`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((done) => setTimeout(done, 100));
    }
  }

  /** SIGTERM, and wait for the process to end. */
  async stop(): Promise<void> {
    const child = this.process;
    if (child === null || child.exitCode !== null) return;
    const ended = new Promise((done) => child.once("exit", done));
    child.kill("SIGTERM");
    await ended;
    this.process = null;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.run();
  }
}
