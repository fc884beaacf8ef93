import type { Store } from "./store.ts";

/**
 * What one kind of database gives the rest of the service: src/store/backends.ts lists one per
 * kind, and opening (`openStore`), `updown copy` and the error handler's 503 ask it, never the URL's
 * spelling or the driver's error codes themselves. A new kind is a folder under `dialects/` with one
 * of these in its `backend.ts`, a line in `backends.ts`, and its wiring of the contract suites.
 */
export interface Backend {
  /** The kind's name: `Store.kind`, and what `/readyz` says. */
  readonly name: string;
  /** The URL prefixes it opens (`sqlite:`, `postgres://`...), as messages name them. */
  readonly schemes: readonly string[];
  /**
   * Whether a read holds the thread that makes it until it is done (node:sqlite's calls are
   * synchronous): the server then reads pages of resolved markets on threads of their own, each with
   * its own connection (src/http/page-readers.ts). A driver that waits on a socket leaves the thread free.
   */
  readonly readsHoldThread: boolean;
  /**
   * A store over the database `url` names, not yet migrated (nothing is read until a call). The
   * dialect's code and driver are loaded here, so a process loads only the kind it opens.
   */
  open(url: string, options: StoreOptions): Promise<Store>;
  /**
   * What `url` points at, for telling two URLs apart and for messages; throws an Error whose message
   * completes "--flag " (`is not a valid PostgreSQL URL`) when the URL cannot name a lasting store.
   */
  locate(url: string): StoreLocation;
  /**
   * Whether a driver error means the database cannot serve for now (unreachable, restarting, out of
   * time, out of disk): the service answers 503 with Retry-After and `/readyz` says not ready, where
   * any other error is a bug or bad data (500).
   */
  isUnavailable(err: unknown): boolean;
}

/** Where a store URL points, as far as `updown copy` needs. */
export interface StoreLocation {
  /** Equal for two URLs of the same database (a file's real path; server, port, database, user). */
  readonly identity: string;
  /** False when the URL names a file not made yet (opening it would make an empty database). */
  readonly exists: boolean;
}

/** Settings a backend may use when it opens; each ignores those that mean nothing to it. */
export interface StoreOptions {
  /** Longest a statement may run before the database cancels it (ms); 0: no limit. */
  readonly statementTimeoutMs?: number;
  /** Longest a request waits for a connection from the pool, or for one to be made (ms); 0: no limit. */
  readonly acquireTimeoutMs?: number;
}
