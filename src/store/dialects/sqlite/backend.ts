import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { Backend } from "../../ports/backend.ts";
import { sqlitePathOf, sqliteResultOf } from "./connection.ts";

/** A file's path with links resolved, also for a file not made yet (its directory's links resolved). */
function canonicalPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const dir = dirname(resolve(path));
    return join(existsSync(dir) ? canonicalPath(dir) : dir, basename(path));
  }
}

/**
 * SQLite's primary result codes (the low byte of an extended code) that say the database cannot
 * serve for now rather than that the request was wrong: busy or locked by another connection, a disk
 * I/O error, the disk full, the file not openable.
 */
const UNAVAILABLE_RESULTS = new Set([
  5, // SQLITE_BUSY
  6, // SQLITE_LOCKED
  10, // SQLITE_IOERR
  13, // SQLITE_FULL
  14, // SQLITE_CANTOPEN
]);

/** The embedded database: one file (`sqlite:./data/updown.db`), or `sqlite::memory:`. */
export const SQLITE_BACKEND: Backend = {
  name: "sqlite",
  schemes: ["sqlite:"],
  readsHoldThread: true,
  open: async (url) => {
    const { SqliteStore } = await import("./sqlite-store.ts");
    return new SqliteStore(sqlitePathOf(url));
  },
  locate(url) {
    const path = sqlitePathOf(url);
    if (path === "" || path === ":memory:") {
      throw new Error(`${url}: an in-memory database ends with the command; name a file`);
    }
    return { identity: canonicalPath(path), exists: existsSync(path) };
  },
  isUnavailable: (err) => UNAVAILABLE_RESULTS.has(sqliteResultOf(err) ?? -1),
};
