// The Gin Rummy server's TypeScript client: typed REST (openapi-fetch over the OpenAPI
// document's types) and both sockets with resume and backoff (docs/sdk.md).
export { ApiError, createRest, ok, retryAfter, retrying } from "./rest.js";
export type { RestClient, RestOptions, Schemas } from "./rest.js";
export { backoff, PlayerSocket, REFUSED, SocketLost, SocketRefused, TableSocket, TOO_MANY } from "./socket.js";
export type { SocketOptions, State } from "./socket.js";
export type * from "./messages.js";
export { GinRummy } from "./client.js";
