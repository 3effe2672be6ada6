// The REST API, typed from the server's OpenAPI document (src/generated/api.ts, written by
// openapi-typescript) and called through openapi-fetch: every path, parameter and body is
// checked by the compiler. A 429 or 503 is retried after its Retry-After.
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

export type Schemas = components["schemas"];
export type RestClient = Client<paths>;

/** A refusal: the HTTP status (0 on a socket), the server's stable `code` and its message
 * (`reason`, as the server wrote it). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly reason: string,
    readonly retryAfter: number | null = null,
  ) {
    super(`${status} ${code}: ${reason}`);
    this.name = "ApiError";
  }
}

export interface RestOptions {
  /** The server, e.g. "http://127.0.0.1:8000" ("" in a page served by it). */
  baseUrl: string;
  /** The player's token: sent as a Bearer header (read at each call, so it may change). */
  token?: () => string | null;
  /** Retries of a 429 or 503 (5). */
  retries?: number;
  fetch?: (input: Request) => Promise<Response>;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Seconds a 429 or 503 asks to wait, when it says. */
export function retryAfter(response: Response): number | null {
  const value = response.headers.get("retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}

/** A fetch that waits out 429 and 503: after Retry-After, else a doubling backoff with jitter. */
export function retrying(
  retries: number,
  inner: (input: Request) => Promise<Response> = (r) => globalThis.fetch(r),
): (input: Request) => Promise<Response> {
  return async (request: Request) => {
    for (let attempt = 0; ; attempt++) {
      const response = await inner(attempt < retries ? request.clone() : request);
      if ((response.status !== 429 && response.status !== 503) || attempt >= retries) {
        return response;
      }
      const wait = retryAfter(response) ?? 0.5 * 2 ** attempt;
      await sleep((wait + Math.random() * 0.5) * 1000);
    }
  };
}

/** The typed REST client: `rest.GET("/v1/tables/{table_id}", {params: {path: {table_id}}})`. */
export function createRest(options: RestOptions): RestClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    fetch: retrying(options.retries ?? 5, options.fetch),
  });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = options.token?.();
      if (token) request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
  };
  client.use(auth);
  return client;
}

/** The data of an openapi-fetch result, or its refusal as an ApiError. */
export function ok<T>(result: { data?: T; error?: unknown; response: Response }): T {
  const { data, error, response } = result;
  if (error !== undefined || data === undefined) {
    const body = (error ?? {}) as { code?: unknown; message?: unknown };
    const code = typeof body.code === "string" ? body.code : "http_error";
    const message = typeof body.message === "string" ? body.message : response.statusText;
    throw new ApiError(response.status, code, message, retryAfter(response));
  }
  return data;
}
