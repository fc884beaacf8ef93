/**
 * @updown/client: a typed client of the Up or Down history API, for Node 20+ and browsers.
 * The wire types come from the committed OpenAPI document (./openapi.ts, generated).
 */
export { UpdownClient } from "./client.ts";
export type {
  CallOptions,
  ClientOptions,
  QueryValue,
  ReplayOptions,
  RequestOptions,
  RetryInfo,
  WaitOptions,
} from "./client.ts";
export { UpdownError } from "./errors.ts";
export type { ClientErrorCode, UpdownErrorCode, UpdownErrorInit } from "./errors.ts";
export type { Sleep } from "./timing.ts";
export type { ReplayMessage } from "./replay.ts";
export type * from "./types.ts";
export type { components, operations, paths } from "./openapi.ts";
export * as format from "./format.ts";
